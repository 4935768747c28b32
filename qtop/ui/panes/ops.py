"""Ops: the profiler's per-op breakdown of one execute or of all measured executes."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.widgets import DataTable, Static

from qtop.events import ProfileReport
from qtop.profiling.aggregate import Breakdown, GraphBreakdown, breakdown
from qtop.profiling.model import OpRow, ParsedProfile, ProfileDecodeError
from qtop.stats.model import SessionModel
from qtop.textsafe import clean
from qtop.ui.format import MISSING, ellipsize, percent
from qtop.ui.panes.base import Pane
from qtop.ui.view import View
from qtop.ui.widgets.ratio_bar import Ratio, RatioBar

SORTS = ("cycles", "wait", "name")
COLUMNS = ("op", "cycles", "share", "wait", "wait %", "resources / flags")
NO_PROFILE = "no profiler output in this session"


@dataclass(frozen=True, slots=True)
class OpLine:
    """One table row: an op with its cycles, share of the op cycles, wait and wait share."""

    name: str
    cycles: float | None
    share: float | None
    wait: float | None
    wait_share: float | None
    tags: str


@dataclass(frozen=True, slots=True)
class OpsState:
    """What the user chose to see."""

    aggregate: bool = True
    execute: int = 0
    graph: int = 0
    sort: str = "cycles"


def pick_report(model: SessionModel, variant: str) -> ProfileReport | None:
    """The latest report of the variant on show, else the latest of any."""
    reports = list(model.profile_reports.values())
    own = [r for r in reports if r.variant == variant]
    chosen = own or reports
    return chosen[-1] if chosen else None


def _share(part: float | None, whole: float) -> float | None:
    return part / whole if part is not None and whole > 0 else None


def execute_lines(ops: tuple[OpRow, ...]) -> list[OpLine]:
    cycles_total = sum(op.cycles or 0 for op in ops)
    wait_total = sum(op.wait_cycles or 0 for op in ops)
    return [
        OpLine(
            name=clean(op.name if op.op_id is None else f"{op.name} #{op.op_id}"),
            cycles=op.cycles,
            share=_share(op.cycles, cycles_total),
            wait=op.wait_cycles,
            wait_share=_share(op.wait_cycles, wait_total),
            tags=clean(" ".join((*op.resources, *op.flags))),
        )
        for op in ops
    ]


def aggregate_lines(graph: GraphBreakdown) -> list[OpLine]:
    wait_total = sum(op.wait_median or 0 for op in graph.ops)
    grows = set(graph.growing)
    return [
        OpLine(
            name=clean(op.name if op.op_id is None else f"{op.name} #{op.op_id}"),
            cycles=op.cycles_median,
            share=op.share_median,
            wait=op.wait_median,
            wait_share=_share(op.wait_median, wait_total),
            tags=clean(
                " ".join((*op.resources, *op.flags, *(["grows"] if op.key in grows else [])))
            ),
        )
        for op in graph.ops
    ]


def sorted_lines(lines: list[OpLine], by: str) -> list[OpLine]:
    if by == "name":
        return sorted(lines, key=lambda line: line.name)
    field = "wait" if by == "wait" else "cycles"
    return sorted(lines, key=lambda line: -(getattr(line, field) or -1))


def cycles_text(value: float | None) -> str:
    return MISSING if value is None else f"{value:,.0f}"


class OpsPane(Pane):
    """Per-op cycles and scheduler wait, and the graph's compute against wait."""

    TITLE = "ops"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "toggle_aggregate", "Aggregate",
                tooltip="one execute, or the aggregate of the measured executes"),
        Binding("less_than_sign", "execute(-1)", "Prev execute", key_display="<",
                tooltip="the previous execute"),
        Binding("greater_than_sign", "execute(1)", "Next execute", key_display=">",
                tooltip="the next execute"),
        Binding("o", "sort", "Sort", tooltip="sort by cycles, wait, or name"),
        Binding("g", "next_graph", "Next graph", tooltip="show the next graph"),
    ]  # fmt: skip
    DEFAULT_CSS = """
    OpsPane #ops-heading { height: 1; }
    OpsPane #ops-ratio { height: 1; }
    OpsPane #ops-table { height: 1fr; }
    OpsPane #ops-empty {
        color: $text-muted;
        text-style: italic;
        height: 1fr;
        content-align: center middle;
    }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.state = OpsState()
        self.lines: list[OpLine] = []
        self._report: ProfileReport | None = None
        self._profile: ParsedProfile | None = None
        self._breakdown: Breakdown | None = None
        self._error = ""
        self._drawn: object = None

    def compose(self) -> ComposeResult:
        yield Static(id="ops-heading")
        yield RatioBar(id="ops-ratio")
        yield DataTable(id="ops-table", cursor_type="row", zebra_stripes=True)
        yield Static(Content(NO_PROFILE), id="ops-empty", classes="-wrap")

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        for name in COLUMNS:
            table.add_column(name, key=name)

    # --- what the user asks for -------------------------------------------------

    def _choose(self, state: OpsState, said: str = "") -> None:
        self.state = state
        if self.view is not None:
            self.draw(self.view)
        if said:
            self.notify(said, timeout=2, markup=False)

    def action_toggle_aggregate(self) -> None:
        aggregate = not self.state.aggregate
        said = "aggregate of the measured executes" if aggregate else "one execute"
        self._choose(replace(self.state, aggregate=aggregate), f"ops: {said}")

    def action_execute(self, delta: int) -> None:
        count = len(self._graph_executes())
        if count:
            execute = (self.state.execute + delta) % count
            self._choose(replace(self.state, aggregate=False, execute=execute))

    def action_sort(self) -> None:
        sort = SORTS[(SORTS.index(self.state.sort) + 1) % len(SORTS)]
        self._choose(replace(self.state, sort=sort), f"ops sorted by {sort}")

    def action_next_graph(self) -> None:
        graphs = self._breakdown.graphs if self._breakdown else ()
        if graphs:
            self._choose(replace(self.state, execute=0, graph=(self.state.graph + 1) % len(graphs)))

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        by = {"op": "name", "cycles": "cycles", "wait": "wait"}.get(str(event.column_key.value))
        if by is not None:
            self._choose(replace(self.state, sort=by))

    # --- drawing -------------------------------------------------------------

    def _graph_executes(self) -> tuple:
        if self._profile is None or not self._profile.graphs:
            return ()
        graph = self._profile.graphs[min(self.state.graph, len(self._profile.graphs) - 1)]
        return graph.executes

    def _load(self, report: ProfileReport | None) -> None:
        if report is self._report:
            return
        self._report, self._profile, self._breakdown, self._error = report, None, None, ""
        if report is None:
            return
        try:
            self._profile = ParsedProfile.from_dict(report.report)
            self._breakdown = breakdown(self._profile)
        except ProfileDecodeError as exc:
            self._error = clean(f"the profile report could not be read: {exc}")

    def draw(self, view: View) -> None:
        self._load(pick_report(view.model, view.variant))
        if self._drawn == (self._report, self.state):
            return
        self._drawn = (self._report, self.state)
        table = self.query_one(DataTable)
        has_graphs = self._breakdown is not None and bool(self._breakdown.graphs)
        for widget in (table, self.query_one("#ops-ratio"), self.query_one("#ops-heading")):
            widget.display = has_graphs
        self.query_one("#ops-empty").display = not has_graphs
        if not has_graphs:
            self.put("#ops-empty", Content(self._error or NO_PROFILE))
            self.subtitle("")
            return
        assert self._breakdown is not None and self._report is not None
        graphs = self._breakdown.graphs
        graph = graphs[min(self.state.graph, len(graphs) - 1)]
        executes = self._graph_executes()
        ratio_bar = self.query_one("#ops-ratio", RatioBar)
        if self.state.aggregate or not executes:
            lines = aggregate_lines(graph)
            measured = f"{graph.measured} measured execute{'' if graph.measured == 1 else 's'}"
            what = f"aggregate of {measured}, {graph.warmup} warm-up left out"
            ratio_bar.ratio = Ratio(graph.wait_share_median, detail=f"median accelerator execute "
                                    f"{_us(graph.accelerator_us_median)}, excluding wait "
                                    f"{_us(graph.excluding_wait_us_median)}")  # fmt: skip
        else:
            index = min(self.state.execute, len(executes) - 1)
            execute = executes[index]
            row = graph.executes[index] if index < len(graph.executes) else None
            lines = execute_lines(execute.ops)
            warm = " (warm-up)" if row is not None and row.warmup else ""
            what = f"execute {index + 1}/{len(executes)}{warm}"
            ratio_bar.ratio = Ratio(
                row.wait_share if row else None,
                detail=f"accelerator execute {_us(row.accelerator_us if row else None)}, "
                f"excluding wait {_us(row.excluding_wait_us if row else None)}",
            )
        self.lines = sorted_lines(lines, self.state.sort)
        graph_name = clean(graph.name) or "(unnamed graph)"
        heading = Content.assemble(
            (ellipsize(graph_name, 40), "bold"),
            (
                f" · graph {self.state.graph + 1}/{len(graphs)} · " if len(graphs) > 1 else " · ",
                "$text-muted",
            ),
            what,
            (f" · sorted by {self.state.sort}", "$text-muted"),
        )
        self.put("#ops-heading", heading)
        ops = "1 op" if len(self.lines) == 1 else f"{len(self.lines)} ops"
        self.subtitle(f"{clean(self._report.source_kind)} · {ops}")
        table.clear()
        for line in self.lines:
            table.add_row(
                Text(line.name),
                Text(cycles_text(line.cycles), justify="right"),
                Text(percent(line.share), justify="right"),
                Text(cycles_text(line.wait), justify="right"),
                Text(percent(line.wait_share), justify="right"),
                Text(line.tags),
            )


def _us(value: float | None) -> str:
    return MISSING if value is None else f"{value:,.0f} us"

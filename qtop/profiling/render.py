"""The readable text of a parsed profile and its breakdown (``qtop ops``).

Pure functions from the model to lines of text: the stats sections, each
graph's wait split and op table, Genie queries, AI Hub's estimate against its
own runs, and every warning the parser raised. Values show in the unit the
file used; a value in doubt carries a ``?`` and a note. Every string that came
from the file (names, units, responses, the lines quoted in notes) goes
through ``plain``: a profile cannot send escape sequences to the terminal.
"""

from __future__ import annotations

from collections.abc import Sequence

from qtop.profiling.aggregate import (
    Breakdown,
    ExecuteBreakdown,
    GraphBreakdown,
    OpBreakdown,
    sort_ops,
)
from qtop.profiling.model import GenieQuery, Metric, Number, ParsedProfile
from qtop.table import MISSING, text_table
from qtop.textsafe import plain

EXECUTE_ROWS_SHOWN = 12
MAX_METRIC_COLUMNS = 8
RESPONSE_PREVIEW = 60


def number(value: Number | None, digits: int = 0) -> str:
    """Integers as they are, floats to ``digits`` places; missing as a dash, never zero."""
    if value is None:
        return MISSING
    if isinstance(value, int) or float(value).is_integer():
        return str(int(value))
    return f"{value:.{digits}f}" if digits else str(round(value))


def percent(share: float | None) -> str:
    return MISSING if share is None else f"{share * 100:.1f}%"


def points(delta: float | None) -> str:
    return MISSING if delta is None else f"{delta * 100:+.1f}"


def metric_text(metric: Metric) -> str:
    """The value as the file gave it, its unit, and '?' (in doubt) or '*' (computed by qtop)."""
    mark = "?" if metric.caveat else ("*" if metric.note else "")
    unit = f" {plain(metric.unit)}" if metric.unit else ""
    value = metric.value if isinstance(metric.value, int) else f"{metric.value:.10g}"
    return f"{value}{unit}{mark}"


def render(
    profile: ParsedProfile, result: Breakdown, top: int = 20, sort: str | None = None
) -> str:
    """The whole ``qtop ops`` text for one file."""
    lines = [_title(profile)]
    if profile.sections:
        lines += ["", *_sections(profile)]
    for graph in result.graphs:
        lines += ["", *_graph(profile, graph, top, sort)]
    if profile.queries:
        lines += ["", *_queries(profile.queries)]
    if result.ai_hub is not None:
        hub = result.ai_hub
        lines += [
            "",
            f"AI Hub estimate {number(hub.estimated_us, 1)} us; its {hub.runs} runs: "
            f"min {number(hub.min_us, 1)} us, median {number(hub.median_us, 1)} us, "
            f"P95 {number(hub.p95_us, 1)} us (first {hub.warmup} left out as warm-up)",
        ]
    lines += _notes(profile, result)
    return "\n".join(lines)


def _title(profile: ParsedProfile) -> str:
    versions = [f"{key} {value}" for key, value in profile.info.items() if value.startswith("v")]
    version = f" ({', '.join(versions)})" if versions else ""
    executes = profile.execute_count
    counted = f", {executes} execute(s)" if executes else ""
    return plain(f"{profile.source or '<input>'}: {profile.kind}{version}{counted}")


def _sections(profile: ParsedProfile) -> list[str]:
    with_graph = any(section.graph for section in profile.sections)
    headers = ["section", *(["graph"] if with_graph else []), "metric", "value"]
    rows = []
    for section in profile.sections:
        for metric in section.metrics:
            graph = [plain(section.graph)] if with_graph else []
            rows.append([plain(section.name), *graph, plain(metric.name), metric_text(metric)])
    return ["stats", text_table(headers, rows, indent="  ")]


def _graph(profile: ParsedProfile, graph: GraphBreakdown, top: int, sort: str | None) -> list[str]:
    label = plain(graph.name) or "(unnamed graph)"
    if graph.source == "average":
        head = f"graph {label}: average of all executes (basic report)"
    else:
        warmup = f", first {graph.warmup} marked warm-up and left out" if graph.warmup else ""
        head = f"graph {label}: {len(graph.executes)} execute(s){warmup}"
    lines = [head]
    if graph.wait_share_median is not None:
        lines.append(
            f"  accelerator {number(graph.accelerator_us_median, 1)} us, excluding wait "
            f"{number(graph.excluding_wait_us_median, 1)} us: waiting "
            f"{number(graph.wait_us_median, 1)} us = {percent(graph.wait_share_median)} "
            f"(median; P95 {percent(graph.wait_share_p95)})"
        )
    lines += _executes(profile, graph)
    if graph.ops:
        lines += _ops(graph, top, sort)
    return lines


def _source_executes(profile: ParsedProfile, graph: GraphBreakdown) -> list[tuple[Metric, ...]]:
    if graph.source == "average":
        return []
    for parsed in profile.graphs:
        if parsed.name == graph.name:
            return [execute.metrics for execute in parsed.executes]
    return []


def _executes(profile: ParsedProfile, graph: GraphBreakdown) -> list[str]:
    metrics = _source_executes(profile, graph)
    if graph.source == "average":
        return []  # its metrics are in the stats table above
    if len(metrics) == 1:
        return [f"  {plain(m.name)}: {metric_text(m)}" for m in metrics[0]]
    rows = graph.executes
    if not rows:
        return []
    shown = rows if len(rows) <= EXECUTE_ROWS_SHOWN else rows[: EXECUTE_ROWS_SHOWN // 2]
    hidden = len(rows) - len(shown)
    if any(row.wait_share is not None for row in rows):
        table = _wait_table(shown)
    else:
        table = _metric_table(shown, metrics)
    out = [table]
    if hidden:
        out.append(f"  ... {hidden} more execute(s) (all of them are in --json)")
    return out


def _wait_table(rows: Sequence[ExecuteBreakdown]) -> str:
    headers = ["execute", "warm-up", "accel us", "excl. wait us", "wait", "accel cycles"]
    headers.append("critical path cycles")
    table = [
        [
            str(row.index),
            "yes" if row.warmup else "",
            number(row.accelerator_us, 1),
            number(row.excluding_wait_us, 1),
            percent(row.wait_share),
            number(row.accelerator_cycles),
            number(row.critical_path_cycles),
        ]
        for row in rows
    ]
    return text_table(*_drop_empty(headers, table), indent="  ")


def _metric_table(rows: Sequence[ExecuteBreakdown], metrics: list[tuple[Metric, ...]]) -> str:
    columns: dict[tuple[str, str], None] = {}
    for execute_metrics in metrics:
        for metric in execute_metrics:
            if metric.unit != "ticks":
                columns.setdefault((metric.name, metric.unit), None)
    chosen = list(columns)[:MAX_METRIC_COLUMNS]
    headers = ["execute", "warm-up", *(plain(f"{name} {unit}".strip()) for name, unit in chosen)]
    table = []
    for row, execute_metrics in zip(rows, metrics, strict=False):
        by_name = {(m.name, m.unit): m for m in execute_metrics}
        cells = [str(row.index), "yes" if row.warmup else ""]
        for column in chosen:
            found = by_name.get(column)
            cells.append(MISSING if found is None else number(found.value, 3))
        table.append(cells)
    return text_table(*_drop_empty(headers, table), indent="  ")


def _drop_empty(headers: list[str], rows: list[list[str]]) -> tuple[list[str], list[list[str]]]:
    """Columns where no row has a value are left out (a CSV without wait has no wait column)."""
    keep = [
        i for i in range(len(headers)) if i == 0 or any(row[i] not in ("", MISSING) for row in rows)
    ]
    return [headers[i] for i in keep], [[row[i] for i in keep] for row in rows]


def _ops(graph: GraphBreakdown, top: int, sort: str | None) -> list[str]:
    by = sort or ("wait" if any(op.wait_median is not None for op in graph.ops) else "cycles")
    ordered = sort_ops(graph.ops, by)
    shown = ordered if top <= 0 else ordered[:top]
    single = graph.measured <= 1
    headers = ["op", "id"]
    if single:
        headers += ["cycles", "time us", "share", "wait", "overlap", "overlap wait"]
    else:
        headers += ["cycles p50", "cycles p95", "time us p50", "share", "growth pts"]
        headers += ["wait p50", "wait p95", "overlap p50"]
    headers += ["dominant path", "resources", "flags", "unit", "type"]
    rows = [_op_cells(op, single) for op in shown]
    what = "median scheduler wait" if by == "wait" else "median cycles"
    lines = [f"  ops by {what} ({len(shown)} of {len(ordered)}; cycles summed over threads):"]
    lines.append(text_table(*_drop_empty(headers, rows), indent="  "))
    growing = [op for key in graph.growing for op in graph.ops if op.key == key][:3]
    for op in growing:
        lines.append(
            f"  share growing over the run: {plain(op.name)} ({plain(op.key)}) "
            f"{percent(op.early_share)} -> {percent(op.late_share)}"
        )
    return lines


def _op_cells(op: OpBreakdown, single: bool) -> list[str]:
    cells = [plain(op.name), op.key if op.op_id is not None else ""]
    if single:
        cells += [
            number(op.cycles_median),
            number(op.time_us_median, 1),
            percent(op.share_median),
            number(op.wait_median),
            number(op.overlap_median),
            MISSING,
        ]
    else:
        cells += [
            number(op.cycles_median, 1),
            number(op.cycles_p95, 1),
            number(op.time_us_median, 1),
            percent(op.share_median),
            points(op.share_growth),
            number(op.wait_median, 1),
            number(op.wait_p95, 1),
            number(op.overlap_median, 1),
        ]
    cells += [
        number(op.dominant_path_median),
        plain(", ".join(op.resources)),
        plain(", ".join(op.flags)),
        plain(", ".join(filter(None, (op.compute_unit, *op.thread_types)))),
        plain(op.op_type),
    ]
    return cells


def _queries(queries: tuple[GenieQuery, ...]) -> list[str]:
    headers = ["query", "prompt toks", "TTFT ms", "prefill toks/s", "generated toks"]
    headers += ["decode toks/s", "decode ms", "finished"]
    rows = []
    recomputed = False
    for query in queries:
        cells = [str(query.index)]
        for names, scale in (
            (("num-prompt-tokens",), None),
            (("time-to-first-token", "Prompt Processing Time"), 1000.0),
            (("prompt-processing-rate", "Prompt Processing Rate"), None),
            (("num-generated-tokens",), None),
            (("token-generation-rate", "Token Generation Rate"), None),
            (("token-generation-time", "Token Generation Time"), 1000.0),
        ):
            metric = _query_metric(query, names)
            if metric is None:
                cells.append(MISSING)
                continue
            recomputed = recomputed or bool(metric.note)
            micros = metric.in_us() if scale else None
            value = micros / scale if scale and micros is not None else metric.value
            cells.append(number(value, 2) + ("*" if metric.note else ""))
        cells.append("yes" if query.complete else "no")
        rows.append(cells)
    lines = ["Genie queries", text_table(headers, rows, indent="  ")]
    if recomputed:
        lines.append("  * not in the file: recomputed from rate x time")
    for query in queries:
        if query.response:
            preview = " ".join(query.response.split())
            cut = preview[:RESPONSE_PREVIEW] + ("..." if len(preview) > RESPONSE_PREVIEW else "")
            lines.append(f"  response {query.index} ({len(query.response)} chars): {plain(cut)}")
    return lines


def _query_metric(query: GenieQuery, names: tuple[str, ...]) -> Metric | None:
    wanted = {name.lower() for name in names}
    return next((m for m in query.metrics if m.name.lower() in wanted), None)


def _notes(profile: ParsedProfile, result: Breakdown) -> list[str]:
    lines: list[str] = []
    for warning in profile.warnings:
        where = f" (line {warning.line})" if warning.line is not None else ""
        lines.append(f"note{where}: {plain(warning.message)}")
    lines.extend(f"note: {plain(note)}" for note in result.notes)
    if profile.unknown_lines:
        sample = f"; first: {profile.unknown_samples[0]}" if profile.unknown_samples else ""
        lines.append(
            f"note: {profile.unknown_lines} line(s) not understood and skipped{plain(sample)}"
        )
    return ["", *lines] if lines else []

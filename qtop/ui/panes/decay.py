"""Thermal decay: latency and the hottest zone against time, the onset, tau, stability."""

from __future__ import annotations

import math

from textual.app import ComposeResult
from textual.content import Content
from textual.widgets import Static

from qtop.analysis.live import LiveAnalysis
from qtop.analysis.session import DEFAULT_WINDOW_S
from qtop.analysis.thermal import ThermalAnalysis, fit_problem
from qtop.stats.model import SessionModel
from qtop.textsafe import clean
from qtop.ui.format import clock, fmt, offset, percent
from qtop.ui.panes.base import Pane
from qtop.ui.panes.thermal import ZONE_SUFFIX
from qtop.ui.plot import Figure, Line, Mark, gap_limit
from qtop.ui.view import View
from qtop.ui.widgets.line_chart import LineChart

FIT_POINTS = 120
# Below this width the figures lose their words to keep both lines whole.
NARROW_WIDTH = 70
# The chart's line colours (LineChart's line-N styles), named once for the legend too.
P50_COLOUR, HEAT_COLOUR, FIT_COLOUR = 0, 1, 2
LEGEND_STYLES = {P50_COLOUR: "$accent", HEAT_COLOUR: "$primary-lighten-2", FIT_COLOUR: "$success"}


def _thermal(analysis: LiveAnalysis | None, variant: str) -> ThermalAnalysis | None:
    return analysis.thermal if analysis is not None and analysis.variant == variant else None


def decay_figure(model: SessionModel, analysis: LiveAnalysis | None, variant: str) -> Figure:
    """Rolling P50 over the fitted curve on the left axis, under them the hottest zone (right)."""
    origin = model.t_first or 0.0
    thermal = _thermal(analysis, variant)
    lines: list[Line] = []
    rolling = analysis.rolling_p50 if analysis is not None and thermal is not None else ()
    t_from = analysis.t_start if analysis is not None and analysis.t_start is not None else origin
    fit = thermal.fit if thermal is not None else None
    onset = thermal.onset_t if thermal is not None else None
    if fit is not None and onset is not None and rolling and fit_problem(fit) is None:
        step = (rolling[-1][0] - onset) / FIT_POINTS
        curve = []
        for k in range(FIT_POINTS + 1):
            t = onset + k * step
            decay = math.exp(-(t - onset) / fit.tau_s)
            curve.append((t - origin, (fit.linf_s - (fit.linf_s - fit.l0_s) * decay) * 1000))
        lines.append(Line(curve, FIT_COLOUR))
    if rolling:
        lines.append(Line([(t - origin, v * 1000) for t, v in rolling], P50_COLOUR))
    hottest = hottest_channel(model, thermal)
    temperature = model.channel_series.get(hottest) if hottest else None
    if temperature is not None and rolling:
        heat = [(p.t - origin, p.mean) for p in temperature.view() if p.t >= t_from]
        # Under the latency curves: latency is what the pane is about.
        lines.insert(0, Line(heat, HEAT_COLOUR, "right", max_gap=gap_limit([x for x, _ in heat])))
    marks: tuple[Mark, ...] = ()
    if thermal is not None and thermal.onset_t is not None:
        marks = (Mark(thermal.onset_t - origin, "onset"),)
    x_range = None
    if rolling:
        x_range = (t_from - origin, max(rolling[-1][0], model.t_last or rolling[-1][0]) - origin)
    return Figure(
        lines=tuple(lines),
        marks=marks,
        x_range=x_range,
        y_unit="ms",
        y2_unit="C",
        x_format=clock,
    )


def hottest_channel(model: SessionModel, thermal: ThermalAnalysis | None) -> str | None:
    if thermal is not None and thermal.hottest_channel is not None:
        return thermal.hottest_channel
    found = model.hottest_zone()
    return found[0] if found else None


def tau_parts(thermal: ThermalAnalysis, narrow: bool = False) -> list[str | tuple[str, str]]:
    """``τ 19.6 s (R² 0.98)``, or why there is no τ: never a τ without its fit quality."""
    problem = fit_problem(thermal.fit)
    fit = thermal.fit
    if problem is None and fit is not None and fit.r_squared is not None:
        return [
            ("  τ ", "$text-muted"),
            (f"{fit.tau_s:.1f} s", "bold"),
            (f" (R² {fit.r_squared:.2f})", "$text-muted"),
        ]
    if narrow:
        known = fit is not None and fit.r_squared is not None and fit.converged
        problem = f"R² {fit.r_squared:.2f}" if known and fit is not None else ""
    return [
        ("  τ ", "$text-muted"),
        ("fit failed", "bold $warning"),
        (f" ({problem})" if problem else "", "$text-muted"),
    ]


def figures_line(thermal: ThermalAnalysis | None, narrow: bool = False) -> Content:
    """Onset and tau, then sustained and peak slowdown and stability: the decay in two lines.

    Narrow, the peak slowdown and the words around the figures go, so both lines fit.
    """
    if thermal is None:
        return Content.styled("waiting for a measured run\n", "$text-muted italic")
    parts: list[str | tuple[str, str]] = []
    if thermal.onset_t is not None:
        at = (
            f" at {fmt(thermal.temperature_at_onset_c, 1)} C"
            if thermal.temperature_at_onset_c
            else ""
        )
        parts += [
            ("onset ", "$text-muted"),
            (f"{offset(thermal.onset_offset_s)}{at}", "bold $error"),
        ]
        if thermal.corroborated is False:
            parts.append((" (no cooling step near it)", "$warning"))
        parts += tau_parts(thermal, narrow)
    else:
        parts += [("onset ", "$text-muted"), ("none yet", "bold $success")]
    parts += [
        ("\nsustained ", "$text-muted"),
        (percent(thermal.sustained_slowdown, signed=True), "bold"),
    ]
    if not narrow:
        parts += [("  peak ", "$text-muted"), (percent(thermal.peak_slowdown, signed=True), "bold")]
    stability = thermal.stability
    if stability is not None:
        verdict = ("pass", "bold $success") if stability.passed else ("FAIL", "bold $error")
        parts += [("  stability ", "$text-muted"), (f"{stability.ratio:.1%} ", "bold"), verdict]
        if not narrow:
            parts.append((f" (worst/best 30 s, pass ≥ {stability.pass_ratio:.0%})", "$text-muted"))
    return Content.assemble(*parts)


def legend(hottest: str | None, with_fit: bool) -> Content:
    """What each line of the chart is, in its own colour."""
    parts: list[str | tuple[str, str]] = [
        ("━", LEGEND_STYLES[P50_COLOUR]),
        f" P50 ({DEFAULT_WINDOW_S:g} s) ",
    ]
    if with_fit:
        parts += [("━", LEGEND_STYLES[FIT_COLOUR]), " fit "]
    if hottest:
        name = clean(hottest.split("/", 1)[-1]).removesuffix(ZONE_SUFFIX)
        parts += [("━", LEGEND_STYLES[HEAT_COLOUR]), f" {name} C (right)"]
    return Content.assemble(*parts)


class DecayPane(Pane):
    """The sustained-run view: does latency rise with temperature, and when."""

    TITLE = "thermal decay"
    DEFAULT_CSS = """
    DecayPane #decay-figures { height: 2; }
    DecayPane #decay-chart { min-height: 4; }
    DecayPane #decay-notes { height: auto; max-height: 1; color: $text-muted; }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.onset_t: float | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="decay-figures")
        yield LineChart(id="decay-chart", placeholder="waiting for a measured run")
        yield Static(id="decay-notes")

    def on_resize(self) -> None:
        self.call_after_refresh(self.redraw)

    def draw(self, view: View) -> None:
        analysis = view.analysis
        thermal = _thermal(analysis, view.variant)
        self.onset_t = thermal.onset_t if thermal is not None else None
        self.put("#decay-figures", figures_line(thermal, self.size.width < NARROW_WIDTH))
        notes = thermal.notes[:1] if thermal is not None else ()
        self.put("#decay-notes", Content(clean("\n".join(notes), keep_newlines=True)))
        self.query_one("#decay-notes").display = bool(notes)
        if not view.charts:
            return
        figure = decay_figure(view.model, analysis, view.variant)
        with_fit = any(line.colour == FIT_COLOUR for line in figure.lines)
        self.subtitle(legend(hottest_channel(view.model, thermal), with_fit) if figure.has_data
                      else "")  # fmt: skip
        self.query_one("#decay-chart", LineChart).figure = figure

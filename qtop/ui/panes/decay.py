"""Thermal decay: latency and the hottest zone against time, the onset, tau, stability."""

from __future__ import annotations

import math

from textual.app import ComposeResult
from textual.content import Content
from textual.widgets import Static

from qtop.analysis.session import DEFAULT_WINDOW_S
from qtop.analysis.thermal import ThermalAnalysis, rolling_median
from qtop.stats.model import SessionModel
from qtop.ui.derive import LiveAnalysis
from qtop.ui.format import clock, fmt, offset, percent
from qtop.ui.panes.base import Pane
from qtop.ui.plot import Figure, Line, Mark, gap_limit
from qtop.ui.view import View
from qtop.ui.widgets.line_chart import LineChart

FIT_POINTS = 120


def decay_figure(model: SessionModel, analysis: LiveAnalysis | None, variant: str) -> Figure:
    """Rolling P50 over the fitted curve on the left axis, under them the hottest zone (right)."""
    origin = model.t_first or 0.0
    series = model.latency_series.get(variant)
    points = series.view() if series is not None else []
    thermal = analysis.thermal if analysis is not None and analysis.variant == variant else None
    lines: list[Line] = []
    t_from = analysis.t_start if analysis is not None and analysis.t_start is not None else origin
    if thermal is not None and thermal.fit is not None and thermal.onset_t is not None and points:
        fit = thermal.fit
        t_end = points[-1].t
        step = (t_end - thermal.onset_t) / FIT_POINTS
        curve = []
        for k in range(FIT_POINTS + 1):
            t = thermal.onset_t + k * step
            value = fit.linf_s - (fit.linf_s - fit.l0_s) * math.exp(
                -(t - thermal.onset_t) / fit.tau_s
            )
            curve.append((t - origin, value * 1000))
        lines.append(Line(curve, 2))
    if points:
        times = [p.t - p.mean / 2 for p in points]
        latencies = [p.mean for p in points]
        rolling = rolling_median(times, latencies, DEFAULT_WINDOW_S)
        lines.append(Line([(t - origin, v * 1000) for t, v in zip(times, rolling, strict=True)], 0))
    hottest = thermal.hottest_channel if thermal is not None else None
    if hottest is None:
        found = model.hottest_zone()
        hottest = found[0] if found else None
    temperature = model.channel_series.get(hottest) if hottest else None
    if temperature is not None:
        heat = [(p.t - origin, p.mean) for p in temperature.view() if p.t >= t_from]
        # Under the latency curves: latency is what the pane is about.
        lines.insert(0, Line(heat, 1, "right", max_gap=gap_limit([x for x, _ in heat])))
    marks = ()
    if thermal is not None and thermal.onset_t is not None:
        marks = (Mark(thermal.onset_t - origin, "onset"),)
    x_range = None
    if points:
        x_range = (t_from - origin, max(points[-1].t, model.t_last or points[-1].t) - origin)
    return Figure(
        lines=tuple(lines),
        marks=marks,
        x_range=x_range,
        y_unit="ms",
        y2_unit="C",
        x_format=clock,
    )


def figures_line(thermal: ThermalAnalysis | None) -> Content:
    """Onset and tau, then sustained and peak slowdown and stability: the decay in two lines."""
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
    else:
        parts += [("onset ", "$text-muted"), ("none yet", "bold $success")]
    if thermal.fit is not None:
        parts += [("  τ ", "$text-muted"), (f"{thermal.fit.tau_s:.1f} s", "bold")]
    parts += [
        ("\nsustained ", "$text-muted"),
        (percent(thermal.sustained_slowdown, signed=True), "bold"),
        ("  peak ", "$text-muted"),
        (percent(thermal.peak_slowdown, signed=True), "bold"),
    ]
    stability = thermal.stability
    if stability is not None:
        verdict = ("pass", "bold $success") if stability.passed else ("FAIL", "bold $error")
        parts += [
            ("  stability ", "$text-muted"),
            (f"{stability.ratio:.1%} ", "bold"),
            verdict,
            (f" (worst/best 30 s, pass ≥ {stability.pass_ratio:.0%})", "$text-muted"),
        ]
    return Content.assemble(*parts)


class DecayPane(Pane):
    """The sustained-run view: does latency rise with temperature, and when."""

    TITLE = "thermal decay"
    SLOW_PERIOD_S = 1.0
    DEFAULT_CSS = """
    DecayPane #decay-figures { height: 2; }
    DecayPane #decay-notes { height: auto; max-height: 1; color: $text-muted; }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.onset_t: float | None = None
        self._analysis_shown: object = None

    def compose(self) -> ComposeResult:
        yield Static(id="decay-figures")
        yield LineChart(id="decay-chart", placeholder="waiting for a measured run")
        yield Static(id="decay-notes")

    def update_view(self, view: View) -> None:
        analysis = view.analysis
        if analysis is self._analysis_shown and not self.due():
            return
        self._analysis_shown = analysis
        thermal = (
            analysis.thermal if analysis is not None and analysis.variant == view.variant else None
        )
        self.onset_t = thermal.onset_t if thermal is not None else None
        self.show("#decay-figures", thermal, figures_line(thermal))
        notes = thermal.notes[:1] if thermal is not None else ()
        self.show("#decay-notes", notes, "\n".join(notes))
        hottest = thermal.hottest_channel if thermal is not None else None
        self.set_subtitle(
            f"latency (rolling P50) and {hottest.split('/', 1)[-1]}" if hottest else ""
        )
        self.query_one("#decay-chart", LineChart).figure = decay_figure(
            view.model, analysis, view.variant
        )

"""Latency: the measured iterations over time with P50/P95/P99, a histogram, warnings."""

from __future__ import annotations

import math

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.content import Content
from textual.widgets import Static

from qtop.analysis.live import LiveAnalysis, latency_histogram
from qtop.analysis.pacing import PacingSummary, live_pacing
from qtop.stats.model import SessionModel
from qtop.stats.quantiles import RunningStats
from qtop.textsafe import clean
from qtop.ui.format import clock, fmt_ms
from qtop.ui.panes.base import Pane
from qtop.ui.plot import Figure, Line, Rule
from qtop.ui.view import View
from qtop.ui.widgets.histogram import Bins, Histogram
from qtop.ui.widgets.line_chart import LineChart

QUANTILES = (("P50", 0.5), ("P95", 0.95), ("P99", 0.99))
# Below this width the histogram gives its columns to the chart, and the figures take
# three lines instead of two (at 100x30 a pane is 50 columns wide).
NARROW_WIDTH = 70


def shown_quantiles(stats: RunningStats) -> dict[str, float | None]:
    """The percentiles the pane prints, in seconds (None before the first iteration)."""
    return {name: (stats.quantile(q) if stats.count else None) for name, q in QUANTILES}


def figures_line(model: SessionModel, variant: str, narrow: bool = False) -> Content:
    """``P50 59.500  P95 104.050  P99 108.010 ms │ n 100/100`` over ``mean ... max ...``.

    Narrow, the same figures take three lines: percentiles; count, mean and stdev;
    min, max and failures.
    """
    stats = model.latency_stats("measure", variant)
    if stats.count == 0:
        warmup = model.latency_stats("warmup", variant)
        if warmup.count:
            runs = "1 run" if warmup.count == 1 else f"{warmup.count} runs"
            return Content.assemble(
                ("warm-up ", "bold $warning"),
                f"{runs}, mean {fmt_ms(warmup.mean)} ms (not counted)",
            )
        return Content.styled("no measured iterations yet", "$text-muted italic")
    parts: list[str | tuple[str, str]] = []
    for index, (name, value) in enumerate(shown_quantiles(stats).items()):
        parts.append((f"{'  ' if index else ''}{name} ", "$text-muted"))
        parts.append((fmt_ms(value), "bold"))
    parts.append((" ms" + ("" if stats.is_exact else " ±0.1%"), "$text-muted"))
    planned = model.phase.planned_iterations if model.phase.variant == variant else None
    count = (
        f"{stats.count}/{planned}"
        if planned and model.phase.phase == "measure"
        else str(stats.count)
    )
    stdev = fmt_ms(stats.stdev if stats.count > 1 else None)
    if narrow:
        parts += [("\nn ", "$text-muted"), (count, "bold"), ("  mean ", "$text-muted"),
                  fmt_ms(stats.mean), ("  stdev ", "$text-muted"), stdev]  # fmt: skip
        parts += [("\nmin ", "$text-muted"), fmt_ms(stats.minimum), ("  max ", "$text-muted"),
                  fmt_ms(stats.maximum), (" ms", "$text-muted")]  # fmt: skip
    else:
        parts += [("  │  n ", "$text-muted"), (count, "bold"), ("\nmean ", "$text-muted"),
                  fmt_ms(stats.mean), ("  min ", "$text-muted"), fmt_ms(stats.minimum),
                  ("  max ", "$text-muted"), fmt_ms(stats.maximum), ("  stdev ", "$text-muted"),
                  stdev, (" ms", "$text-muted")]  # fmt: skip
    failed = model.failed("measure", variant)
    if failed:
        parts.append((f"  {failed} failed", "bold $error"))
    return Content.assemble(*parts)


def pacing_line(pacing: PacingSummary) -> Content:
    """``paced 13.5/s achieved 6.8/s │ missed 12/30 (40.0%) │ late P50 … P95 … max … ms │
    duty 98%``: a paced run's deadline misses, queueing lateness, rate and busy share."""
    muted = "$text-muted"
    target = f"{pacing.target_rate_hz:.4g}/s" if pacing.target_rate_hz else "?"
    achieved = f"{pacing.achieved_rate_hz:.4g}/s" if pacing.achieved_rate_hz else "—"
    share = f" ({pacing.miss_fraction:.1%})" if pacing.miss_fraction is not None else ""
    parts: list[str | tuple[str, str]] = [
        ("paced ", muted), (target, "bold"), (" achieved ", muted), (achieved, "bold"),
        ("  │  missed ", muted),
        (f"{pacing.missed}/{pacing.iterations}{share}", "bold $error" if pacing.missed else "bold"),
        ("  │  late ", muted),
    ]  # fmt: skip
    late = (
        ("P50", pacing.lateness_p50_s),
        ("P95", pacing.lateness_p95_s),
        ("max", pacing.lateness_max_s),
    )
    for index, (name, value) in enumerate(late):
        parts += [(f"{' ' if index else ''}{name} ", muted), fmt_ms(value)]
    duty = f"{pacing.duty_cycle:.0%}" if pacing.duty_cycle is not None else "—"
    parts += [(" ms  │  duty ", muted), (duty, "bold")]
    return Content.assemble(*parts)


def warnings_for(model: SessionModel, variant: str, analysis: LiveAnalysis | None) -> list[str]:
    """Too few iterations, outliers, failures: what the engineer should act on."""
    out: list[str] = []
    if analysis is not None and analysis.variant == variant:
        if analysis.validity is not None and model.phase.phase != "measure":
            out.extend(analysis.validity.reasons)
        out.extend(analysis.hints)
    failures = [f for f in model.recent_failures if f.variant == variant]
    if failures:
        last = failures[-1]
        error = last.error.strip().splitlines() if last.error else []
        detail = f": {clean(error[-1])}" if error else ""
        out.append(f"iteration {last.index} failed (exit {last.exit_status}){detail}")
    return out


def latency_figure(model: SessionModel, variant: str) -> Figure:
    stats = model.latency_stats("measure", variant)
    series = model.latency_series.get(variant)
    origin = model.t_first or 0.0
    points = [(p.t - origin, p.mean * 1000) for p in series.view()] if series else []
    rules = tuple(
        Rule(value * 1000, colour, name)
        for colour, (name, value) in enumerate(shown_quantiles(stats).items())
        if value is not None
    )
    return Figure(lines=(Line(points, 0),), rules=rules, y_unit="ms", x_format=clock)


def bin_count(values: int, columns: int) -> int:
    """Rice's rule (2 x cube root of n) bins, at most one per column."""
    return max(1, min(columns, math.ceil(2 * values ** (1 / 3))))


def histogram_bins(stats: RunningStats, columns: int) -> Bins | None:
    histogram = latency_histogram(stats, bin_count(stats.count, columns))
    if histogram is None:
        return None
    note = f"+{histogram.above} beyond" if histogram.above else ""
    return Bins(
        histogram.counts,
        f"{fmt_ms(histogram.low, 1)} ms",
        f"{fmt_ms(histogram.high, 1)} ms",
        note,
    )


class LatencyPane(Pane):
    """Per-iteration latency of the variant on show."""

    TITLE = "latency"
    DEFAULT_CSS = """
    LatencyPane #latency-figures { height: 2; }
    LatencyPane #latency-pacing { height: auto; max-height: 2; display: none; }
    LatencyPane #latency-charts { height: 1fr; }
    LatencyPane #latency-chart { width: 2fr; }
    LatencyPane #latency-histogram { width: 1fr; margin-left: 1; }
    LatencyPane #latency-warnings { height: auto; max-height: 2; color: $warning; }
    LatencyPane.-narrow #latency-histogram { display: none; }
    LatencyPane.-narrow #latency-figures { height: 3; }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.quantiles: dict[str, float | None] = {}

    def compose(self) -> ComposeResult:
        yield Static(id="latency-figures")
        yield Static(id="latency-pacing")
        with Horizontal(id="latency-charts"):
            yield LineChart(id="latency-chart", placeholder="waiting for measured iterations")
            yield Histogram(id="latency-histogram")
        yield Static(id="latency-warnings")

    def on_resize(self) -> None:
        narrow = self.size.width < NARROW_WIDTH
        if narrow != self.has_class("-narrow"):
            self.set_class(narrow, "-narrow")
            self.call_after_refresh(self.redraw)

    def draw(self, view: View) -> None:
        model, variant = view.model, view.variant
        stats = model.latency_stats("measure", variant)
        self.quantiles = shown_quantiles(stats)
        self.subtitle(f"variant {clean(variant)}" if variant else "")
        self.put("#latency-figures", figures_line(model, variant, self.has_class("-narrow")))
        pacing = live_pacing(model, "measure", variant)
        if pacing is not None:
            self.put("#latency-pacing", pacing_line(pacing))
        self.query_one("#latency-pacing").display = pacing is not None
        warnings = warnings_for(model, variant, view.analysis)
        self.put("#latency-warnings", Content("\n".join(f"⚠ {w}" for w in warnings)))
        self.query_one("#latency-warnings").display = bool(warnings)
        if view.charts:
            self.query_one("#latency-chart", LineChart).figure = latency_figure(model, variant)
            histogram = self.query_one("#latency-histogram", Histogram)
            if histogram.display:
                histogram.bins = histogram_bins(stats, histogram.columns)

"""The analysis of a session while it runs, from the model's downsampled series.

``analyze(events)`` (``qtop.analysis.session``) needs every event; a live view
keeps only the ``SessionModel``, whose series hold a bounded number of points.
Here the same analysis functions are fed those series instead, so the view keeps
nothing that grows with the session. While a series holds every point (up to its
capacity) the results equal the analysis of the recording; past that they
describe the same curve at a coarser grain.

It runs in two steps so it can run off the event loop: ``capture`` copies what
it needs out of the model (cheap: lists of immutable points), on the thread that
owns the model; ``analyze_live`` then works on that copy alone, on any thread,
while the model goes on changing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from qtop.analysis.energy import (
    NO_POWER,
    POWER_KINDS,
    EnergyAnalysis,
    PowerSource,
    analyze_energy,
    build_power_trace,
    select_power_source,
)
from qtop.analysis.latency import Outliers, Validity, check_validity, find_outliers, outlier_hints
from qtop.analysis.series import ChannelSeries
from qtop.analysis.session import (
    DEFAULT_HOLD_S,
    DEFAULT_MIN_DURATION_S,
    DEFAULT_MIN_ITERATIONS,
    DEFAULT_STABILITY_PASS,
    DEFAULT_STABILITY_WINDOW_S,
    DEFAULT_THETA,
    DEFAULT_WINDOW_S,
)
from qtop.analysis.thermal import ThermalAnalysis, analyze_thermal, rolling_median
from qtop.errors import UsageError
from qtop.events import ChannelInfo
from qtop.stats.model import SessionModel
from qtop.stats.quantiles import RunningStats
from qtop.stats.series import Series, SeriesPoint

THERMAL_KINDS = ("temperature", "cooling")


@dataclass(frozen=True, slots=True)
class LiveInputs:
    """What ``analyze_live`` reads, copied out of the model at one moment."""

    variant: str
    latency: list[SeriesPoint]
    every_iteration: bool
    channels: dict[str, ChannelInfo]
    channel_points: dict[str, list[SeriesPoint]]
    measured: int
    warmup: int
    min_iterations: int
    min_duration_s: float
    baseline: tuple[float, float] | None


@dataclass(frozen=True, slots=True)
class LiveAnalysis:
    """The analysis of one variant; None where it cannot be known yet."""

    variant: str
    t_start: float | None
    t_end: float | None
    validity: Validity | None
    outliers: Outliers | None
    hints: tuple[str, ...]
    thermal: ThermalAnalysis | None
    rolling_p50: tuple[tuple[float, float], ...]
    power_source: PowerSource | None
    energy: EnergyAnalysis | None
    power_notes: tuple[str, ...]


def channel_series(series: Series) -> ChannelSeries:
    """A model series as the analysis' (times, values), one value per point (its mean)."""
    return _as_channel(series.view())


def _as_channel(points: list[SeriesPoint]) -> ChannelSeries:
    return ChannelSeries([p.t for p in points], [p.mean for p in points])


def _profile_number(model: SessionModel, key: str) -> float | None:
    run = model.header.profile.get("run") if model.header else None
    value = run.get(key) if isinstance(run, Mapping) else None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def capture(model: SessionModel, variant: str) -> LiveInputs:
    """Copy what the analysis of ``variant`` needs out of ``model`` (on the model's thread)."""
    latency = model.latency_series.get(variant)
    points = latency.view() if latency is not None else []
    wanted = (*THERMAL_KINDS, *POWER_KINDS)
    channel_points = {
        channel.id: model.channel_series[channel.id].view()
        for channel in model.channels.values()
        if channel.kind in wanted and channel.id in model.channel_series
    }
    t_start = points[0].t - points[0].mean if points else None
    minimum = _profile_number(model, "min_iterations")
    min_duration = _profile_number(model, "min_duration_s")
    return LiveInputs(
        variant=variant,
        latency=points,
        every_iteration=latency is not None and latency.stride == 1,
        channels=dict(model.channels),
        channel_points=channel_points,
        measured=model.done("measure", variant),
        warmup=model.done("warmup", variant),
        min_iterations=int(minimum) if minimum is not None else DEFAULT_MIN_ITERATIONS,
        min_duration_s=min_duration if min_duration is not None else DEFAULT_MIN_DURATION_S,
        baseline=model.phase_span("baseline", t_start) if t_start is not None else None,
    )


def analyze_live(inputs: LiveInputs) -> LiveAnalysis:
    """Validity, outliers, thermal decay and energy of one variant, from captured inputs."""
    series = {cid: _as_channel(points) for cid, points in inputs.channel_points.items()}
    source, notes = _power_source(inputs.channels, series)
    points = inputs.latency
    if not points:
        return LiveAnalysis(inputs.variant, None, None, None, None, (), None, (), source, None,
                            notes)  # fmt: skip
    # A point's t is the mean end of the iterations it holds; its midpoint is half a latency
    # earlier, the time the analysis uses. While points are single iterations this is exact.
    times = [p.t - p.mean / 2 for p in points]
    latencies = [p.mean for p in points]
    t_start = points[0].t - points[0].mean
    t_end = points[-1].t
    validity = check_validity(
        inputs.measured, t_end - t_start, inputs.min_iterations, inputs.min_duration_s
    )
    outliers = find_outliers(latencies) if inputs.every_iteration else None
    hints = (
        tuple(outlier_hints(outliers, inputs.measured, inputs.warmup or None)) if outliers else ()
    )
    thermal = analyze_thermal(
        times,
        latencies,
        t_start=t_start,
        t_end=t_end,
        series={k: v for k, v in series.items() if inputs.channels[k].kind in THERMAL_KINDS},
        channels=inputs.channels,
        window_s=DEFAULT_WINDOW_S,
        hold_s=DEFAULT_HOLD_S,
        theta=DEFAULT_THETA,
        stability_window_s=DEFAULT_STABILITY_WINDOW_S,
        stability_pass=DEFAULT_STABILITY_PASS,
    )
    rolling = rolling_median(times, latencies, DEFAULT_WINDOW_S)
    energy = None
    if source is not None and t_end > t_start:
        trace = build_power_trace(source, inputs.channels, series)
        status = series.get(source.status_channel) if source.status_channel else None
        energy = analyze_energy(trace, status, t_start, t_end, times, inputs.baseline)
    return LiveAnalysis(
        variant=inputs.variant,
        t_start=t_start,
        t_end=t_end,
        validity=validity,
        outliers=outliers,
        hints=hints,
        thermal=thermal,
        rolling_p50=tuple(zip(times, rolling, strict=True)),
        power_source=source,
        energy=energy,
        power_notes=notes,
    )


def _power_source(
    channels: Mapping[str, ChannelInfo], series: Mapping[str, ChannelSeries]
) -> tuple[PowerSource | None, tuple[str, ...]]:
    try:
        source, notes = select_power_source(channels, series)
    except UsageError as exc:
        return None, (exc.problem,)
    if source is None:
        notes.append(NO_POWER)
    return source, tuple(notes)


@dataclass(frozen=True, slots=True)
class Histogram:
    """Counts of equal-width bins between low and high (seconds); ``above`` lie past high."""

    counts: tuple[int, ...]
    low: float
    high: float
    above: int
    exact: bool


def latency_histogram(stats: RunningStats, bins: int) -> Histogram | None:
    """Bins over [min, P99.5] of the latencies, from the exact values or the sketch.

    Cutting at P99.5 keeps a few extreme outliers from squashing the shape into
    one column; how many lie beyond is reported.
    """
    if stats.count == 0 or bins <= 0:
        return None
    low = stats.minimum
    high = min(stats.maximum, stats.quantile(0.995))
    if not high > low:
        high = low + max(abs(low) * 0.01, 1e-6)
    counts = [0] * bins
    above = 0
    width = (high - low) / bins

    def add(value: float, count: int) -> None:
        nonlocal above
        if value > high:
            above += count
            return
        counts[min(bins - 1, max(0, int((value - low) / width)))] += count

    if stats.exact is not None:
        for value in stats.exact:
            add(value, 1)
    else:
        for value, count in _sketch_points(stats):
            add(value, count)
    return Histogram(tuple(counts), low, high, above, stats.exact is not None)


def _sketch_points(stats: RunningStats) -> Iterable[tuple[float, int]]:
    sketch = stats.sketch
    gamma = (1 + 0.001) / (1 - 0.001)
    if sketch.small:
        yield stats.minimum, sketch.small
    for key, count in sketch.buckets.items():
        value = 2 * gamma**key / (gamma + 1)
        yield min(max(value, stats.minimum), stats.maximum), count

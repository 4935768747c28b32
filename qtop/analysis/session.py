"""``analyze(events)``: every figure of a session, as a pure function of its events.

The same events give the same ``SessionAnalysis`` whether they come from a
live session, a replay or a recording on disk, so ``report``, ``compare`` and
the live view cannot disagree. ``SessionAnalysis.to_dict()`` is plain JSON.
"""

from __future__ import annotations

import itertools
import math
import operator
from array import array
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from qtop.analysis.collect import Collected, IterationTable, collect
from qtop.analysis.current_sign import CurrentSign, detect_current_sign
from qtop.analysis.drift import Drift, analyze_drift, block_spans, block_starts
from qtop.analysis.early_stop import EarlyStopEstimate, estimate, minimum_queries, minimums
from qtop.analysis.energy import (
    NO_POWER,
    EnergyAnalysis,
    PowerTrace,
    analyze_energy,
    build_power_trace,
    no_power,
    select_power_source,
)
from qtop.analysis.latency import (
    LatencyStats,
    MetricStats,
    Outliers,
    Validity,
    check_validity,
    find_outliers,
    latency_stats,
    metric_stats,
    outlier_hints,
)
from qtop.analysis.numeric import percentile
from qtop.analysis.pacing import PacingSummary, summarize_pacing
from qtop.analysis.plain import to_plain
from qtop.analysis.tally import Tally
from qtop.analysis.thermal import ThermalAnalysis, analyze_thermal
from qtop.analysis.timeline import TimelineRow, timeline, timeline_window_s
from qtop.errors import UsageError
from qtop.events import (
    Event,
    Header,
    PhaseChange,
)
from qtop.stats.pacing import PacingFold

DEFAULT_WINDOW_S = 10.0
DEFAULT_HOLD_S = 10.0
DEFAULT_THETA = 0.05
DEFAULT_STABILITY_WINDOW_S = 30.0
DEFAULT_STABILITY_PASS = 0.97
DEFAULT_MIN_ITERATIONS = 30
DEFAULT_MIN_DURATION_S = 0.0
EARLY_STOP_LABEL = "early stop"
# Above this share of the median latency the timer's own cost is worth a warning.
TIMER_OVERHEAD_NOTICE = 0.01


@dataclass(frozen=True, slots=True)
class AnalysisParameters:
    """The knobs of the analysis, recorded with its results."""

    window_s: float = DEFAULT_WINDOW_S
    hold_s: float = DEFAULT_HOLD_S
    theta: float = DEFAULT_THETA
    stability_window_s: float = DEFAULT_STABILITY_WINDOW_S
    stability_pass: float = DEFAULT_STABILITY_PASS
    min_iterations: int = DEFAULT_MIN_ITERATIONS
    min_duration_s: float = DEFAULT_MIN_DURATION_S
    power_source: str | None = None
    # run.stop: early: the minimum query count gives way to the early-stopping estimate.
    early_stopping: bool = False
    validity_preset: str = "custom"


@dataclass(frozen=True, slots=True)
class VariantAnalysis:
    """Everything about one variant of the run (``""`` when the run has no variants)."""

    name: str
    measured: LatencyStats
    warmup: LatencyStats | None
    metrics: tuple[MetricStats, ...]
    validity: Validity
    outliers: Outliers
    thermal: ThermalAnalysis | None
    energy: EnergyAnalysis
    timeline: tuple[TimelineRow, ...]
    hints: tuple[str, ...]
    t_start: float | None
    t_end: float | None
    drift: Drift | None = None
    early_stop: EarlyStopEstimate | None = None
    # Why the measurement ended before its plan ("" when it did not).
    stopped_early: str = ""
    # The timeline's window: the stability window, or a multiple of it for a run too
    # long to show in MAX_TIMELINE_ROWS rows.
    timeline_window_s: float = DEFAULT_STABILITY_WINDOW_S
    # In the order the iterations ran (what compare resamples); an array of machine numbers.
    latencies_s: Sequence[float] = field(
        default=(), repr=False, compare=False, metadata={"export": False}
    )
    # Paced runs: deadline misses, lateness, achieved rate and duty cycle.
    pacing: PacingSummary | None = None


@dataclass(frozen=True, slots=True)
class SessionAnalysis:
    """The analysis of one session: per-variant results plus what applies to all."""

    session_id: str
    profile_name: str
    source: str
    timer_overhead_s: float | None
    power_source: str | None
    variants: tuple[VariantAnalysis, ...]
    notes: tuple[str, ...]
    parameters: AnalysisParameters
    latency_source: str = "wall"
    current_sign: CurrentSign | None = None

    def variant(self, name: str) -> VariantAnalysis | None:
        return next((v for v in self.variants if v.name == name), None)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON types only (NaN and infinities become null)."""
        return to_plain(self)


def _profile_run(header: Header | None) -> Mapping[str, Any]:
    run = header.profile.get("run") if header else None
    return run if isinstance(run, Mapping) else {}


def _number(value: Any) -> float | None:
    """A finite number from the header's free-form profile, or None (an integer of 400
    digits or 1e999 in a damaged header is no setting)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def _baseline_span(
    phases: list[PhaseChange], before: float, t_last: float | None
) -> tuple[float, float] | None:
    """The last idle-power baseline phase that started before ``before``."""
    timed = sorted((p.t, p.phase) for p in phases if p.t is not None)
    span = None
    for i, (start, name) in enumerate(timed):
        if name != "baseline" or start >= before:
            continue
        end = timed[i + 1][0] if i + 1 < len(timed) else t_last
        if end is not None and end > start:
            span = (start, min(end, before))
    return span


def _check_parameters(
    window_s: float, hold_s: float, theta: float, stability_window_s: float, stability_pass: float
) -> None:
    checks = (
        ("window_s", window_s, window_s > 0, "a positive number of seconds, e.g. 10"),
        ("hold_s", hold_s, hold_s >= 0, "zero or more seconds, e.g. 10"),
        ("theta", theta, theta > 0, "a positive fraction, e.g. 0.05 for 5%"),
        ("stability_window_s", stability_window_s, stability_window_s > 0, "e.g. 30"),
        ("stability_pass", stability_pass, 0 < stability_pass <= 1, "a fraction, e.g. 0.97"),
    )
    for name, value, ok, fix in checks:
        if not ok:
            raise UsageError(f"analysis {name}={value!r} is not usable", fix)


def analyze(events: Iterable[Event], **parameters: Any) -> SessionAnalysis:
    """Analyse a session's events (the header may be among them); see ``analyze_collected``."""
    return analyze_collected(collect(events), **parameters)


def analyze_collected(
    data: Collected,
    *,
    window_s: float = DEFAULT_WINDOW_S,
    hold_s: float = DEFAULT_HOLD_S,
    theta: float = DEFAULT_THETA,
    stability_window_s: float = DEFAULT_STABILITY_WINDOW_S,
    stability_pass: float = DEFAULT_STABILITY_PASS,
    min_iterations: int | None = None,
    min_duration_s: float | None = None,
    power_source: str | None = None,
) -> SessionAnalysis:
    """Analyse what a ``Collector`` gathered from a session's events.

    ``min_iterations`` and ``min_duration_s`` default to the recorded profile's
    ``run.min_iterations`` / ``run.min_duration_s``, else 30 and 0.
    ``power_source`` picks a channel group such as ``meter/ina226``.
    """
    _check_parameters(window_s, hold_s, theta, stability_window_s, stability_pass)
    run = _profile_run(data.header)
    if min_iterations is None:
        recorded = _number(run.get("min_iterations"))
        min_iterations = int(recorded) if recorded is not None else DEFAULT_MIN_ITERATIONS
    if min_duration_s is None:
        recorded = _number(run.get("min_duration_s"))
        min_duration_s = recorded if recorded is not None else DEFAULT_MIN_DURATION_S
    # A validity preset raises them; with run.stop: early its query count gives way.
    minimum = minimums(run, min_iterations, min_duration_s)
    parameters = AnalysisParameters(
        window_s=window_s,
        hold_s=hold_s,
        theta=theta,
        stability_window_s=stability_window_s,
        stability_pass=stability_pass,
        min_iterations=minimum.queries,
        min_duration_s=minimum.duration_s,
        power_source=power_source,
        early_stopping=minimum.early_stopping,
        validity_preset=minimum.preset,
    )
    device = data.header.device if data.header else {}
    timer_overhead = data.timer_overhead_s
    if timer_overhead is None:
        timer_overhead = _number(device.get("timer_overhead_s"))
    source, source_notes = select_power_source(data.channels, data.series, power_source)
    trace = build_power_trace(source, data.channels, data.series) if source else None
    notes = list(source_notes)
    if source is None:
        notes.append(NO_POWER)
    current_sign = detect_current_sign(data.channels, data.series)
    if current_sign is not None:
        notes.append(f"battery current sign: {current_sign.describe()}")
    profile_warmup = _number(run.get("warmup"))
    latency_source = str(run.get("latency_source") or "wall")
    # Only a wall-time latency is measured through the device timer.
    timed_overhead = timer_overhead if latency_source == "wall" else None
    variants = [
        _analyze_variant(name, data, parameters, trace, timed_overhead, profile_warmup)
        for name in data.iterations.variants
    ]
    header = data.header
    profile_name = header.profile.get("name", "") if header else ""
    return SessionAnalysis(
        session_id=header.session_id if header else "",
        profile_name=profile_name if isinstance(profile_name, str) else "",
        source=header.source if header else "",
        timer_overhead_s=timer_overhead,
        power_source=source.describe() if source else None,
        variants=tuple(variants),
        latency_source=latency_source,
        notes=tuple(notes),
        parameters=parameters,
        current_sign=current_sign,
    )


def _analyze_variant(
    name: str,
    data: Collected,
    parameters: AnalysisParameters,
    trace: PowerTrace | None,
    timer_overhead: float | None,
    profile_warmup: float | None,
) -> VariantAnalysis:
    table = data.iterations
    picked = _VariantRows(table, table.variant_id(name))
    # Machine numbers, not lists of float objects: an hour holds 800,000 of them.
    times, latencies = picked.midpoints, picked.latencies
    count = len(latencies)
    t_start, t_end = picked.t_start, picked.t_end
    span = t_end - t_start if t_start is not None and t_end is not None else 0.0
    # Sorted once: the percentiles, the median and the MAD of the outliers all read it.
    tally = Tally.of(latencies)
    ordered = tally.ordered() if tally is not None else sorted(latencies)
    start_order = picked.in_start_order()
    outliers = find_outliers(start_order.latencies, start_order, ordered)
    warmup_count = len(picked.warmup)
    hints = outlier_hints(
        outliers,
        count,
        warmup_count
        if warmup_count
        else (int(profile_warmup) if profile_warmup is not None else None),
    )
    # Everything that reads the sorted latencies, before they go (800,000 float objects,
    # 26 MB, which would otherwise sit beside the thermal analysis' own).
    stats = latency_stats(latencies, picked.measured_failed, span, ordered, tally)
    del tally
    early = estimate(ordered)
    centre = percentile(ordered, 0.5) if ordered else None
    del ordered
    thermal = None
    if t_start is not None and t_end is not None and times:
        thermal = analyze_thermal(
            times,
            latencies,
            t_start=t_start,
            t_end=t_end,
            series=data.series,
            channels=data.channels,
            window_s=parameters.window_s,
            hold_s=parameters.hold_s,
            theta=parameters.theta,
            stability_window_s=parameters.stability_window_s,
            stability_pass=parameters.stability_pass,
        )
    block_times = block_starts(data.phases, name)
    drift = analyze_drift(
        times,
        latencies,
        picked.ends(),
        picked.starts,
        block_times,
        data.series.get(thermal.hottest_channel or "") if thermal else None,
        centre,
        stats.mean_s,
    )
    interleaved = drift.blocks > 1
    if interleaved:
        # The span holds the other variants' blocks too: the measured time is the blocks'.
        span = drift.measured_s
        stats = replace(stats, duration_s=span)
    if timer_overhead and stats.p50_s and timer_overhead > TIMER_OVERHEAD_NOTICE * stats.p50_s:
        hints.append(
            f"the device timer's own overhead ({timer_overhead * 1e3:.3g} ms) is "
            f"{timer_overhead / stats.p50_s:.1%} of the P50: it is subtracted from every "
            "latency, so they are no more precise than its jitter; time more work per "
            "iteration (more inferences per process, say)"
        )
    if stats.failed:
        hints.append(f"{stats.failed} measured iteration(s) failed and are not in the statistics")
    if trace is None or t_start is None or t_end is None:
        energy = no_power(span, count)
    else:
        status_id = trace.source.status_channel
        energy = analyze_energy(
            trace,
            data.series.get(status_id) if status_id else None,
            t_start,
            t_end,
            times,
            _baseline_span(data.phases, t_start, data.t_last),
            # Between an interleaved variant's blocks run the other variants' blocks.
            spans=block_spans(block_times, times, picked.starts, picked.ends())
            if interleaved
            else (),
        )
    rows: tuple[TimelineRow, ...] = ()
    timeline_window = parameters.stability_window_s
    if t_start is not None and t_end is not None:
        hottest = thermal.hottest_channel if thermal else None
        cooling = [
            data.series[c.id]
            for c in data.channels.values()
            if c.kind == "cooling" and c.id in data.series
        ]
        timeline_window = timeline_window_s(t_start, t_end, parameters.stability_window_s)
        rows = timeline(
            times,
            latencies,
            t_start,
            t_end,
            timeline_window,
            data.series.get(hottest) if hottest else None,
            cooling,
            trace,
        )
    warmup_latencies, warmup_failed = picked.warmup_latencies()
    validity = check_validity(count, span, parameters.min_iterations, parameters.min_duration_s)
    if parameters.early_stopping and early is None and count:
        validity = replace(
            validity,
            valid=False,
            reasons=(
                *validity.reasons,
                f"{count} successful measured iterations are too few for the early-stopping "
                f"estimate (at least {minimum_queries()}): run more iterations",
            ),
        )
    stopped = [m.note for m in data.markers if m.label == EARLY_STOP_LABEL and m.variant == name]
    return VariantAnalysis(
        name=name,
        measured=stats,
        warmup=latency_stats(warmup_latencies, warmup_failed) if warmup_count else None,
        metrics=metric_stats(picked.metrics()),
        validity=validity,
        outliers=outliers,
        thermal=thermal,
        energy=energy,
        timeline=rows,
        hints=tuple(hints),
        t_start=t_start,
        t_end=t_end,
        drift=drift,
        early_stop=early,
        stopped_early=stopped[0] if stopped else "",
        timeline_window_s=timeline_window,
        latencies_s=start_order.latencies,
        pacing=summarize_pacing(_pacing_fold(table, table.variant_id(name)), data.header),
    )


_NOT = bytes.maketrans(b"\x00\x01", b"\x01\x00")


def _and(a: bytes | bytearray, b: bytes | bytearray) -> bytes:
    """Byte-wise AND of two flag strings (0 or 1 each), as one integer operation."""
    return (int.from_bytes(a, "little") & int.from_bytes(b, "little")).to_bytes(len(a), "little")


class _StartOrder(Sequence[int]):
    """The successful measured iterations in the order they ran: their latencies, and
    their indices as outlier labels (looked up only for the few flagged)."""

    def __init__(self, latencies: Sequence[float], rows: Callable[[], Sequence[int]],
                 index: Sequence[int]) -> None:  # fmt: skip
        self.latencies = latencies
        self._rows = rows
        self._index = index

    def __len__(self) -> int:
        return len(self.latencies)

    def __getitem__(self, position: int) -> int:  # type: ignore[override]
        return self._index[self._rows()[position]]


def _pacing_fold(table: IterationTable, variant_id: int) -> PacingFold | None:
    """The measured paced iterations of one variant, failed ones too (they missed)."""
    if not table.paced:
        return None
    fold = PacingFold()
    variant, warmup, start, end = table.variant, table.warmup, table.start, table.end
    for row in sorted(table.paced):
        if variant[row] == variant_id and not warmup[row]:
            lateness, missed = table.paced[row]
            fold.add(start[row], end[row], lateness, missed)
    return fold


class _VariantRows:
    """The rows of one variant: measured ones that succeeded in time order, warm-up ones.

    The selections are ``compress`` over the table's columns with flags made by
    byte and integer operations, which run in C: an hour of a busy run has
    900,000 rows. Row numbers are worked out only where an order must be
    restored or a row named.
    """

    def __init__(self, table: IterationTable, variant_id: int) -> None:
        self.table = table
        rows = len(table)
        not_warmup = bytes(table.warmup.translate(_NOT))
        if len(table.variants) == 1:
            measured, warmup_flags = not_warmup, bytes(table.warmup)
        else:
            mine = bytes(map(operator.eq, table.variant, itertools.repeat(variant_id)))
            measured = _and(mine, not_warmup)
            warmup_flags = _and(mine, bytes(table.warmup))
        ok_flags = _and(measured, bytes(table.ok))
        self._ok_flags, self._warmup_flags = ok_flags, warmup_flags
        self.warmup = array("q", itertools.compress(range(rows), warmup_flags))
        self.measured_failed = measured.count(1) - ok_flags.count(1)
        starts = array("d", itertools.compress(table.start, ok_flags))
        ends = array("d", itertools.compress(table.end, ok_flags))
        if self.measured_failed:
            self.t_start = min(itertools.compress(table.start, measured), default=None)
            self.t_end = max(itertools.compress(table.end, measured), default=None)
        else:
            self.t_start, self.t_end = min(starts, default=None), max(ends, default=None)
        latencies = array("d", itertools.compress(table.latency, ok_flags))
        # Each midpoint as table.midpoint computes it: (start + end) / 2, or the
        # iteration's time when its span is empty (the table lists those rows).
        midpoints = array("d", map(operator.truediv, map(operator.add, starts, ends),
                                   itertools.repeat(2)))  # fmt: skip
        self._rows: array[int] | None = None
        if table.times:
            for position, row in enumerate(self.rows()):
                if row in table.times:
                    midpoints[position] = table.midpoint(row)
        if any(map(operator.gt, midpoints, itertools.islice(midpoints, 1, None))):
            # Not in time order (several processes' iterations interleaved): sort the rows
            # by midpoint, stably, as the analysis reads them in time order.
            self._rows = array("q", sorted(self.rows(), key=table.midpoint))
            midpoints = array("d", map(table.midpoint, self._rows))
            starts = array("d", map(table.start.__getitem__, self._rows))
            latencies = array("d", map(table.latency.__getitem__, self._rows))
        self.midpoints, self.latencies, self._starts = midpoints, latencies, starts
        self._ends: array[float] | None = None if self._rows is not None else ends

    @property
    def starts(self) -> array[float]:
        """Starts of the successful measured iterations, in midpoint order."""
        return self._starts

    def ends(self) -> array[float]:
        """Ends of the successful measured iterations, in midpoint order."""
        if self._ends is None:
            self._ends = array("d", map(self.table.end.__getitem__, self.rows()))
        return self._ends

    def rows(self) -> array[int]:
        """Row numbers of the successful measured iterations, in midpoint order."""
        if self._rows is None:
            self._rows = array("q", itertools.compress(range(len(self.table)), self._ok_flags))
        return self._rows

    def in_start_order(self) -> _StartOrder:
        """The successful measured rows by start (then index): the order they ran in."""
        table = self.table
        starts = self._starts
        if all(map(operator.lt, starts, itertools.islice(starts, 1, None))):
            return _StartOrder(self.latencies, self.rows, table.index)
        start, index = table.start, table.index

        def key(row: int) -> tuple[float, int]:
            return start[row], index[row]

        rows = self.rows()
        if any(key(a) > key(b) for a, b in itertools.pairwise(rows)):
            ordered = array("q", sorted(rows, key=key))
            latencies = array("d", map(table.latency.__getitem__, ordered))
            return _StartOrder(latencies, lambda: ordered, index)
        return _StartOrder(self.latencies, self.rows, index)

    def warmup_latencies(self) -> tuple[array[float], int]:
        """Latencies of the successful warm-up iterations, and how many failed."""
        table = self.table
        flags = _and(self._warmup_flags, bytes(table.ok))
        return array("d", itertools.compress(table.latency, flags)), (
            self._warmup_flags.count(1) - flags.count(1)
        )

    def metrics(self) -> list[dict[str, float]]:
        """The metrics of the successful measured rows that have any, in midpoint order."""
        known = self.table.metrics
        if not known:
            return []
        return [known[row] for row in self.rows() if row in known]

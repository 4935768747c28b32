"""The schema of a ``SessionModel`` snapshot, and what restoring one checks.

A snapshot comes back from a keyframe line of a recording, which may be
damaged or written by anyone: before anything is rebuilt from it, msgspec
checks it against this schema in one pass (every field's type and range), and
the checks below make sure the rebuilt objects keep their invariants (a
series' points fit its capacity, run-length counts add up, the exact values
of a statistic are as many as its count and sorted, events are of the kind
their place needs). A snapshot that fails raises ``StateError``, and a reader
seeking to that keyframe falls back to an earlier one; nothing half-restored
is ever used.
"""

from __future__ import annotations

import itertools
import operator
from typing import Any

import msgspec

from qtop.events import (
    ChannelInfo,
    End,
    Event,
    EventDecodeError,
    Finite,
    Header,
    Int64,
    Iteration,
    Log,
    Marker,
    ProfileReport,
    event_from_dict,
)
from qtop.stats.pacing import PacingFold
from qtop.stats.quantiles import EXACT_LIMIT, LogSketch, RunningStats
from qtop.stats.series import Series, point_from_row

# The log-bucket keys of values a float can hold, from 1e-9 up (with room to spare).
SKETCH_KEYS = (-20_000, 400_000)
MAX_CAPACITY = 1 << 20


class StateError(ValueError):
    """A snapshot that cannot be restored: damaged, or not a snapshot at all."""


class _Row(msgspec.Struct, array_like=True, forbid_unknown_fields=True):
    """Base of the rows a snapshot writes as lists."""


class ChannelStatsRow(_Row):
    last: Finite | None
    last_t: Finite | None
    minimum: Finite | None
    maximum: Finite | None
    count: Int64
    unavailable: Int64


class PointRow(_Row):
    t: Finite
    mean: Finite
    low: Finite
    high: Finite
    count: Int64


class FillingRow(_Row):
    t_sum: Finite
    v_sum: Finite
    low: Finite
    high: Finite
    n: Int64


class CountRun(_Row):
    count: Int64
    repeat: Int64


class PhaseRow(_Row):
    phase: str
    variant: str
    planned_iterations: Int64 | None
    planned_duration_s: Finite | None
    started_t: Finite | None
    note: str


class GapRow(_Row):
    gap_from: Finite | None
    gap_to: Finite | None


class LinkRow(_Row):
    state: str
    detail: str
    disconnects: Int64
    reconnects: Int64
    gaps: list[GapRow]
    gap_seconds: Finite


class BucketRow(_Row):
    key: Int64
    count: Int64


class SketchState(msgspec.Struct):
    small: Int64 = 0
    buckets: list[BucketRow] = []


class StatsState(msgspec.Struct):
    count: Int64
    mean: Finite
    m2: Finite
    min: Finite | None = None
    max: Finite | None = None
    exact: list[Finite] | None = None
    sketch: SketchState = msgspec.field(default_factory=SketchState)


class SeriesState(msgspec.Struct):
    """A series as ``Series.to_dict`` writes it, or as a version 1 keyframe did."""

    capacity: Int64
    stride: Int64
    total: Int64
    t: list[Finite] | None = None
    mean: list[Finite] | None = None
    low: list[Finite] | None = None
    high: list[Finite] | None = None
    counts: list[CountRun] | None = None
    filling: FillingRow | None = None
    points: list[PointRow] | None = None
    pending: list[PointRow] | None = None


class PacingState(msgspec.Struct):
    """A paced run's fold as ``PacingFold.to_dict`` writes it."""

    count: Int64
    missed: Int64
    lateness: StatsState
    busy_s: Finite
    first_start: Finite | None = None
    last_start: Finite | None = None
    last_end: Finite | None = None


class ModelState(msgspec.Struct):
    """What ``SessionModel.snapshot`` writes (events stay dicts: checked by their own schema)."""

    channels: list[dict[str, Any]]
    channel_stats: dict[str, ChannelStatsRow]
    channel_series: dict[str, SeriesState]
    latency: dict[str, StatsState]
    latency_series: dict[str, SeriesState]
    metrics: dict[str, StatsState]
    iterations_done: dict[str, Int64]
    iterations_failed: dict[str, Int64]
    recent_failures: list[dict[str, Any]]
    phase: PhaseRow
    variants: list[str]
    logs: list[dict[str, Any]]
    log_count: Int64
    markers: list[dict[str, Any]]
    profile_reports: dict[str, dict[str, Any]]
    profile_report_count: Int64
    link: LinkRow
    sample_count: Int64
    missed_ticks: Int64
    event_count: Int64
    series_capacity: Int64 = 1024
    header: dict[str, Any] | None = None
    last_iteration: dict[str, Any] | None = None
    phase_history: list[PhaseRow] = []
    probe_warnings: list[str] = []
    last_sample_seq: Int64 | None = None
    t_first: Finite | None = None
    t_last: Finite | None = None
    end: dict[str, Any] | None = None
    pacing: dict[str, PacingState] = {}


def check_state(state: Any) -> ModelState:
    """The snapshot, typed; raises StateError when it is not one."""
    if not isinstance(state, dict):
        raise StateError(f"a model state must be a mapping, not {type(state).__name__}")
    try:
        checked = msgspec.convert(state, ModelState)
    except msgspec.ValidationError as exc:
        raise StateError(f"model state: {exc}") from None
    except RecursionError:
        raise StateError("model state: nested too deep") from None
    capacity = checked.series_capacity
    if capacity < 2 or capacity % 2 or capacity > MAX_CAPACITY:
        raise StateError(f"model state: a series capacity of {capacity}")
    return checked


def event_of(data: Any, kind: type[Event], where: str) -> Any:
    """The event a snapshot holds at ``where``, which must be of ``kind``."""
    try:
        event = event_from_dict(data)
    except (EventDecodeError, RecursionError) as exc:
        raise StateError(f"model state {where}: {exc}") from None
    if type(event) is not kind:
        raise StateError(f"model state {where}: a {event.kind} event where a {kind.kind} belongs")
    return event


def events_of(rows: list[dict[str, Any]], kind: type[Event], where: str) -> list[Any]:
    return [event_of(row, kind, where) for row in rows]


def channel_of(data: dict[str, Any]) -> ChannelInfo:
    try:
        return msgspec.convert(data, ChannelInfo)
    except msgspec.ValidationError as exc:
        raise StateError(f"model state channels: {exc}") from None


def optional_event(data: dict[str, Any] | None, kind: type[Event], where: str) -> Any:
    return event_of(data, kind, where) if data else None


def series_of(state: SeriesState, where: str) -> Series:
    """A series from its state, keeping the invariants ``Series.add`` relies on."""
    capacity, stride = state.capacity, state.stride
    if capacity < 2 or capacity % 2 or capacity > MAX_CAPACITY or stride < 1 or state.total < 0:
        raise StateError(f"series {where!r}: capacity {capacity}, stride {stride}")
    series = Series(capacity)
    series.stride, series.total = stride, state.total
    pending: Any
    if state.points is not None:
        rows = [(p.t, p.mean, p.low, p.high, p.count) for p in state.points]
        row = state.pending[0] if state.pending else None
        # Version 1 kept the filling point as means: its sums are these.
        pending = None
        if row is not None:
            pending = (row.t * row.count, row.mean * row.count, row.low, row.high, row.count)
    else:
        columns = (state.t, state.mean, state.low, state.high)
        runs = state.counts or []
        if any(column is None for column in columns):
            raise StateError(f"series {where!r}: a column is missing")
        size = len(state.t)  # type: ignore[arg-type]
        if any(len(column) != size for column in columns):  # type: ignore[arg-type]
            raise StateError(f"series {where!r}: columns of different lengths")
        if (
            any(run.count < 1 or run.repeat < 0 for run in runs)
            or sum(run.repeat for run in runs) != size
        ):
            raise StateError(f"series {where!r}: point counts that do not match its points")
        counts = itertools.chain.from_iterable(itertools.repeat(r.count, r.repeat) for r in runs)
        rows = list(zip(*columns, counts, strict=True))  # type: ignore[arg-type]
        filling = state.filling
        pending = None
        if filling is not None:
            pending = (filling.t_sum, filling.v_sum, filling.low, filling.high, filling.n)
    if len(rows) >= capacity or any(row[4] < 1 for row in rows):
        raise StateError(f"series {where!r}: {len(rows)} points for a capacity of {capacity}")
    series.points = list(map(point_from_row, rows))
    if pending:
        if pending[4] < 1:
            raise StateError(f"series {where!r}: a point being filled with {pending[4]} values")
        series._t_sum, series._v_sum, series._low, series._high, series._n = pending
    return series


def stats_of(state: StatsState, where: str) -> RunningStats:
    """Running statistics from their state (``RunningStats.to_dict``)."""
    low, high = SKETCH_KEYS
    exact = state.exact
    if state.count < 0 or state.sketch.small < 0:
        raise StateError(f"statistics {where!r}: a count of {state.count}")
    if exact is not None and (
        len(exact) != state.count
        or len(exact) > EXACT_LIMIT
        or any(map(operator.gt, exact, itertools.islice(exact, 1, None)))
    ):
        raise StateError(f"statistics {where!r}: its exact values do not match its count")
    if any(not low <= b.key <= high or b.count < 0 for b in state.sketch.buckets):
        raise StateError(f"statistics {where!r}: a sketch bucket out of range")
    stats = RunningStats()
    stats.count, stats.mean, stats._m2 = state.count, state.mean, state.m2
    stats.minimum = state.min if state.min is not None else stats.minimum
    stats.maximum = state.max if state.max is not None else stats.maximum
    stats.exact = None if exact is None else list(exact)
    sketch = LogSketch()
    sketch.small = state.sketch.small
    sketch.buckets = {b.key: b.count for b in state.sketch.buckets}
    sketch.count = sketch.small + sum(sketch.buckets.values())
    stats.sketch = sketch
    return stats


def pacing_of(state: PacingState, where: str) -> PacingFold:
    """A paced run's fold from its state (``PacingFold.to_dict``)."""
    known = (state.first_start, state.last_start, state.last_end)
    if not 0 <= state.missed <= state.count or (state.count and None in known):
        raise StateError(f"pacing {where!r}: {state.missed} missed of {state.count}")
    fold = PacingFold()
    fold.count, fold.missed, fold.busy_s = state.count, state.missed, state.busy_s
    fold.lateness = stats_of(state.lateness, where)
    if state.count:
        fold.first_start, fold.last_start, fold.last_end = known  # type: ignore[assignment]
    return fold


__all__ = [
    "End",
    "Header",
    "Iteration",
    "Log",
    "Marker",
    "ModelState",
    "ProfileReport",
    "StateError",
    "channel_of",
    "check_state",
    "event_of",
    "events_of",
    "optional_event",
    "pacing_of",
    "series_of",
    "stats_of",
]

"""SessionModel: the one reducer every consumer of the event stream uses.

Live sessions, replays, ``--headless`` runs and ``report`` all fold events into
this model with ``apply``, so they cannot disagree. Memory is bounded whatever
the session length: running statistics and downsampled series instead of raw
values (the raw values stay in the recording). ``snapshot`` and ``restore``
turn the whole state into plain JSON and back exactly, which is what keyframes
carry; applying a ``Keyframe`` event restores its state, so a replay that
seeks is fed the keyframe and the events after it and nothing else changes.
"""

from __future__ import annotations

import operator
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from qtop.events import ChannelInfo as ChannelInfoT
from qtop.events import Channels as ChannelsEvent
from qtop.events import (
    End,
    Event,
    Header,
    Iteration,
    IterationRun,
    Keyframe,
    Link,
    Log,
    LogRun,
    Marker,
    PhaseChange,
    ProfileReport,
    Sample,
)
from qtop.stats import snapshot
from qtop.stats.pacing import PacingFold
from qtop.stats.quantiles import RunningStats
from qtop.stats.series import Series
from qtop.stats.snapshot import ModelState

LOG_LINES_KEPT = 1000
_RUN_LENGTH = operator.attrgetter("n")
MARKERS_KEPT = 1000
PHASES_KEPT = 1000
FAILURES_KEPT = 50
GAPS_KEPT = 200
PROBE_WARNINGS_KEPT = 50
# The log stream of what the device probe found missing before the run (no
# thermal zone, no power source, ...): shown until the session ends.
PROBE_STREAM = "probe"


@dataclass(slots=True)
class ChannelStats:
    """Last, lowest and highest value of one channel, and how often it was missing."""

    last: float | None = None
    last_t: float | None = None
    minimum: float | None = None
    maximum: float | None = None
    count: int = 0
    unavailable: int = 0

    def add(self, t: float | None, value: float | None) -> None:
        if value is None:
            self.unavailable += 1
            return
        self.count += 1
        self.last, self.last_t = value, t
        self.minimum = value if self.minimum is None else min(self.minimum, value)
        self.maximum = value if self.maximum is None else max(self.maximum, value)

    def to_list(self) -> list[Any]:
        return [self.last, self.last_t, self.minimum, self.maximum, self.count, self.unavailable]

    @classmethod
    def from_list(cls, row: list[Any]) -> ChannelStats:
        return cls(*row)


@dataclass(slots=True)
class PhaseState:
    """Where the run is: phase, variant, and how far through the plan."""

    phase: str = "idle"
    variant: str = ""
    planned_iterations: int | None = None
    planned_duration_s: float | None = None
    started_t: float | None = None
    note: str = ""


@dataclass(slots=True)
class LinkState:
    """The link as the event stream last described it."""

    state: str = "connected"
    detail: str = ""
    disconnects: int = 0
    reconnects: int = 0
    gaps: list[tuple[float | None, float | None]] = field(default_factory=list)
    gap_seconds: float = 0.0


def _key(phase: str, variant: str) -> str:
    return f"{phase}|{variant}"


def split_key(key: str) -> tuple[str, str]:
    phase, _, variant = key.partition("|")
    return phase, variant


class SessionModel:
    """Everything the panes, the headless summary and ``report`` show, built from events."""

    def __init__(self, series_capacity: int = 1024, charts: bool = True) -> None:
        self.series_capacity = series_capacity
        # Without charts the downsampled series (what the panes draw and keyframes carry)
        # are not kept: a summary of a whole file reads none of them.
        self.charts = charts
        self.reset()
        self._handlers: dict[type[Event], Callable[[Any], None]] = {
            Header: self._apply_header,
            ChannelsEvent: self._apply_channels,
            Sample: self._apply_sample,
            Iteration: self._apply_iteration,
            PhaseChange: self._apply_phase,
            ProfileReport: self._apply_profile_report,
            Log: self._apply_log,
            Marker: self._apply_marker,
            Link: self._apply_link,
            Keyframe: self._apply_keyframe,
            End: self._apply_end,
        }

    def reset(self) -> None:
        self.header: Header | None = None
        self.channels: dict[str, ChannelInfoT] = {}
        self.channel_stats: dict[str, ChannelStats] = {}
        self.channel_series: dict[str, Series] = {}
        self.latency: dict[str, RunningStats] = {}
        self.latency_series: dict[str, Series] = {}
        self.metrics: dict[str, RunningStats] = {}
        # Paced runs: misses, lateness, rate and duty cycle per phase and variant.
        self.pacing: dict[str, PacingFold] = {}
        self.iterations_done: dict[str, int] = {}
        self.iterations_failed: dict[str, int] = {}
        self.recent_failures: deque[Iteration] = deque(maxlen=FAILURES_KEPT)
        self._last_iteration: Iteration | None = None
        # The run whose last event is the last iteration, until someone asks for it.
        self._last_run: IterationRun | None = None
        self.phase = PhaseState()
        self.phase_history: deque[PhaseState] = deque(maxlen=PHASES_KEPT)
        self.variants: list[str] = []
        self._logs: deque[Log] = deque(maxlen=LOG_LINES_KEPT)
        # Packed runs of output lines not yet turned into events (see ``logs``).
        self._log_runs: deque[LogRun] = deque()
        self._log_runs_lines = 0
        self.log_count = 0
        self.probe_warnings: list[str] = []
        self.markers: deque[Marker] = deque(maxlen=MARKERS_KEPT)
        self.profile_reports: dict[str, ProfileReport] = {}
        self.profile_report_count = 0
        self.link = LinkState()
        self.sample_count = 0
        self.last_sample_seq: int | None = None
        self.missed_ticks = 0
        self.t_first: float | None = None
        self.t_last: float | None = None
        self.event_count = 0
        self.end: End | None = None

    # --- the reducer --------------------------------------------------------

    def apply(self, event: Event) -> None:
        handler = self._handlers.get(type(event))
        if handler is None:
            return
        if not isinstance(event, Keyframe):
            self.event_count += 1
            if event.t is not None:
                if self.t_first is None or event.t < self.t_first:
                    self.t_first = event.t
                if self.t_last is None or event.t > self.t_last:
                    self.t_last = event.t
        handler(event)

    def apply_run(self, run: IterationRun | LogRun) -> None:
        """A run of events as a recording packs them: the same state as applying each."""
        if isinstance(run, LogRun):
            self._apply_log_run(run)
        else:
            self._apply_iteration_run(run)

    def apply_log_runs(self, runs: Sequence[LogRun]) -> None:
        """``apply_run`` of each run of output lines in turn (a fold of a whole file
        reads a line of output per iteration)."""
        lines = sum(map(_RUN_LENGTH, runs))
        self.event_count += lines
        self.log_count += lines
        # Only the runs that hold the last LOG_LINES_KEPT lines can still be read.
        first, tail = len(runs), 0
        while first and tail < LOG_LINES_KEPT:
            first -= 1
            tail += runs[first].n
        for run in runs[first:]:
            self._keep_log_run(run)

    def _apply_log_run(self, run: LogRun) -> None:
        self.event_count += run.n
        self.log_count += run.n
        self._keep_log_run(run)

    def _keep_log_run(self, run: LogRun) -> None:
        # Packed output lines have no device time, and only the last LOG_LINES_KEPT
        # are kept: runs wait whole until ``logs`` is read, so a fold of an hour
        # makes a thousand Log objects, not a million.
        runs = self._log_runs
        runs.append(run)
        self._log_runs_lines += run.n
        while self._log_runs_lines - runs[0].n >= LOG_LINES_KEPT:
            self._log_runs_lines -= runs.popleft().n

    @property
    def logs(self) -> deque[Log]:
        """The last LOG_LINES_KEPT log lines, oldest first."""
        runs = self._log_runs
        if runs:
            if self._log_runs_lines >= LOG_LINES_KEPT:
                self._logs.clear()
            skip = max(0, self._log_runs_lines - LOG_LINES_KEPT)
            for run in runs:
                first = min(skip, run.n)
                skip -= first
                self._logs.extend(run.event(k) for k in range(first, run.n))
            runs.clear()
            self._log_runs_lines = 0
        return self._logs

    def _apply_iteration_run(self, run: IterationRun) -> None:
        n = run.n
        self.event_count += n
        ends, latency, status, phases, variants = (
            run.ends, run.latency, run.status, run.phase, run.variant
        )  # fmt: skip
        first, last = min(ends), max(ends)
        if self.t_first is None or first < self.t_first:
            self.t_first = first
        if self.t_last is None or last > self.t_last:
            self.t_last = last
        if run.lateness is not None:
            self._apply_paced_run(run)
        if not any(status) and not any(run.metrics):
            self._apply_successful_run(run)
            return
        keys: dict[tuple[str, str], str] = {}
        # Latencies per key and points per variant go in one call each, in run order.
        latencies: dict[str, list[float]] = {}
        points: dict[str, tuple[list[float], list[float]]] = {}
        for k in range(n):
            phase, variant = phases[k], variants[k]
            key = keys.get((phase, variant))
            if key is None:
                key = keys[(phase, variant)] = _key(phase, variant)
                if variant not in self.variants:
                    self.variants.append(variant)
            if status[k] != 0:
                self.iterations_failed[key] = self.iterations_failed.get(key, 0) + 1
                self.recent_failures.append(run.event(k))
                continue
            self.iterations_done[key] = self.iterations_done.get(key, 0) + 1
            value = latency[k]
            found = latencies.get(key)
            if found is None:
                found = latencies[key] = []
                if key not in self.latency:
                    self.latency[key] = RunningStats()
            found.append(value)
            if phase == "measure" and self.charts:
                pair = points.get(variant)
                if pair is None:
                    pair = points[variant] = ([], [])
                    if variant not in self.latency_series:
                        self.latency_series[variant] = Series(self.series_capacity)
                pair[0].append(ends[k])
                pair[1].append(value)
            metrics = run.metrics[k]
            if metrics:
                for name, metric_value in metrics.items():
                    metric_key = f"{key}|{name}"
                    metric = self.metrics.get(metric_key)
                    if metric is None:
                        metric = self.metrics[metric_key] = RunningStats()
                    metric.add(metric_value)
        for key, values in latencies.items():
            self.latency[key].extend(values)
        for variant, (times, values) in points.items():
            self.latency_series[variant].extend(times, values)
        self.last_iteration_of(run)

    def _apply_paced_run(self, run: IterationRun) -> None:
        lateness, missed = run.lateness, run.missed
        assert lateness is not None
        groups: dict[str, list[int]] = {}
        for k in range(run.n):
            if lateness[k] is not None:
                groups.setdefault(_key(run.phase[k], run.variant[k]), []).append(k)
        for key, rows in groups.items():
            fold = self.pacing.get(key)
            if fold is None:
                fold = self.pacing[key] = PacingFold()
            fold.extend(
                [run.starts[k] for k in rows],
                [run.ends[k] for k in rows],
                [lateness[k] for k in rows],  # type: ignore[misc]
                [bool(missed[k]) if missed is not None else False for k in rows],
            )

    def _apply_successful_run(self, run: IterationRun) -> None:
        """A run in which every iteration succeeded and has no metrics (the usual one):
        stretches of one phase and variant go to their statistics in one call each."""
        phases, variants, ends, latency = run.phase, run.variant, run.ends, run.latency
        n = run.n
        first = 0
        while first < n:
            phase, variant = phases[first], variants[first]
            stop = first + 1
            while stop < n and phases[stop] == phase and variants[stop] == variant:
                stop += 1
            key = _key(phase, variant)
            if variant not in self.variants:
                self.variants.append(variant)
            self.iterations_done[key] = self.iterations_done.get(key, 0) + stop - first
            stats = self.latency.get(key)
            if stats is None:
                stats = self.latency[key] = RunningStats()
            stats.extend(latency[first:stop])
            if phase == "measure" and self.charts:
                series = self.latency_series.get(variant)
                if series is None:
                    series = self.latency_series[variant] = Series(self.series_capacity)
                series.extend(ends[first:stop], latency[first:stop])
            first = stop
        self.last_iteration_of(run)

    @property
    def last_iteration(self) -> Iteration | None:
        run = self._last_run
        if run is not None:
            # Made only when asked for: a fold of a whole file passes 45,000 runs.
            self._last_iteration = run.event(run.n - 1)
            self._last_run = None
        return self._last_iteration

    @last_iteration.setter
    def last_iteration(self, event: Iteration | None) -> None:
        self._last_iteration, self._last_run = event, None

    def last_iteration_of(self, run: IterationRun) -> None:
        """The last iteration is the last of ``run``."""
        self._last_run = run

    def _apply_header(self, event: Header) -> None:
        self.header = event

    def _apply_channels(self, event: ChannelsEvent) -> None:
        for channel in event.channels:
            self.channels[channel.id] = channel
            self.channel_stats.setdefault(channel.id, ChannelStats())

    def _apply_sample(self, event: Sample) -> None:
        self.sample_count += 1
        if self.last_sample_seq is not None and event.seq > self.last_sample_seq + 1:
            self.missed_ticks += event.seq - self.last_sample_seq - 1
        self.last_sample_seq = event.seq
        at = event.t
        t = at if self.charts else None
        channel_stats, channel_series = self.channel_stats, self.channel_series
        for channel_id, value in event.values.items():
            stats = channel_stats.get(channel_id)
            if stats is None:
                stats = channel_stats[channel_id] = ChannelStats()
            if value is None:
                stats.unavailable += 1
                continue
            # ChannelStats.add, written out: this runs for every value of every tick.
            stats.count += 1
            stats.last, stats.last_t = value, at
            if stats.minimum is None or value < stats.minimum:
                stats.minimum = value
            if stats.maximum is None or value > stats.maximum:
                stats.maximum = value
            if t is not None:
                series = channel_series.get(channel_id)
                if series is None:
                    series = channel_series[channel_id] = Series(self.series_capacity)
                series.add(t, value)

    def _apply_iteration(self, event: Iteration) -> None:
        key = _key(event.phase, event.variant)
        self.last_iteration = event
        if event.lateness_s is not None:
            fold = self.pacing.get(key)
            if fold is None:
                fold = self.pacing[key] = PacingFold()
            fold.add(event.start, event.end, event.lateness_s, bool(event.missed))
        if event.variant not in self.variants:
            self.variants.append(event.variant)
        if event.exit_status != 0:
            self.iterations_failed[key] = self.iterations_failed.get(key, 0) + 1
            self.recent_failures.append(event)
            return
        self.iterations_done[key] = self.iterations_done.get(key, 0) + 1
        stats = self.latency.get(key)
        if stats is None:
            stats = self.latency[key] = RunningStats()
        stats.add(event.latency_s)
        if event.phase == "measure" and self.charts:
            series = self.latency_series.get(event.variant)
            if series is None:
                series = self.latency_series[event.variant] = Series(self.series_capacity)
            series.add(event.end, event.latency_s)
        for name, value in event.metrics.items():
            metric_key = f"{key}|{name}"
            metric = self.metrics.get(metric_key)
            if metric is None:
                metric = self.metrics[metric_key] = RunningStats()
            metric.add(value)

    def _apply_phase(self, event: PhaseChange) -> None:
        self.phase = PhaseState(
            phase=event.phase,
            variant=event.variant,
            planned_iterations=event.planned_iterations,
            planned_duration_s=event.planned_duration_s,
            started_t=event.t,
            note=event.note,
        )
        self.phase_history.append(self.phase)
        if event.variant and event.variant not in self.variants:
            self.variants.append(event.variant)

    def _apply_profile_report(self, event: ProfileReport) -> None:
        self.profile_report_count += 1
        self.profile_reports[f"{event.source_kind}|{event.variant}"] = event

    def _apply_log(self, event: Log) -> None:
        self.log_count += 1
        self.logs.append(event)  # through the property: runs before it come first
        if (
            event.stream == PROBE_STREAM
            and event.level in ("warning", "error")
            and len(self.probe_warnings) < PROBE_WARNINGS_KEPT
            and event.text not in self.probe_warnings
        ):
            self.probe_warnings.append(event.text)

    def _apply_marker(self, event: Marker) -> None:
        self.markers.append(event)

    def _apply_link(self, event: Link) -> None:
        link = self.link
        link.state, link.detail = event.state, event.detail
        if event.state == "disconnected":
            link.disconnects += 1
        elif event.state == "reconnected":
            link.reconnects += 1
        elif event.state == "gap":
            if len(link.gaps) < GAPS_KEPT:
                link.gaps.append((event.gap_from, event.gap_to))
            if event.gap_from is not None and event.gap_to is not None:
                link.gap_seconds += max(0.0, event.gap_to - event.gap_from)

    def _apply_keyframe(self, event: Keyframe) -> None:
        self.restore(event.state)

    def _apply_end(self, event: End) -> None:
        self.end = event

    # --- questions the panes and the report ask -----------------------------

    def latency_stats(self, phase: str = "measure", variant: str | None = None) -> RunningStats:
        """Latency of one phase of one variant (``None``: the current variant)."""
        variant = self.phase.variant if variant is None else variant
        return self.latency.get(_key(phase, variant)) or RunningStats()

    def pacing_fold(self, phase: str = "measure", variant: str = "") -> PacingFold | None:
        return self.pacing.get(_key(phase, variant))

    def done(self, phase: str, variant: str | None = None) -> int:
        variant = self.phase.variant if variant is None else variant
        return self.iterations_done.get(_key(phase, variant), 0)

    def failed(self, phase: str, variant: str | None = None) -> int:
        variant = self.phase.variant if variant is None else variant
        return self.iterations_failed.get(_key(phase, variant), 0)

    def metric_stats(
        self, name: str, phase: str = "measure", variant: str | None = None
    ) -> RunningStats | None:
        variant = self.phase.variant if variant is None else variant
        return self.metrics.get(f"{_key(phase, variant)}|{name}")

    def channels_of_kind(self, kind: str) -> list[ChannelInfoT]:
        return [c for c in self.channels.values() if c.kind == kind]

    def last_value(self, channel_id: str) -> float | None:
        stats = self.channel_stats.get(channel_id)
        return stats.last if stats else None

    def hottest_zone(self, prefix: str = "") -> tuple[str, float] | None:
        """The temperature channel with the highest last value, among ids containing prefix."""
        best: tuple[str, float] | None = None
        for channel in self.channels_of_kind("temperature"):
            if prefix and prefix not in channel.id:
                continue
            value = self.last_value(channel.id)
            if value is not None and (best is None or value > best[1]):
                best = (channel.id, value)
        return best

    def phase_span(
        self, phase: str, before_t: float, variant: str | None = None
    ) -> tuple[float, float] | None:
        """(start, end) of the last ``phase`` that started before ``before_t``.

        Energy net of idle needs the idle baseline measured before the run; the
        phase ends where the next one starts (or at the last event so far).
        """
        history = list(self.phase_history)
        span = None
        for position, entry in enumerate(history):
            if entry.phase != phase or entry.started_t is None or entry.started_t >= before_t:
                continue
            if variant is not None and entry.variant != variant:
                continue
            following = history[position + 1].started_t if position + 1 < len(history) else None
            end = following if following is not None else self.t_last
            if end is not None and end > entry.started_t:
                span = (entry.started_t, min(end, before_t))
        return span

    @property
    def duration_s(self) -> float:
        if self.t_first is None or self.t_last is None:
            return 0.0
        return self.t_last - self.t_first

    # --- snapshots ----------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """The whole state as plain JSON types; ``restore`` turns it back exactly."""
        return {
            "series_capacity": self.series_capacity,
            "header": self.header.to_dict() if self.header else None,
            "channels": [_channel_dict(c) for c in self.channels.values()],
            "channel_stats": {k: v.to_list() for k, v in self.channel_stats.items()},
            "channel_series": {k: v.to_dict() for k, v in self.channel_series.items()},
            "latency": {k: v.to_dict() for k, v in self.latency.items()},
            "latency_series": {k: v.to_dict() for k, v in self.latency_series.items()},
            "metrics": {k: v.to_dict() for k, v in self.metrics.items()},
            "pacing": {k: v.to_dict() for k, v in self.pacing.items()},
            "iterations_done": dict(self.iterations_done),
            "iterations_failed": dict(self.iterations_failed),
            "recent_failures": [e.to_dict() for e in self.recent_failures],
            "last_iteration": self.last_iteration.to_dict() if self.last_iteration else None,
            "phase": _phase_row(self.phase),
            "phase_history": [_phase_row(entry) for entry in self.phase_history],
            "variants": list(self.variants),
            "logs": [e.to_dict() for e in self.logs],
            "log_count": self.log_count,
            "probe_warnings": list(self.probe_warnings),
            "markers": [e.to_dict() for e in self.markers],
            "profile_reports": {k: v.to_dict() for k, v in self.profile_reports.items()},
            "profile_report_count": self.profile_report_count,
            "link": [
                self.link.state,
                self.link.detail,
                self.link.disconnects,
                self.link.reconnects,
                [list(g) for g in self.link.gaps],
                self.link.gap_seconds,
            ],
            "sample_count": self.sample_count,
            "last_sample_seq": self.last_sample_seq,
            "missed_ticks": self.missed_ticks,
            "t_first": self.t_first,
            "t_last": self.t_last,
            "event_count": self.event_count,
            "end": self.end.to_dict() if self.end else None,
        }

    def restore(self, state: dict[str, Any]) -> None:
        """Replace the whole state with a snapshot (an empty dict means a fresh model).

        The snapshot is checked first (``qtop.stats.snapshot``): a damaged one
        raises ``StateError`` and leaves the model as it was.
        """
        if not state:
            self.reset()
            return
        checked = snapshot.check_state(state)
        # Rebuilt aside and taken over whole: a check that fails half-way changes nothing.
        restored = SessionModel(checked.series_capacity, self.charts)
        restored._restore_checked(checked)
        for name, value in vars(restored).items():
            if name != "_handlers":
                setattr(self, name, value)

    def _restore_checked(self, state: ModelState) -> None:
        self.header = snapshot.optional_event(state.header, Header, "header")
        channels = [snapshot.channel_of(c) for c in state.channels]
        self.channels = {channel.id: channel for channel in channels}
        self.channel_stats = {
            k: ChannelStats(v.last, v.last_t, v.minimum, v.maximum, v.count, v.unavailable)
            for k, v in state.channel_stats.items()
        }
        self.channel_series = {k: snapshot.series_of(v, k) for k, v in state.channel_series.items()}
        self.latency = {k: snapshot.stats_of(v, k) for k, v in state.latency.items()}
        self.latency_series = {k: snapshot.series_of(v, k) for k, v in state.latency_series.items()}
        self.metrics = {k: snapshot.stats_of(v, k) for k, v in state.metrics.items()}
        self.pacing = {k: snapshot.pacing_of(v, k) for k, v in state.pacing.items()}
        self.iterations_done = dict(state.iterations_done)
        self.iterations_failed = dict(state.iterations_failed)
        self.recent_failures.extend(
            snapshot.events_of(state.recent_failures, Iteration, "recent_failures")
        )
        self.last_iteration = snapshot.optional_event(
            state.last_iteration, Iteration, "last_iteration"
        )
        self.phase = PhaseState(*_phase_fields(state.phase))
        self.phase_history.extend(PhaseState(*_phase_fields(row)) for row in state.phase_history)
        self.variants = list(state.variants)
        self._logs.extend(snapshot.events_of(state.logs, Log, "logs"))
        self.log_count = state.log_count
        self.probe_warnings = list(state.probe_warnings[:PROBE_WARNINGS_KEPT])
        self.markers.extend(snapshot.events_of(state.markers, Marker, "markers"))
        self.profile_reports = {
            k: snapshot.event_of(v, ProfileReport, "profile_reports")
            for k, v in state.profile_reports.items()
        }
        self.profile_report_count = state.profile_report_count
        link = state.link
        self.link = LinkState(
            link.state,
            link.detail,
            link.disconnects,
            link.reconnects,
            [(gap.gap_from, gap.gap_to) for gap in link.gaps[:GAPS_KEPT]],
            link.gap_seconds,
        )
        self.sample_count = state.sample_count
        self.last_sample_seq = state.last_sample_seq
        self.missed_ticks = state.missed_ticks
        self.t_first = state.t_first
        self.t_last = state.t_last
        self.event_count = state.event_count
        self.end = snapshot.optional_event(state.end, End, "end")


def _phase_fields(row: snapshot.PhaseRow) -> tuple[Any, ...]:
    return (row.phase, row.variant, row.planned_iterations, row.planned_duration_s,
            row.started_t, row.note)  # fmt: skip


def _phase_row(phase: PhaseState) -> list[Any]:
    return [
        phase.phase,
        phase.variant,
        phase.planned_iterations,
        phase.planned_duration_s,
        phase.started_t,
        phase.note,
    ]


def _channel_dict(channel: ChannelInfoT) -> dict[str, Any]:
    return ChannelsEvent(channels=(channel,)).to_dict()["channels"][0]

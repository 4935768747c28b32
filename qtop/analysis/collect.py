"""What the analysis reads of a session, gathered in one pass over its events.

``Collector.add`` takes events one at a time (``add_run`` takes a whole run of
iterations or log lines as a recording packs them), so ``report`` folds a
recording into the model and the analysis in the same single pass without
holding a list of every event. Iterations are kept as columns of machine
numbers (``IterationTable``: about 35 bytes each instead of several hundred
for an ``Iteration`` object), so an hour of a busy run stays in tens of MB.
"""

from __future__ import annotations

import itertools
import math
import operator
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from qtop.analysis.series import ChannelSeries
from qtop.events import (
    ChannelInfo,
    Channels,
    Event,
    Header,
    Iteration,
    IterationRun,
    Log,
    LogRun,
    Marker,
    PhaseChange,
    Sample,
)

TIMER_OVERHEAD_PREFIX = "timer_overhead_s="
_FLOAT_OR_NONE = frozenset({float, type(None)})


class IterationTable:
    """Iterations as columns; ``row`` numbers are the order they arrived in."""

    __slots__ = ("_variant_ids", "end", "index", "latency", "metrics", "ok", "paced", "start",
                 "times", "variant", "variants", "warmup")  # fmt: skip

    def __init__(self) -> None:
        self.variants: list[str] = []
        self._variant_ids: dict[str, int] = {}
        self.variant = array("I")
        self.warmup = bytearray()
        self.ok = bytearray()
        self.start = array("d")
        self.end = array("d")
        # Device times, only of rows whose span is empty (the rest sit at their midpoint).
        self.times: dict[int, float | None] = {}
        self.latency = array("d")
        self.index = array("q")
        self.metrics: dict[int, dict[str, float]] = {}
        # Paced rows only (few runs are paced): row -> (lateness, missed).
        self.paced: dict[int, tuple[float, bool]] = {}

    def __len__(self) -> int:
        return len(self.latency)

    def variant_id(self, name: str) -> int:
        known = self._variant_ids.get(name)
        if known is None:
            known = self._variant_ids[name] = len(self.variants)
            self.variants.append(name)
        return known

    def add(self, it: Iteration) -> None:
        if it.metrics:
            self.metrics[len(self.latency)] = it.metrics
        if not it.end > it.start:
            self.times[len(self.latency)] = it.t
        if it.lateness_s is not None:
            self.paced[len(self.latency)] = (it.lateness_s, bool(it.missed))
        self.variant.append(self.variant_id(it.variant))
        self.warmup.append(it.phase == "warmup")
        self.ok.append(it.exit_status == 0)
        self.start.append(it.start)
        self.end.append(it.end)
        self.latency.append(it.latency_s)
        self.index.append(it.index)

    def add_run(self, run: IterationRun) -> None:
        # map() with operator functions: these loops run in C, for 900,000 iterations an hour.
        base, n = len(self.latency), run.n
        if any(run.metrics):
            for k, metrics in enumerate(run.metrics):
                if metrics:
                    self.metrics[base + k] = metrics
        if run.lateness is not None:
            missed = run.missed if run.missed is not None else [False] * n
            for k, (lateness, miss) in enumerate(zip(run.lateness, missed, strict=True)):
                if lateness is not None:
                    self.paced[base + k] = (lateness, bool(miss))
        variants = run.variant
        if variants.count(variants[0]) == n:
            self.variant.extend(itertools.repeat(self.variant_id(variants[0]), n))
        else:
            self.variant.extend(map(self.variant_id, variants))
        self.warmup.extend(map(operator.eq, run.phase, itertools.repeat("warmup")))
        self.ok.extend(map(operator.not_, run.status))
        if not all(map(operator.gt, run.ends, run.starts)):
            for k, (start, end) in enumerate(zip(run.starts, run.ends, strict=True)):
                if not end > start:
                    self.times[base + k] = end
        self.start.extend(run.starts)
        self.end.extend(run.ends)
        self.latency.extend(run.latency)
        self.index.extend(run.index)

    def add_runs(self, runs: Sequence[IterationRun]) -> None:
        """``add_run`` of each run in turn, with each column extended once."""
        if len(runs) == 1 or any(run.lateness is not None for run in runs):
            # Paced runs (few) keep their lateness per row: add_run knows how.
            for run in runs:
                self.add_run(run)
            return
        chain = itertools.chain.from_iterable
        if not all(run.plain for run in runs) and any(any(run.metrics) for run in runs):
            base = len(self.latency)
            for run in runs:
                if any(run.metrics):
                    for k, metrics in enumerate(run.metrics):
                        if metrics:
                            self.metrics[base + k] = metrics
                base += run.n
        variants = {run.variant[0] for run in runs}
        if len(variants) == 1 and all(run.variant.count(run.variant[0]) == run.n for run in runs):
            total = sum(run.n for run in runs)
            self.variant.extend(array("I", [self.variant_id(variants.pop())]) * total)
        else:
            self.variant.extend(map(self.variant_id, chain(run.variant for run in runs)))
        self.warmup.extend(
            map(operator.eq, chain(run.phase for run in runs), itertools.repeat("warmup"))
        )
        self.ok.extend(map(operator.not_, chain(run.status for run in runs)))
        base = len(self.latency)
        starts = list(chain(run.starts for run in runs))
        ends = list(chain(run.ends for run in runs))
        if not all(map(operator.gt, ends, starts)):
            for k, (start, end) in enumerate(zip(starts, ends, strict=True)):
                if not end > start:
                    self.times[base + k] = end
        # fromlist: a list goes in item by item in C, without the iterator protocol.
        self.start.fromlist(starts)
        self.end.fromlist(ends)
        self.latency.fromlist(list(chain(run.latency for run in runs)))
        self.index.fromlist(list(chain(run.index for run in runs)))

    def midpoint(self, row: int) -> float:
        """Where the iteration sits in time: the middle of its span (or its time)."""
        start, end = self.start[row], self.end[row]
        if end > start:
            return (start + end) / 2
        t = self.times.get(row)
        return end if t is None else t


@dataclass(slots=True)
class Collected:
    """The parts of the event stream the analysis reads."""

    header: Header | None = None
    channels: dict[str, ChannelInfo] = field(default_factory=dict)
    series: dict[str, ChannelSeries] = field(default_factory=dict)
    iterations: IterationTable = field(default_factory=IterationTable)
    phases: list[PhaseChange] = field(default_factory=list)
    markers: list[Marker] = field(default_factory=list)
    timer_overhead_s: float | None = None
    t_last: float | None = None


class Collector:
    """Gathers ``Collected`` from events, one at a time or a packed run at a time."""

    def __init__(self) -> None:
        self.data = Collected()

    def add(self, event: Event) -> None:
        data = self.data
        t = event.t
        if t is not None and (data.t_last is None or t > data.t_last):
            data.t_last = t
        kind = type(event)
        if kind is Sample:
            self._sample(event)  # type: ignore[arg-type]
        elif kind is Iteration:
            data.iterations.add(event)  # type: ignore[arg-type]
        elif kind is Log:
            self._log(event)  # type: ignore[arg-type]
        elif kind is PhaseChange:
            data.phases.append(event)  # type: ignore[arg-type]
        elif kind is Marker:
            data.markers.append(event)  # type: ignore[arg-type]
        elif kind is Channels:
            for channel in event.channels:  # type: ignore[attr-defined]
                data.channels[channel.id] = channel
        elif kind is Header:
            data.header = event  # type: ignore[assignment]

    def add_run(self, run: IterationRun | LogRun) -> None:
        if isinstance(run, IterationRun):
            ends = run.ends
            latest = max(ends)
            if self.data.t_last is None or latest > self.data.t_last:
                self.data.t_last = latest
            self.data.iterations.add_run(run)
            return
        # Packed log runs are the command's stdout: never the agent's timer line.

    def add_runs(self, runs: Sequence[IterationRun]) -> None:
        """``add_run`` of each run of iterations in turn."""
        if not runs:
            return
        latest = max(max(run.ends) for run in runs)
        if self.data.t_last is None or latest > self.data.t_last:
            self.data.t_last = latest
        self.data.iterations.add_runs(runs)

    def add_samples(self, samples: Sequence[Sample]) -> None:
        """``add`` of each sample in turn: each channel's points extended once."""
        if not samples:
            return
        data = self.data
        times = [sample.t for sample in samples]
        timed = [t for t in times if t is not None]
        if timed:
            latest = max(timed)
            if data.t_last is None or latest > data.t_last:
                data.t_last = latest
        keys = tuple(samples[0].values)
        if len(timed) < len(times) or not all(tuple(s.values) == keys for s in samples):
            for sample in samples:
                self._sample(sample)
            return
        columns = zip(*(sample.values.values() for sample in samples), strict=True)
        series = data.series
        for channel_id, column in zip(keys, columns, strict=True):
            kinds = set(map(type, column))
            if not kinds <= _FLOAT_OR_NONE:
                for t, value in zip(times, column, strict=True):
                    self._sample(Sample(t=t, values={channel_id: value}))
                continue
            if type(None) in kinds:
                present = list(map(operator.is_not, column, itertools.repeat(None)))
                at, values = itertools.compress(times, present), itertools.compress(column, present)
                if not any(present):
                    continue
            else:
                at, values = times, column  # type: ignore[assignment]
            target = series.get(channel_id)
            if target is None:
                target = series[channel_id] = ChannelSeries(array("d"), array("d"))  # type: ignore[arg-type]
            target.times.extend(at)  # type: ignore[attr-defined, arg-type]
            target.values.extend(values)  # type: ignore[attr-defined]

    def _sample(self, event: Sample) -> None:
        t = event.t
        if t is None:
            return
        series = self.data.series
        for channel_id, value in event.values.items():
            if type(value) is not float and (
                value is None or isinstance(value, bool) or not isinstance(value, int | float)
            ):
                continue
            target = series.get(channel_id)
            if target is None:
                # Arrays of machine numbers: an hour of 24 channels at 10 Hz is 14 MB, not 35.
                target = series[channel_id] = ChannelSeries(array("d"), array("d"))  # type: ignore[arg-type]
            target.times.append(t)
            target.values.append(float(value))

    def _log(self, event: Log) -> None:
        overhead = timer_overhead(event)
        if overhead is not None:
            self.data.timer_overhead_s = overhead

    def finish(self) -> Collected:
        """The collected data, with every channel's points in time order."""
        for target in self.data.series.values():
            times = target.times
            if any(map(operator.gt, times, itertools.islice(times, 1, None))):
                pairs = sorted(zip(target.times, target.values, strict=True))
                target.times = [t for t, _ in pairs]
                target.values = [v for _, v in pairs]
        return self.data


def collect(events: Iterable[Event]) -> Collected:
    collector = Collector()
    for event in events:
        collector.add(event)
    return collector.finish()


def timer_overhead(event: Log) -> float | None:
    """The device timer's overhead from the agent's calibration line, if this is it."""
    if event.stream != "agent" or not event.text.startswith(TIMER_OVERHEAD_PREFIX):
        return None
    try:
        value = float(event.text[len(TIMER_OVERHEAD_PREFIX) :].split()[0])
    except (ValueError, IndexError):
        return None
    return value if math.isfinite(value) and value >= 0 else None

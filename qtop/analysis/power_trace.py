"""Power over device time, from whichever source a board has, and its energy over a window.

Two kinds of source:

- a *reading* (``power_now``, ``current_now`` x ``voltage_now``, a meter's
  ``power*_input``) is what the sensor showed when it last updated. A fuel
  gauge holds it until its next update, so the trace is a step function (zero-
  order hold): every sample holds until the next one, and a window is
  integrated from the readings held inside it, never by drawing a line towards
  a later reading (which would lend an idle window the first busy reading);
- a *counter* (ODPM rail energy, the battery's ``charge_counter``) integrates
  on the device. The energy of a window is the counter's difference between
  its first and last update inside the window, over that stretch of time: no
  update from before or after the window is used.

Either way a gap in the data (a lost link, an unreadable sensor) splits the
trace, and nothing is integrated across it.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from qtop.analysis.numeric import fsum, median
from qtop.analysis.power_source import (
    COUNTER_SCALE,
    METHOD_CURRENT_VOLTAGE,
    METHOD_ENERGY_COUNTERS,
    METHOD_POWER,
    UNIT_SCALE,
    PowerSource,
)
from qtop.analysis.series import ChannelSeries, value_changes
from qtop.events import ChannelInfo

GAP_FACTOR = 3.0
# A monitor whose counters trail the ticks by more than this, at times, has no usable clock.
MAX_COUNTER_LAG_S = 5.0


@dataclass(slots=True)
class PowerTrace:
    """Contiguous runs of (time, value) points; a gap in the data splits runs.

    Values are watts held until the next point, or, for a counter source
    (``cumulative``), joules accumulated on the device since some origin.
    """

    source: PowerSource
    segments: list[tuple[list[float], list[float]]]
    sample_interval_s: float | None
    refresh_period_s: float | None
    cumulative: bool = False

    def integrate(self, t_from: float, t_to: float) -> tuple[float, float]:
        """(joules, seconds covered) of the trace within [t_from, t_to]."""
        energy = covered = 0.0
        for times, values in self.segments:
            start, end = max(t_from, times[0]), min(t_to, times[-1])
            if end <= start:
                continue
            if self.cumulative:
                power = _counter_power(times, values, start, end)
                if power is None:
                    continue
                energy += power * (end - start)
            else:
                energy += _held_integral(times, values, start, end)
            covered += end - start
        return energy, covered

    def readings(self, t_from: float, t_to: float) -> int:
        """How many real sensor updates fall within [t_from, t_to].

        A counter changes at every update, so its changes are counted. A
        reading may repeat across updates (a steady draw), so there the
        covered time is divided by the sensor's refresh period (the sampling
        interval when the reading never changed often enough to estimate it).
        """
        if self.cumulative:
            return sum(len(value_changes(t, v, t_from, t_to)) for t, v in self.segments)
        period = max(self.refresh_period_s or 0.0, self.sample_interval_s or 0.0)
        if period <= 0:
            return sum(
                bisect.bisect_right(t, t_to) - bisect.bisect_left(t, t_from)
                for t, _ in self.segments
            )
        return math.floor(self.covered(t_from, t_to) / period + 1e-6)

    def readings_within(self, spans: Sequence[tuple[float, float]]) -> int:
        """``readings`` over several disjoint spans: one refresh period is counted across
        them, so spans each shorter than a period still add up to the updates they hold."""
        period = max(self.refresh_period_s or 0.0, self.sample_interval_s or 0.0)
        if self.cumulative or period <= 0:
            return sum(self.readings(a, b) for a, b in spans)
        return math.floor(sum(self.covered(a, b) for a, b in spans) / period + 1e-6)

    def covered(self, t_from: float, t_to: float) -> float:
        total = 0.0
        for times, _ in self.segments:
            total += max(0.0, min(t_to, times[-1]) - max(t_from, times[0]))
        return total

    def power_points(self) -> list[tuple[float, float]]:
        """(time, watts): the readings, or a counter's mean power between its updates."""
        if not self.cumulative:
            return [
                (t, w) for times, watts in self.segments for t, w in zip(times, watts, strict=True)
            ]
        points = []
        for times, joules in self.segments:
            changes = value_changes(times, joules, times[0], times[-1])
            for a, b in itertools.pairwise(changes):
                if times[b] > times[a]:
                    points.append((times[b], (joules[b] - joules[a]) / (times[b] - times[a])))
        return points


def _held_integral(
    times: Sequence[float], watts: Sequence[float], start: float, end: float
) -> float:
    """Integral over [start, end] of the samples, each held until the next one."""
    k = bisect.bisect_right(times, start) - 1
    total = 0.0
    t = start
    while t < end:
        following = min(times[k + 1], end)
        total += watts[k] * (following - t)
        t = following
        k += 1
    return total


def _counter_power(
    times: Sequence[float], joules: Sequence[float], start: float, end: float
) -> float | None:
    """Mean power between the first and the last counter update inside [start, end]."""
    changes = value_changes(times, joules, start, end)
    if len(changes) < 2:
        return None
    first, last = changes[0], changes[-1]
    # Counters that moved while their monitor's clock stood still say nothing about time.
    if times[last] <= times[first]:
        return None
    return (joules[last] - joules[first]) / (times[last] - times[first])


# --- building a trace ---------------------------------------------------------


def build_power_trace(
    source: PowerSource,
    channels: Mapping[str, ChannelInfo],
    series: Mapping[str, ChannelSeries],
) -> PowerTrace:
    """The source's power (or cumulative energy) over device time, split at gaps."""
    stamps: list[float] | None = None
    if source.method == METHOD_POWER:
        data = series[source.channels[0]]
        scale = UNIT_SCALE[channels[source.channels[0]].unit]
        times, values = list(data.times), [abs(v) * scale for v in data.values]
    elif source.method == METHOD_CURRENT_VOLTAGE:
        times, values = _current_times_voltage(source, channels, series)
    elif source.method == METHOD_ENERGY_COUNTERS:
        times, stamps, values = _summed_counters(source, channels, series)
    else:
        times, values = _charge_energy(source, channels, series)
    interval = ChannelSeries(times, values).median_interval()
    # An ODPM counter only grows, so a fall is a reset; charge-derived energy falls when charging.
    resets = source.method == METHOD_ENERGY_COUNTERS
    segments = _split_at_gaps(times, values, interval, resets, stamps)
    refresh = _refresh_of_segments(segments)
    return PowerTrace(source, segments, interval, refresh, source.is_counter)


def _current_times_voltage(
    source: PowerSource, channels: Mapping[str, ChannelInfo], series: Mapping[str, ChannelSeries]
) -> tuple[list[float], list[float]]:
    current, voltage = (series[c] for c in source.channels)
    i_scale, v_scale = (UNIT_SCALE[channels[c].unit] for c in source.channels)
    volts_at = dict(zip(voltage.times, voltage.values, strict=True))
    times, watts = [], []
    for t, amps in zip(current.times, current.values, strict=True):
        volts = volts_at.get(t)
        if volts is not None:
            times.append(t)
            watts.append(abs(amps) * i_scale * abs(volts) * v_scale)
    return times, watts


def _summed_counters(
    source: PowerSource, channels: Mapping[str, ChannelInfo], series: Mapping[str, ChannelSeries]
) -> tuple[list[float], list[float], list[float]]:
    """Ticks at which every rail was read, when the counters were taken, and their joules.

    A monitor stamps its counters with its own clock (the ``t=`` line, kept as
    an ``energy_time`` channel); on the tick's time line that is its stamp plus
    the smallest lag seen in the session (the freshest read). Without a usable
    stamp the tick's own time stands in, which makes a counter that updates
    between reads look up to one tick late.
    """
    maps = [dict(zip(series[c].times, series[c].values, strict=True)) for c in source.channels]
    scales = [COUNTER_SCALE[channels[c].unit] for c in source.channels]
    clocks = _monitor_clocks(source.channels, channels, series)
    ticks: list[float] = []
    stamps: list[float] = []
    joules: list[float] = []
    for t in series[source.channels[0]].times:
        parts = [m[t] * scale for m, scale in zip(maps, scales, strict=True) if t in m]
        if len(parts) != len(maps):
            continue
        taken = [clock[t] + lag for clock, lag in clocks if t in clock]
        stamp = fsum(taken) / len(taken) if clocks and len(taken) == len(clocks) else t
        ticks.append(t)
        # Never earlier than the stamp before it, even where a tick fell back to its own time.
        stamps.append(max(stamp, stamps[-1]) if stamps else stamp)
        joules.append(fsum(parts))
    return ticks, stamps, joules


def _monitor_clocks(
    rails: Sequence[str], channels: Mapping[str, ChannelInfo], series: Mapping[str, ChannelSeries]
) -> list[tuple[dict[float, float], float]]:
    """Per monitor of these rails: its counter times by tick, and their lag behind the ticks.

    Empty when any monitor has no usable clock (missing, running backwards, or
    lagging by more than ``MAX_COUNTER_LAG_S`` at times): then ticks are used.
    """
    clocks = []
    for monitor in sorted({rail.rsplit("/", 1)[0] for rail in rails}):
        clock_id = next(
            (
                c.id
                for c in channels.values()
                if c.kind == "energy_time" and c.id.rsplit("/", 1)[0] == monitor
            ),
            None,
        )
        data = series.get(clock_id) if clock_id else None
        if data is None or len(data) < 2:
            return []
        if any(b < a for a, b in itertools.pairwise(data.values)):
            return []
        lags = [t - stamp for t, stamp in zip(data.times, data.values, strict=True)]
        if max(lags) - min(lags) > MAX_COUNTER_LAG_S:
            return []
        clocks.append((dict(zip(data.times, data.values, strict=True)), min(lags)))
    return clocks


def _charge_energy(
    source: PowerSource, channels: Mapping[str, ChannelInfo], series: Mapping[str, ChannelSeries]
) -> tuple[list[float], list[float]]:
    """Energy drawn from the battery, accumulated from its charge counter.

    Each step of the counter is priced at the mean voltage held since the step
    before it: E = sum(-dQ x V). Charge flowing in (charging) counts negative.
    """
    charge_id, voltage_id = source.channels
    charge, voltage = series[charge_id], series[voltage_id]
    q_scale = COUNTER_SCALE[channels[charge_id].unit]
    v_scale = UNIT_SCALE[channels[voltage_id].unit]
    joules: list[float] = []
    total = 0.0
    since: float | None = None
    for i, (t, q) in enumerate(zip(charge.times, charge.values, strict=True)):
        if i > 0 and q != charge.values[i - 1]:
            volts = _mean_held(voltage, charge.times[i - 1] if since is None else since, t)
            if volts is not None:
                total += (charge.values[i - 1] - q) * q_scale * abs(volts) * v_scale
            since = t
        joules.append(total)
    return list(charge.times), joules


def _mean_held(data: ChannelSeries, t_from: float, t_to: float) -> float | None:
    """Time-weighted mean over [t_from, t_to] of a series whose samples hold until the next."""
    lo, hi = data.index_range(t_from, t_to)
    start = max(0, lo - 1)
    if hi <= start or data.times[start] > t_to:
        return None
    points = list(zip(data.times[start:hi], data.values[start:hi], strict=True))
    total = 0.0
    for k, (t, value) in enumerate(points):
        begin = max(t, t_from)
        finish = points[k + 1][0] if k + 1 < len(points) else t_to
        if finish > begin:
            total += value * (finish - begin)
    span = t_to - max(t_from, points[0][0])
    return total / span if span > 0 else points[-1][1]


def _split_at_gaps(
    times: list[float],
    values: list[float],
    interval: float | None,
    split_on_fall: bool,
    stamps: list[float] | None = None,
) -> list[tuple[list[float], list[float]]]:
    """Runs without a gap in ``times`` (and, for a counter that only grows, without a reset).

    With ``stamps`` (when each value was really taken), the runs carry those times.
    """
    if not times:
        return []
    limit = GAP_FACTOR * interval if interval is not None else math.inf
    kept = stamps if stamps is not None else times
    segments = []
    start = 0
    for i in range(1, len(times)):
        fell = split_on_fall and values[i] < values[i - 1]
        if times[i] - times[i - 1] > limit or fell:
            segments.append((kept[start:i], values[start:i]))
            start = i
    segments.append((kept[start:], values[start:]))
    return [segment for segment in segments if len(segment[0]) >= 2]


def _refresh_of_segments(segments: Sequence[tuple[list[float], list[float]]]) -> float | None:
    """Median time between changes of the value, within segments."""
    intervals = []
    for times, values in segments:
        changes = value_changes(times, values, -math.inf, math.inf)
        intervals += [times[b] - times[a] for a, b in itertools.pairwise(changes)]
    return median(intervals) if len(intervals) >= 2 else None

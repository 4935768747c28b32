"""Latency, temperature, cooling and power per time window: the decay curve as a table.

A table has at most ``MAX_TIMELINE_ROWS`` rows: a run longer than that many
windows (a day at the default 30 s, or a device clock that jumped) gets wider
windows, a whole multiple of the one asked for, so a table never grows with
the span of the device's times.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from dataclasses import dataclass

from qtop.analysis.energy import PowerTrace
from qtop.analysis.numeric import fsum, median
from qtop.analysis.series import ChannelSeries

MAX_TIMELINE_ROWS = 3000


@dataclass(frozen=True, slots=True)
class TimelineRow:
    """One window of the measurement, ``offset_s`` after its start."""

    offset_s: float
    iterations: int
    p50_s: float | None
    throughput_per_s: float | None
    temperature_c: float | None
    cooling_state: float | None
    power_w: float | None


def timeline(
    times: Sequence[float],
    latencies: Sequence[float],
    t_start: float,
    t_end: float,
    window_s: float,
    temperature: ChannelSeries | None,
    cooling: Sequence[ChannelSeries],
    trace: PowerTrace | None,
) -> tuple[TimelineRow, ...]:
    """Windows of window_s from t_start; the last one may be shorter (at most
    ``MAX_TIMELINE_ROWS``: see ``timeline_window_s``)."""
    if window_s <= 0 or t_end <= t_start:
        return ()
    rows = []
    windows = (t_end - t_start) / window_s - 1e-9
    if not windows <= MAX_TIMELINE_ROWS:
        return ()
    count = math.ceil(windows)
    for k in range(count):
        start = t_start + k * window_s
        end = min(start + window_s, t_end)
        lo, hi = bisect.bisect_left(times, start), bisect.bisect_left(times, end)
        if k == count - 1:
            hi = bisect.bisect_right(times, end)
        window = latencies[lo:hi]
        busy = fsum(window)
        peaks = [series.max_between(start, end) for series in cooling]
        states = [peak for peak in peaks if peak is not None]
        power = None
        if trace is not None:
            energy, covered = trace.integrate(start, end)
            power = energy / covered if covered > 0 else None
        rows.append(
            TimelineRow(
                offset_s=start - t_start,
                iterations=hi - lo,
                p50_s=median(window) if window else None,
                throughput_per_s=len(window) / busy if busy > 0 else None,
                temperature_c=temperature.mean_between(start, end) if temperature else None,
                cooling_state=max(states) if states else None,
                power_w=power,
            )
        )
    return tuple(rows)


def timeline_window_s(t_start: float, t_end: float, window_s: float) -> float:
    """``window_s``, or the smallest multiple of it that covers the run in at most
    ``MAX_TIMELINE_ROWS`` windows (a span beyond any float gives the widest float)."""
    if window_s <= 0:
        return window_s
    windows = (t_end - t_start) / window_s - 1e-9
    if windows <= MAX_TIMELINE_ROWS:
        return window_s
    if not math.isfinite(windows):
        return math.inf
    return window_s * math.ceil(windows / MAX_TIMELINE_ROWS)

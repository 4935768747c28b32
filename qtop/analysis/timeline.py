"""Latency, temperature, cooling and power per time window: the decay curve as a table."""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from dataclasses import dataclass

from qtop.analysis.energy import PowerTrace
from qtop.analysis.numeric import median
from qtop.analysis.series import ChannelSeries


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
    """Windows of window_s from t_start; the last one may be shorter."""
    if window_s <= 0 or t_end <= t_start:
        return ()
    rows = []
    count = math.ceil((t_end - t_start) / window_s - 1e-9)
    for k in range(count):
        start = t_start + k * window_s
        end = min(start + window_s, t_end)
        lo, hi = bisect.bisect_left(times, start), bisect.bisect_left(times, end)
        if k == count - 1:
            hi = bisect.bisect_right(times, end)
        window = latencies[lo:hi]
        busy = math.fsum(window)
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

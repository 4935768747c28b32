"""The blocks a variant was measured in, and the drift it saw across them.

A sequential sweep measures each variant in one stretch; ``run.order:
interleaved`` or ``randomized`` measures it in blocks that alternate with the
other variants' (each block starts at a ``measure`` phase change). The drift a
variant saw is its latency and temperature at the start against the end: its
first and last block when it has several, else the first and last tenth of its
iterations; and the least-squares slope of its latency over time, per minute,
as a share of its median. Under interleaving every variant should see about
the same drift; a sequential sweep shows the later variants starting hotter.
"""

from __future__ import annotations

import bisect
import itertools
import math
import operator
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from qtop.analysis.numeric import median
from qtop.analysis.series import ChannelSeries
from qtop.events import PhaseChange

# A single block is split into this many parts for its start and end figures.
SINGLE_BLOCK_PARTS = 10


@dataclass(frozen=True, slots=True)
class Drift:
    """Start against end of one variant's measurement."""

    blocks: int
    measured_s: float
    first_p50_s: float | None
    last_p50_s: float | None
    slope_per_min: float | None
    first_temperature_c: float | None
    last_temperature_c: float | None
    segments: str

    @property
    def change(self) -> float | None:
        """Last against first P50, as a fraction of the first."""
        if self.first_p50_s is None or self.last_p50_s is None or self.first_p50_s <= 0:
            return None
        return self.last_p50_s / self.first_p50_s - 1.0


def block_starts(phases: Sequence[PhaseChange], variant: str) -> list[float]:
    """Device times at which the variant's measured blocks began."""
    return sorted(
        p.t for p in phases if p.phase == "measure" and p.variant == variant and p.t is not None
    )


def split_blocks(starts: Sequence[float], times: Sequence[float]) -> list[tuple[int, int]]:
    """Index ranges [lo, hi) of ``times`` (ascending) per block; empty blocks left out."""
    if len(starts) < 2:
        return [(0, len(times))] if times else []
    cuts = [bisect.bisect_left(times, start) for start in starts[1:]]
    edges = [0, *cuts, len(times)]
    return [(lo, hi) for lo, hi in itertools.pairwise(edges) if hi > lo]


def block_spans(
    block_times: Sequence[float],
    times: Sequence[float],
    starts: Sequence[float],
    ends: Sequence[float],
) -> list[tuple[float, float]]:
    """(first start, last end) of each block's iterations (``times`` their midpoints)."""
    return [(starts[lo], ends[hi - 1]) for lo, hi in split_blocks(block_times, times)]


def analyze_drift(
    times: Sequence[float],
    latencies: Sequence[float],
    ends: Sequence[float],
    starts: Sequence[float],
    block_times: Sequence[float],
    temperature: ChannelSeries | None,
    median_s: float | None = None,
    mean_s: float | None = None,
) -> Drift:
    """``times`` the midpoints (ascending) of the successful measured iterations, with their
    ``latencies``, ``starts`` and ``ends``; ``block_times`` when each block began;
    ``median_s`` and ``mean_s`` the latencies' median and mean (``math.fsum`` over the
    count), when the caller has them: each saves a pass over every latency."""
    ranges = split_blocks(block_times, times)
    measured = _total(ends[hi - 1] - starts[lo] for lo, hi in ranges)
    if len(ranges) >= 2:
        first, last = ranges[0], ranges[-1]
        segments = "first and last block"
    elif times:
        part = max(1, len(times) // SINGLE_BLOCK_PARTS)
        first, last = (0, part), (len(times) - part, len(times))
        segments = f"first and last {part} iterations"
    else:
        return Drift(len(ranges), measured, None, None, None, None, None, "")
    return Drift(
        blocks=len(block_times) or len(ranges),
        measured_s=measured,
        first_p50_s=median(latencies[first[0] : first[1]]),
        last_p50_s=median(latencies[last[0] : last[1]]),
        slope_per_min=_slope_per_min(times, latencies, median_s, mean_s),
        first_temperature_c=_temperature(temperature, starts[first[0]], ends[first[1] - 1]),
        last_temperature_c=_temperature(temperature, starts[last[0]], ends[last[1] - 1]),
        segments=segments,
    )


def _temperature(series: ChannelSeries | None, t_from: float, t_to: float) -> float | None:
    if series is None:
        return None
    mean = series.mean_between(t_from, t_to)
    return mean if mean is not None else series.value_at(t_to)


def _total(values: Iterable[float]) -> float:
    """The sum; infinite where a damaged recording's numbers overflow it."""
    try:
        return math.fsum(values)
    except OverflowError:
        return math.inf


def _slope_per_min(
    times: Sequence[float],
    latencies: Sequence[float],
    median_s: float | None = None,
    mean_s: float | None = None,
) -> float | None:
    """Least-squares latency slope per minute, as a share of the median latency (None
    where there is none, or a damaged recording's numbers overflow it)."""
    try:
        slope = _least_squares_slope(times, latencies, median_s, mean_s)
    except (OverflowError, ValueError, ZeroDivisionError):
        # fsum raises ValueError where overflowed products of both signs meet (-inf + inf).
        return None
    return slope if slope is None or math.isfinite(slope) else None


def _least_squares_slope(
    times: Sequence[float], latencies: Sequence[float], median_s: float | None, mean_s: float | None
) -> float | None:
    n = len(times)
    if n < 3:
        return None
    centre = median(latencies) if median_s is None else median_s
    mean_t = math.fsum(times) / n
    finite_mean = mean_s is not None and math.isfinite(mean_s)
    mean_y = mean_s if finite_mean else math.fsum(latencies) / n
    # map() with operator functions: these sums run in C over 800,000 iterations an hour.
    offsets = map(operator.sub, times, itertools.repeat(mean_t))
    spread = math.fsum(map(pow, offsets, itertools.repeat(2)))
    if spread <= 0 or centre <= 0:
        return None
    deviations = map(operator.sub, latencies, itertools.repeat(mean_y))
    products = map(operator.mul, map(operator.sub, times, itertools.repeat(mean_t)), deviations)
    return math.fsum(products) / spread * 60.0 / centre


def drift_note(side: str, drift: Drift | None) -> str | None:
    """``BASE drift: P50 +4.1% from first to last block (3 blocks), 48.0 -> 71.2 C``."""
    if drift is None or drift.change is None:
        return None
    text = f"{side} drift: P50 {drift.change:+.1%} from {drift.segments.replace('and', 'to')}"
    if drift.blocks > 1:
        text += f" ({drift.blocks} blocks)"
    if drift.first_temperature_c is not None and drift.last_temperature_c is not None:
        text += f", {drift.first_temperature_c:.1f} -> {drift.last_temperature_c:.1f} C"
    return text

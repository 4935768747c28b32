"""Per-channel time series gathered from ``Sample`` events.

Only available values are kept: ``None`` means the sensor could not be read at
that tick, which is a hole in the series, never a zero.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field

from qtop.analysis.numeric import fsum, median


@dataclass(slots=True)
class ChannelSeries:
    """Device times (ascending) and values of one channel."""

    times: list[float] = field(default_factory=list)
    values: list[float] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.times)

    def index_range(self, t_from: float, t_to: float) -> tuple[int, int]:
        """Indices [lo, hi) of the points with t_from <= t <= t_to."""
        return bisect.bisect_left(self.times, t_from), bisect.bisect_right(self.times, t_to)

    def value_at(self, t: float) -> float | None:
        """The last value read at or before t."""
        position = bisect.bisect_right(self.times, t) - 1
        return self.values[position] if position >= 0 else None

    def mean_between(self, t_from: float, t_to: float) -> float | None:
        lo, hi = self.index_range(t_from, t_to)
        return fsum(self.values[lo:hi]) / (hi - lo) if hi > lo else None

    def max_between(self, t_from: float, t_to: float) -> float | None:
        lo, hi = self.index_range(t_from, t_to)
        return max(self.values[lo:hi]) if hi > lo else None

    def median_interval(self) -> float | None:
        """The typical spacing of the points (the sampling interval)."""
        if len(self.times) < 2:
            return None
        return median([b - a for a, b in itertools.pairwise(self.times)])


def value_changes(
    times: Sequence[float], values: Sequence[float], t_from: float, t_to: float
) -> list[int]:
    """Indices of the points in [t_from, t_to] where the value differs from the point before.

    The first point of a run is not a change: its value may date from long before.
    """
    lo = max(1, bisect.bisect_left(times, t_from))
    hi = bisect.bisect_right(times, t_to)
    return [i for i in range(lo, hi) if values[i] != values[i - 1]]

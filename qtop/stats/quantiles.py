"""Running statistics with bounded memory, exact while the sample is small.

A benchmark of 200 runs deserves exact percentiles; a ten-hour soak at ten
inferences a second cannot keep every value in the live model. ``RunningStats``
keeps the sorted values up to ``EXACT_LIMIT`` and a log-bucket sketch (relative
error ``SKETCH_ACCURACY``) all along, and answers from the exact values while it
has them. The full-resolution values always stay in the recording, where
``compare`` and the analysis read them.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable
from typing import Any

EXACT_LIMIT = 4096
SKETCH_ACCURACY = 0.001
_GAMMA = (1 + SKETCH_ACCURACY) / (1 - SKETCH_ACCURACY)
_LOG_GAMMA = math.log(_GAMMA)
# Values below this share one bucket: a latency under a nanosecond is a clock artefact.
_SMALLEST = 1e-9

STANDARD_QUANTILES: tuple[float, ...] = (0.5, 0.9, 0.95, 0.99, 0.999)


def percentile(sorted_values: list[float], q: float) -> float:
    """Linear interpolation between closest ranks (NumPy's default, Hyndman-Fan type 7)."""
    if not sorted_values:
        return math.nan
    position = q * (len(sorted_values) - 1)
    lower = math.floor(position)
    upper = min(lower + 1, len(sorted_values) - 1)
    fraction = position - lower
    low_value, high_value = sorted_values[lower], sorted_values[upper]
    return low_value + (high_value - low_value) * fraction


class LogSketch:
    """Counts per logarithmic bucket: any quantile within SKETCH_ACCURACY relative error."""

    __slots__ = ("buckets", "count", "small")

    def __init__(self) -> None:
        self.buckets: dict[int, int] = {}
        self.small = 0
        self.count = 0

    def add(self, value: float) -> None:
        self.count += 1
        if value <= _SMALLEST:
            self.small += 1
            return
        key = math.ceil(math.log(value) / _LOG_GAMMA)
        self.buckets[key] = self.buckets.get(key, 0) + 1

    def quantile(self, q: float) -> float:
        if self.count == 0:
            return math.nan
        rank = q * (self.count - 1)
        seen = self.small
        if rank < seen:
            return 0.0
        for key in sorted(self.buckets):
            seen += self.buckets[key]
            if rank < seen:
                return 2 * _GAMMA**key / (_GAMMA + 1)
        return 2 * _GAMMA ** max(self.buckets) / (_GAMMA + 1)

    def to_dict(self) -> dict[str, Any]:
        return {"small": self.small, "buckets": sorted(self.buckets.items())}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LogSketch:
        sketch = cls()
        sketch.small = int(data.get("small", 0))
        sketch.buckets = {int(k): int(c) for k, c in data.get("buckets", [])}
        sketch.count = sketch.small + sum(sketch.buckets.values())
        return sketch


class RunningStats:
    """Count, mean, standard deviation, extremes and quantiles of a stream of numbers."""

    __slots__ = ("_m2", "count", "exact", "maximum", "mean", "minimum", "sketch")

    def __init__(self) -> None:
        self.count = 0
        self.mean = 0.0
        self._m2 = 0.0
        self.minimum = math.inf
        self.maximum = -math.inf
        self.exact: list[float] | None = []
        self.sketch = LogSketch()

    def add(self, value: float) -> None:
        self.count += 1
        delta = value - self.mean
        self.mean += delta / self.count
        self._m2 += delta * (value - self.mean)
        self.minimum = min(self.minimum, value)
        self.maximum = max(self.maximum, value)
        self.sketch.add(value)
        if self.exact is not None:
            if self.count > EXACT_LIMIT:
                self.exact = None
            else:
                bisect.insort(self.exact, value)

    def extend(self, values: Iterable[float]) -> None:
        """``add`` of each value in turn, with the loop's state in local variables (the same
        arithmetic in the same order, so the same bits as one call per value)."""
        count, mean, m2 = self.count, self.mean, self._m2
        low, high = self.minimum, self.maximum
        sketch = self.sketch
        buckets = sketch.buckets
        small = added = 0
        exact = self.exact
        log, ceil, insort = math.log, math.ceil, bisect.insort
        for value in values:
            added += 1
            count += 1
            delta = value - mean
            mean += delta / count
            m2 += delta * (value - mean)
            if value < low:
                low = value
            if value > high:
                high = value
            if value <= _SMALLEST:
                small += 1
            else:
                key = ceil(log(value) / _LOG_GAMMA)
                buckets[key] = buckets.get(key, 0) + 1
            if exact is not None:
                if count > EXACT_LIMIT:
                    exact = None
                else:
                    insort(exact, value)
        self.count, self.mean, self._m2 = count, mean, m2
        self.minimum, self.maximum = low, high
        self.exact = exact
        sketch.count += added
        sketch.small += small

    @property
    def is_exact(self) -> bool:
        return self.exact is not None

    @property
    def stdev(self) -> float:
        return math.sqrt(self._m2 / (self.count - 1)) if self.count > 1 else 0.0

    def quantile(self, q: float) -> float:
        if self.count == 0:
            return math.nan
        if self.exact is not None:
            return percentile(self.exact, q)
        return min(max(self.sketch.quantile(q), self.minimum), self.maximum)

    def quantiles(self, qs: Iterable[float] = STANDARD_QUANTILES) -> dict[float, float]:
        return {q: self.quantile(q) for q in qs}

    def to_dict(self) -> dict[str, Any]:
        return {
            "count": self.count,
            "mean": self.mean,
            "m2": self._m2,
            "min": self.minimum if self.count else None,
            "max": self.maximum if self.count else None,
            "exact": None if self.exact is None else list(self.exact),
            "sketch": self.sketch.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunningStats:
        stats = cls()
        stats.count = int(data["count"])
        stats.mean = float(data["mean"])
        stats._m2 = float(data["m2"])
        stats.minimum = math.inf if data.get("min") is None else float(data["min"])
        stats.maximum = -math.inf if data.get("max") is None else float(data["max"])
        exact = data.get("exact")
        stats.exact = None if exact is None else [float(v) for v in exact]
        stats.sketch = LogSketch.from_dict(data.get("sketch", {}))
        return stats

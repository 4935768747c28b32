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
import itertools
import math
import operator
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

EXACT_LIMIT = 4096
SKETCH_ACCURACY = 0.001
_GAMMA = (1 + SKETCH_ACCURACY) / (1 - SKETCH_ACCURACY)
_LOG_GAMMA = math.log(_GAMMA)
# Values below this share one bucket: a latency under a nanosecond is a clock artefact.
_SMALLEST = 1e-9

STANDARD_QUANTILES: tuple[float, ...] = (0.5, 0.9, 0.95, 0.99, 0.999)


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """Linear interpolation between closest ranks (NumPy's default, Hyndman-Fan type 7)."""
    if not sorted_values:
        return math.nan
    position = q * (len(sorted_values) - 1)
    lower = math.floor(position)
    upper = min(lower + 1, len(sorted_values) - 1)
    fraction = position - lower
    low_value, high_value = sorted_values[lower], sorted_values[upper]
    return low_value + (high_value - low_value) * fraction


def _bucket_value(key: int) -> float:
    """The value a bucket stands for (infinite for the few keys of values near 1e308)."""
    try:
        return 2 * _GAMMA**key / (_GAMMA + 1)
    except OverflowError:
        return math.inf if key > 0 else 0.0


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
                return _bucket_value(key)
        return _bucket_value(max(self.buckets))

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
        """``add`` of each value in turn, with the same bits as one call per value.

        The running mean and M2 are a loop in local variables (their arithmetic
        must be done in order); the extremes, the sketch's bucket keys and their
        counts are worked out in C (``min``, ``max``, ``map``, ``Counter``).
        """
        values = values if isinstance(values, list) else list(values)
        if not values:
            return
        count, mean, m2 = self.count, self.mean, self._m2
        for value in values:
            count += 1
            delta = value - mean
            mean += delta / count
            m2 += delta * (value - mean)
        self.count, self.mean, self._m2 = count, mean, m2
        # min and max keep the first of equal values, as the comparisons in add do.
        self.minimum = min(self.minimum, min(values))
        self.maximum = max(self.maximum, max(values))
        sketch = self.sketch
        if not min(values) > _SMALLEST:
            small = sum(map(operator.le, values, itertools.repeat(_SMALLEST)))
            sketch.small += small
            large = list(itertools.compress(values, map(operator.gt, values,
                                                        itertools.repeat(_SMALLEST))))  # fmt: skip
        else:
            large = values
        # Latencies repeat (microseconds): each distinct value's bucket is worked out once.
        counted = Counter(large)
        keys = map(math.ceil, map(operator.truediv, map(math.log, counted),
                                  itertools.repeat(_LOG_GAMMA)))  # fmt: skip
        buckets = sketch.buckets
        for key, found in zip(keys, counted.values(), strict=True):
            buckets[key] = buckets.get(key, 0) + found
        sketch.count += len(values)
        exact = self.exact
        if exact is not None:
            if count > EXACT_LIMIT:
                self.exact = None
            else:
                for value in values:
                    bisect.insort(exact, value)

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

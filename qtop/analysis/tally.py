"""Many latencies as their distinct values and counts, for exact sums without a pass each.

Latencies are recorded in microseconds, so an hour's 800,000 hold a few thousand
distinct values. Sorting, summing and summing squared deviations then work on
those few thousand with their counts and give the very numbers a pass over
every value gives: ``math.fsum`` rounds the exact sum once, and each count times
a value is added as two products that are exact (the value split into halves of
26 bits, the count below 2^26), so the exact sum is the same.
"""

from __future__ import annotations

import itertools
import math
import operator
from collections import Counter
from collections.abc import Sequence

# Worth it when values repeat this much on average; otherwise a pass over each is faster.
MIN_REPEATS = 8
_SPLITTER = 134217729.0  # 2^27 + 1: Veltkamp's split of a double into two 26-bit halves
_MAX_COUNT = 1 << 26
# Far from overflow and from the subnormals, where a product would be rounded.
_MAX_MAGNITUDE = 1e140
_MIN_MAGNITUDE = 1e-140


class Tally:
    """Distinct values (ascending) and how many times each occurs."""

    __slots__ = ("counts", "size", "values")

    def __init__(self, values: list[float], counts: list[int], size: int) -> None:
        self.values, self.counts, self.size = values, counts, size

    @classmethod
    def of(cls, data: Sequence[float]) -> Tally | None:
        """The tally of ``data``, or None where it would not help or not be exact: few
        repeats, a zero (0.0 and -0.0 would count as one), NaN, huge values or counts."""
        size = len(data)
        if not size:
            return None
        counted = Counter(data)
        if len(counted) * MIN_REPEATS > size or 0.0 in counted or size >= _MAX_COUNT:
            return None
        values = sorted(counted)
        magnitudes = list(map(abs, values))
        # NaN fails both comparisons.
        small = map(operator.gt, magnitudes, itertools.repeat(_MIN_MAGNITUDE))
        large = map(operator.lt, magnitudes, itertools.repeat(_MAX_MAGNITUDE))
        if not (all(small) and all(large)):
            return None
        return cls(values, list(map(counted.__getitem__, values)), size)

    def ordered(self) -> list[float]:
        """Every value, ascending (what ``sorted`` of the data gives)."""
        return list(itertools.chain.from_iterable(map(itertools.repeat, self.values, self.counts)))

    def mean(self) -> float:
        """``math.fsum`` of the data over its size."""
        return math.fsum(_exact_products(self.values, self.counts)) / self.size

    def stdev(self, centre: float) -> float | None:
        """``numeric.stdev`` of the data given its mean: the same ``(v - centre) ** 2``
        for each value, summed exactly (None for a square too small to multiply exactly)."""
        if self.size < 2:
            return 0.0
        squares = list(map(pow, map(operator.sub, self.values, itertools.repeat(centre)),
                           itertools.repeat(2)))  # fmt: skip
        if any(0 < square < _MIN_MAGNITUDE for square in squares):
            return None
        return math.sqrt(math.fsum(_exact_products(squares, self.counts)) / (self.size - 1))


def _exact_products(values: list[float], counts: list[int]) -> list[float]:
    """Floats whose exact sum is the sum of count * value over the pairs."""
    scaled = list(map(operator.mul, values, itertools.repeat(_SPLITTER)))
    highs = list(map(operator.sub, scaled, map(operator.sub, scaled, values)))
    lows = map(operator.sub, values, highs)
    return [*map(operator.mul, highs, counts), *map(operator.mul, lows, counts)]

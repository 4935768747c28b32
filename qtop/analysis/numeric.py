"""The few numerical routines the analysis needs, in plain Python.

qtop runs on an engineer's laptop and in CI without NumPy; these are small,
exact and fast enough for an hour of samples. Percentiles use the project's
single definition (``qtop.stats.quantiles.percentile``) so that the live view,
the report and ``compare`` agree to the last digit.
"""

from __future__ import annotations

import bisect
import itertools
import math
import operator
from collections.abc import Callable, Iterable, Sequence

from qtop.stats.quantiles import percentile

__all__ = [
    "fsum",
    "golden_section_minimum",
    "mean",
    "median",
    "median_absolute_deviation",
    "normal_two_sided_p",
    "percentile",
    "stdev",
    "trapezoid",
]

_INVERSE_GOLDEN = (math.sqrt(5) - 1) / 2


def fsum(values: Iterable[float]) -> float:
    """``math.fsum``; where a partial sum overflows (values near 1e308), the plain sum,
    which is then infinite or NaN instead of an exception."""
    if not hasattr(values, "__len__"):
        values = list(values)
    try:
        return math.fsum(values)
    except OverflowError:
        return sum(values, 0.0)


def median(values: Sequence[float]) -> float:
    """The median (NaN for an empty sequence); sorts a copy."""
    return percentile(sorted(values), 0.5)


def mean(values: Sequence[float]) -> float:
    return fsum(values) / len(values) if values else math.nan


def stdev(values: Sequence[float]) -> float:
    """Sample standard deviation (n - 1); 0 for fewer than two values.

    The squares are summed in C (``map``), the same ``(v - mean) ** 2`` for each
    value; a square beyond a float's range makes the deviation infinite.
    """
    if len(values) < 2:
        return 0.0
    centre = mean(values)
    deviations = map(operator.sub, values, itertools.repeat(centre))
    try:
        return math.sqrt(math.fsum(map(pow, deviations, itertools.repeat(2))) / (len(values) - 1))
    except OverflowError:
        return math.inf
    except ValueError:
        # A NaN mean (infinite values of both signs) has no deviation either.
        return math.nan


def median_absolute_deviation(
    values: Sequence[float], centre: float, ordered: Sequence[float] | None = None
) -> float:
    """median(|x - centre|), unscaled.

    With ``ordered`` (the same values sorted) no second sort is needed: the
    deviations below ``centre`` and those above it are each already in order,
    so the two middle ones are found by a binary search over both.
    """
    if ordered is None:
        return median([abs(v - centre) for v in values])
    n = len(ordered)
    if n == 0:
        return math.nan
    split = bisect.bisect_left(ordered, centre)
    below, above = split, n - split

    # The j-th smallest deviation on each side (those below in reverse order).
    def low_side(j: int) -> float:
        return abs(ordered[split - 1 - j] - centre)

    def high_side(j: int) -> float:
        return abs(ordered[split + j] - centre)

    def smallest(k: int) -> float:
        """The k-th smallest (0-based) of all deviations: i from below, k + 1 - i from above."""
        first, last = max(0, k + 1 - above), min(k + 1, below)
        while True:
            i = (first + last) // 2
            j = k + 1 - i
            if i < below and j > 0 and high_side(j - 1) > low_side(i):
                first = i + 1
            elif i > 0 and j < above and low_side(i - 1) > high_side(j):
                last = i - 1
            else:
                break
        candidates = []
        if i > 0:
            candidates.append(low_side(i - 1))
        if j > 0:
            candidates.append(high_side(j - 1))
        return max(candidates)

    # percentile(sorted deviations, 0.5), element by element.
    position = 0.5 * (n - 1)
    lower = math.floor(position)
    upper = min(lower + 1, n - 1)
    low_value, high_value = smallest(lower), smallest(upper)
    return low_value + (high_value - low_value) * (position - lower)


def trapezoid(times: Sequence[float], values: Sequence[float]) -> float:
    """Integral of the piecewise-linear curve through the points."""
    total = 0.0
    for i in range(1, len(times)):
        total += (times[i] - times[i - 1]) * (values[i] + values[i - 1]) / 2
    return total


def normal_two_sided_p(z: float) -> float:
    """P(|Z| >= |z|) for a standard normal Z."""
    return math.erfc(abs(z) / math.sqrt(2))


def golden_section_minimum(
    function: Callable[[float], float], low: float, high: float, iterations: int = 60
) -> float:
    """The x in [low, high] minimising a unimodal function, by golden-section search."""
    a, b = low, high
    c = b - _INVERSE_GOLDEN * (b - a)
    d = a + _INVERSE_GOLDEN * (b - a)
    fc, fd = function(c), function(d)
    for _ in range(iterations):
        if fc <= fd:
            b, d, fd = d, c, fc
            c = b - _INVERSE_GOLDEN * (b - a)
            fc = function(c)
        else:
            a, c, fc = c, d, fd
            d = a + _INVERSE_GOLDEN * (b - a)
            fd = function(d)
    return (a + b) / 2

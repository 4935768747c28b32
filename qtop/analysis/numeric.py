"""The few numerical routines the analysis needs, in plain Python.

qtop runs on an engineer's laptop and in CI without NumPy; these are small,
exact and fast enough for an hour of samples. Percentiles use the project's
single definition (``qtop.stats.quantiles.percentile``) so that the live view,
the report and ``compare`` agree to the last digit.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from qtop.stats.quantiles import percentile

__all__ = [
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


def median(values: Sequence[float]) -> float:
    """The median (NaN for an empty sequence); sorts a copy."""
    return percentile(sorted(values), 0.5)


def mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values) if values else math.nan


def stdev(values: Sequence[float]) -> float:
    """Sample standard deviation (n - 1); 0 for fewer than two values."""
    if len(values) < 2:
        return 0.0
    centre = mean(values)
    return math.sqrt(math.fsum((v - centre) ** 2 for v in values) / (len(values) - 1))


def median_absolute_deviation(values: Sequence[float], centre: float) -> float:
    """median(|x - centre|), unscaled."""
    return median([abs(v - centre) for v in values])


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

"""The few numerical routines the analysis needs, in plain Python.

qtop runs on an engineer's laptop and in CI without NumPy; these are small,
exact and fast enough for an hour of samples. Percentiles use the project's
single definition (``qtop.stats.quantiles.percentile``) so that the live view,
the report and ``compare`` agree to the last digit. The distribution functions
(normal and Student t quantiles) and the autocorrelation summary that sizes
``compare``'s bootstrap blocks are here too; docs/analysis.md gives every formula.
"""

from __future__ import annotations

import bisect
import itertools
import math
import operator
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from qtop.stats.quantiles import percentile

__all__ = [
    "Autocorrelation",
    "autocorrelation",
    "flat_top",
    "fsum",
    "golden_section_minimum",
    "mean",
    "median",
    "median_absolute_deviation",
    "normal_quantile",
    "normal_two_sided_p",
    "percentile",
    "regularized_beta",
    "stdev",
    "t_quantile",
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
    except (OverflowError, ValueError):
        # ValueError: infinities of both signs, whose sum is NaN.
        return sum(values, 0.0)


def median(values: Sequence[float]) -> float:
    """The median (NaN for an empty sequence); sorts a copy."""
    return percentile(sorted(values), 0.5)


def mean(values: Sequence[float]) -> float:
    return fsum(values) / len(values) if values else math.nan


def stdev(values: Sequence[float], centre: float | None = None) -> float:
    """Sample standard deviation (n - 1); 0 for fewer than two values. ``centre`` is
    ``mean(values)``, when the caller has it.

    The squares are summed in C (``map``), the same ``(v - mean) ** 2`` for each
    value; a square beyond a float's range makes the deviation infinite.
    """
    if len(values) < 2:
        return 0.0
    if centre is None:
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


def normal_quantile(p: float) -> float:
    """The z with P(Z <= z) = p for a standard normal Z (0 < p < 1), to double precision.

    Abramowitz and Stegun's 26.2.23 (error below 4.5e-4) as the first guess for
    the tail probability min(p, 1 - p), then Newton steps on erfc, which is
    convex there, so they converge monotonically.
    """
    if not 0 < p < 1:
        raise ValueError(f"normal_quantile needs 0 < p < 1, got {p}")
    tail = min(p, 1 - p)
    t = math.sqrt(-2 * math.log(tail))
    z = t - (2.515517 + 0.802853 * t + 0.010328 * t * t) / (
        1 + 1.432788 * t + 0.189269 * t * t + 0.001308 * t**3
    )
    for _ in range(50):
        density = math.exp(-z * z / 2) / math.sqrt(2 * math.pi)
        if density == 0:
            break
        step = (0.5 * math.erfc(z / math.sqrt(2)) - tail) / density
        z += step
        if abs(step) <= 1e-15 * max(1.0, z):
            break
    return z if p > 0.5 else -z


def regularized_beta(x: float, a: float, b: float) -> float:
    """I_x(a, b), the regularized incomplete beta function (the Beta(a, b) CDF at x).

    Its continued fraction converges fast for x < (a + 1) / (a + b + 2); above
    that the symmetry I_x(a, b) = 1 - I_{1-x}(b, a) is used. The fraction is
    evaluated with the modified Lentz method.
    """
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    if x > (a + 1) / (a + b + 2):
        return 1.0 - regularized_beta(1.0 - x, b, a)
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    fraction = d
    for m in range(1, 500):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            fraction *= c * d
        if abs(c * d - 1.0) < 1e-15:
            break
    return math.exp(log_front) * fraction / a


def _t_cdf(t: float, dof: float) -> float:
    tail = 0.5 * regularized_beta(dof / (dof + t * t), dof / 2, 0.5)
    return 1.0 - tail if t > 0 else tail


def t_quantile(p: float, dof: float) -> float:
    """The t with P(T <= t) = p for Student's t with ``dof`` degrees of freedom (normal if inf)."""
    if not 0 < p < 1:
        raise ValueError(f"t_quantile needs 0 < p < 1, got {p}")
    if dof <= 0:
        raise ValueError(f"t_quantile needs dof > 0, got {dof}")
    if math.isinf(dof) or dof > 1e7:
        return normal_quantile(p)
    if p == 0.5:
        return 0.0
    # The t quantile lies beyond the normal one; double a bracket until it holds p.
    sign = 1.0 if p > 0.5 else -1.0
    target = p if p > 0.5 else 1 - p
    low = 0.0
    high = max(1.0, normal_quantile(target))
    while _t_cdf(high, dof) < target:
        low, high = high, high * 2
    for _ in range(200):
        middle = (low + high) / 2
        if _t_cdf(middle, dof) < target:
            low = middle
        else:
            high = middle
        if high - low <= 1e-13 * high:
            break
    return sign * (low + high) / 2


def flat_top(t: float) -> float:
    """Politis and Romano's trapezoidal flat-top lag window: 1 to |t| = 1/2, then down to 0 at 1."""
    t = abs(t)
    if t <= 0.5:
        return 1.0
    return 2.0 * (1.0 - t) if t < 1.0 else 0.0


@dataclass(frozen=True, slots=True)
class Autocorrelation:
    """How far a series' dependence reaches, summarised for a block bootstrap.

    ``lag_window`` is the flat-top window's M; ``long_run_variance`` is
    sum over |k| <= M of flat_top(k / M) R(k); ``block_length`` is Politis and
    White's optimal circular block length (not rounded, not capped).
    """

    n: int
    variance: float
    lag1: float
    lag_window: int
    long_run_variance: float
    block_length: float

    @property
    def integrated_time(self) -> float:
        """tau = long-run variance / variance, at least 1: n / tau is the effective size."""
        if self.variance <= 0 or self.long_run_variance <= self.variance:
            return 1.0
        return self.long_run_variance / self.variance


def _lag_product(centred: Sequence[float], lag: int) -> float:
    return sum(map(operator.mul, centred, itertools.islice(centred, lag, None)))


def autocorrelation(values: Sequence[float]) -> Autocorrelation:
    """Politis and White's (2004, corrected by Patton, Politis and White 2009) block length.

    The lag window M is twice the smallest m after which K_N = max(5,
    sqrt(log10 n)) autocorrelations in a row are insignificant (below
    2 sqrt(log10 n / n)), searched up to sqrt(n) + K_N lags. Then, with
    lambda the flat-top window, G = sum lambda(k/M) |k| R(k) and
    g = sum lambda(k/M) R(k) over |k| <= M, the circular bootstrap's
    MSE-optimal block length is (2 G^2 / (4/3 g^2))^(1/3) n^(1/3).
    """
    n = len(values)
    centre = mean(values) if n else 0.0
    centred = [v - centre for v in values]
    variance = _lag_product(centred, 0) / n if n else 0.0
    if n < 4 or variance <= 0:
        return Autocorrelation(n, max(variance, 0.0), 0.0, 0, max(variance, 0.0), 1.0)
    run_needed = max(5, math.ceil(math.sqrt(math.log10(n))))
    longest = min(n - 1, math.ceil(math.sqrt(n)) + run_needed)
    significant = 2.0 * math.sqrt(math.log10(n) / n)
    covariances = [variance]
    quiet = 0
    cutoff = None
    for lag in range(1, longest + 1):
        covariances.append(_lag_product(centred, lag) / n)
        quiet = quiet + 1 if abs(covariances[lag]) / variance < significant else 0
        if quiet == run_needed:
            cutoff = lag - run_needed
            break
    window = longest if cutoff is None else min(longest, 2 * max(cutoff, 1))
    for lag in range(len(covariances), window + 1):
        covariances.append(_lag_product(centred, lag) / n)
    weighted = [flat_top(k / window) * covariances[k] for k in range(1, window + 1)]
    long_run = variance + 2.0 * fsum(weighted)
    spread = 2.0 * fsum([k * w for k, w in enumerate(weighted, start=1)])
    block = 1.0
    if long_run > 0 and spread != 0:
        block = (2.0 * spread**2 / (4.0 / 3.0 * long_run**2)) ** (1 / 3) * n ** (1 / 3)
    lag1 = covariances[1] / variance if len(covariances) > 1 else 0.0
    return Autocorrelation(n, variance, lag1, window, long_run, block)

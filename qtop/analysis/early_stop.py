"""MLPerf's early-stopping estimate of a single-stream run's 90th-percentile latency.

MLPerf Inference (LoadGen, single-stream) reports not the observed P90 but a
bound that holds with 99% confidence given how many queries ran: with ``n``
queries, each independently over the true P90 with probability 10%, the count
of queries over it is Binomial(n, 0.1). The bound is the ``t``-th highest
latency, for the largest ``t`` at which at most ``t`` queries over the P90
would happen with probability below 1%: were the true P90 above that latency,
seeing so few queries above it would be a 1-in-100 accident. With too few
queries (``t`` would be 0: fewer than 64 for P90 at 99%) there is no bound.
The ``t - 1`` queries above the bound are the ones the estimate discards.

The binomial tail is summed term by term in log space from the quantile
downwards (terms shrink geometrically there), so a million queries cost a few
thousand terms, and the answer for each ``n`` is cached: a live run asks after
every iteration.
"""

from __future__ import annotations

import bisect
import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from qtop.analysis.numeric import percentile
from qtop.profiles.model import VALIDITY_PRESETS

PERCENTILE = 0.9
CONFIDENCE = 0.99
# Where the sum of a binomial tail stops: terms below this share of the sum.
_TAIL_PRECISION = 1e-17
# As qtop.analysis.session's default: fewer measured iterations are not valid.
DEFAULT_MIN_QUERIES = 30
# The one-sided normal quantile at 1%: where the search for t starts.
_Z_99 = 2.3263478740408408


def _log_pmf(k: int, n: int, q: float) -> float:
    return (
        math.lgamma(n + 1)
        - math.lgamma(k + 1)
        - math.lgamma(n - k + 1)
        + k * math.log(q)
        + (n - k) * math.log1p(-q)
    )


def binomial_cdf(k: int, n: int, q: float) -> float:
    """P(X <= k) for X ~ Binomial(n, q), 0 < q < 1."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    if k > n * q:
        return 1.0 - _upper_tail(k + 1, n, q)
    # Downwards from k: pmf(j - 1) / pmf(j) = j (1 - q) / ((n - j + 1) q).
    total = term = 1.0
    for j in range(k, 0, -1):
        term *= j * (1 - q) / ((n - j + 1) * q)
        total += term
        if term < _TAIL_PRECISION * total:
            break
    return math.exp(_log_pmf(k, n, q)) * total


def _upper_tail(k: int, n: int, q: float) -> float:
    """P(X >= k), k above the mean: upwards from k."""
    total = term = 1.0
    for j in range(k, n):
        term *= (n - j) * q / ((j + 1) * (1 - q))
        total += term
        if term < _TAIL_PRECISION * total:
            break
    return math.exp(_log_pmf(k, n, q)) * total


@functools.lru_cache(maxsize=65536)
def overlatency_allowance(
    queries: int, percentile_: float = PERCENTILE, confidence: float = CONFIDENCE
) -> int | None:
    """The largest ``t >= 1`` with P(Binomial(n, 1 - percentile) <= t) < 1 - confidence.

    ``None`` when even ``t = 1`` fails: too few queries for an early-stopping estimate.
    """
    q = 1.0 - percentile_
    alpha = 1.0 - confidence
    if queries < 2 or binomial_cdf(1, queries, q) >= alpha:
        return None
    spread = math.sqrt(queries * q * (1 - q))
    t = max(1, math.floor(queries * q - _Z_99 * spread))
    while t > 1 and binomial_cdf(t, queries, q) >= alpha:
        t -= 1
    while binomial_cdf(t + 1, queries, q) < alpha:
        t += 1
    return t


@functools.cache
def minimum_queries(percentile_: float = PERCENTILE, confidence: float = CONFIDENCE) -> int:
    """The fewest queries that give an early-stopping estimate."""
    n = 2
    while overlatency_allowance(n, percentile_, confidence) is None:
        n += 1
    return n


@dataclass(frozen=True, slots=True)
class EarlyStopEstimate:
    """The P90 bound of ``queries`` latencies (seconds) and how far it is from the P90."""

    queries: int
    bound_s: float
    observed_p90_s: float
    discarded: int

    @property
    def margin(self) -> float:
        """How far above the observed P90 the bound is, as a fraction of it."""
        if self.observed_p90_s <= 0:
            return math.inf if self.bound_s > 0 else 0.0
        return self.bound_s / self.observed_p90_s - 1.0

    def within(self, margin_pct: float) -> bool:
        return self.margin <= margin_pct / 100.0


def estimate(ordered_latencies_s: Sequence[float]) -> EarlyStopEstimate | None:
    """The estimate of latencies in ascending order; None with too few of them."""
    queries = len(ordered_latencies_s)
    allowed = overlatency_allowance(queries)
    if allowed is None:
        return None
    return EarlyStopEstimate(
        queries=queries,
        bound_s=ordered_latencies_s[queries - allowed],
        observed_p90_s=percentile(ordered_latencies_s, PERCENTILE),
        discarded=allowed - 1,
    )


class EarlyStopWatch:
    """The latencies of one variant as they arrive, kept sorted for the estimate."""

    def __init__(self) -> None:
        self.ordered: list[float] = []

    def add(self, latency_s: float) -> None:
        bisect.insort(self.ordered, latency_s)

    def estimate(self) -> EarlyStopEstimate | None:
        return estimate(self.ordered)


@dataclass(frozen=True, slots=True)
class Minimums:
    """What makes a measurement valid, from a profile's ``run`` as recorded."""

    queries: int
    duration_s: float
    early_stopping: bool
    preset: str


def minimums(
    run: Mapping[str, Any], min_iterations: int | None = None, min_duration_s: float | None = None
) -> Minimums:
    """``run.min_iterations``/``min_duration`` (or the given ones) raised to the preset's.

    With ``run.stop: early`` the preset's query count gives way to the
    early-stopping estimate (MLPerf lets an early-stopped run be valid with fewer
    queries); its duration still holds.
    """
    preset = run.get("validity")
    preset = preset if isinstance(preset, str) and preset in VALIDITY_PRESETS else "custom"
    preset_queries, preset_duration = VALIDITY_PRESETS[preset]
    early = run.get("stop") == "early"
    queries = min_iterations if min_iterations is not None else _whole(run.get("min_iterations"))
    duration = min_duration_s if min_duration_s is not None else _real(run.get("min_duration_s"))
    if queries is None:
        queries = DEFAULT_MIN_QUERIES
    if duration is None:
        duration = 0.0
    if not early:
        queries = max(queries, preset_queries)
    return Minimums(queries, max(duration, preset_duration), early, preset)


def _whole(value: Any) -> int | None:
    number = _real(value)
    return int(number) if number is not None else None


def _real(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def estimate_from_quantile(
    queries: int, quantile: Callable[[float], float]
) -> EarlyStopEstimate | None:
    """The estimate from a quantile function over ``queries`` latencies (a sketch, say).

    The ``t``-th highest of ``n`` sorted values sits at ``q = (n - t) / (n - 1)``
    of the linear-interpolation percentile, so the bound is as exact as the quantiles.
    """
    allowed = overlatency_allowance(queries)
    if allowed is None:
        return None
    return EarlyStopEstimate(
        queries=queries,
        bound_s=quantile((queries - allowed) / (queries - 1)),
        observed_p90_s=quantile(PERCENTILE),
        discarded=allowed - 1,
    )

"""A circular block bootstrap of one run's iterations, its blocks sized by their autocorrelation.

A sustained run drifts with temperature and throttles in steps, so an
iteration says a lot about its neighbours; resampling iterations one by one
pretends a run holds far more information than it does. Resampling blocks of
consecutive iterations keeps that dependence: the block length comes from the
autocorrelation of the iterations' ranks (Politis and White's automatic
choice), and the same summary gives the effective sample size n / tau.

A resample never materialises: a statistic only needs, per resample, how many
resampled iterations lie at or below a sample quantile (or their sum, for the
mean), and a block's count is a difference of two prefix sums. A resample's
quantile then follows from the Bahadur representation: with a fraction p* of
it at or below the sample's q-quantile, its own q-quantile is the sample's
(2q - p*)-quantile, to first order. In very long runs the autocorrelation is
computed on at most ``MAX_UNITS`` units of consecutive iterations, and blocks
start only at unit boundaries.
"""

from __future__ import annotations

import bisect
import itertools
import math
import operator
import random
from array import array
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from qtop.analysis.numeric import autocorrelation, percentile

# Past this many iterations the autocorrelation and the blocks are computed on
# units of consecutive iterations (a few ms of arithmetic per 1,000 units).
MAX_UNITS = 16384
# Blocks per resample are capped so a resample costs at most this many draws; a
# block longer than the optimum leaves the variance estimate unbiased, only a
# little noisier (relative standard deviation sqrt(4 b / 3 n), 7% at the cap).
MAX_BLOCKS = 256
# Sample quantiles a resample's quantile is refined around (docs/analysis.md).
GRID = 9
_WORD = array("I").itemsize


@dataclass(frozen=True, slots=True)
class Dependence:
    """How much one run's iterations tell: n, the effective n and the bootstrap's block."""

    n: int
    n_eff: float
    autocorrelation_time: float
    block_length: int
    lag1: float


def mid_ranks(values: Sequence[float], ordered: Sequence[float] | None = None) -> list[float]:
    """The rank of each value (1..n) in its sequence, ties sharing their average rank."""
    ordered = sorted(values) if ordered is None else ordered
    low, high = bisect.bisect_left, bisect.bisect_right
    return [(low(ordered, v) + high(ordered, v) + 1) / 2 for v in values]


class BlockBootstrap:
    """Circular block bootstrap of one series (iterations in the order they ran).

    Blocks are ``block_length`` consecutive iterations (wrapping from the end to
    the start) starting at a multiple of ``unit``: every iteration for runs of up
    to ``MAX_UNITS`` iterations, every ``unit``-th beyond.
    """

    def __init__(self, values: Sequence[float], block_length: int | None = None) -> None:
        if not values:
            raise ValueError("a bootstrap needs at least one value")
        n = len(values)
        self.values = list(values)
        self.sorted = sorted(self.values)
        unit = self.unit = math.ceil(n / MAX_UNITS)
        units = self._units = math.ceil(n / unit)
        ranks = mid_ranks(self.values, self.sorted)
        if unit == 1:
            unit_ranks = ranks
        else:
            prefix = list(itertools.accumulate(ranks, initial=0.0))
            unit_ranks = [
                (prefix[min(n, start + unit)] - prefix[start]) / (min(n, start + unit) - start)
                for start in range(0, n, unit)
            ]
        summary = autocorrelation(unit_ranks)
        centred = [r - (n + 1) / 2 for r in ranks]
        spread = math.fsum(c * c for c in centred)
        lag1 = _lag1(centred) / spread if spread > 0 else 0.0
        if unit == 1:
            tau = summary.integrated_time
        else:
            # A unit mean's long-run variance is the iterations' divided by the unit size.
            variance = spread / n
            tau = max(1.0, unit * summary.long_run_variance / variance) if variance > 0 else 1.0
        tau = min(tau, float(n))
        if block_length is not None:
            block_units = max(1, min(units, round(block_length / unit)))
        else:
            longest = max(1, math.ceil(min(3 * math.sqrt(units), units / 3)))
            block_units = max(1, min(longest, round(summary.block_length)))
            block_units = min(units, max(block_units, math.ceil(units / MAX_BLOCKS)))
        self.block_units = block_units
        self.block_length = min(n, block_units * unit)
        self.dependence = Dependence(
            n=n,
            n_eff=n / tau,
            autocorrelation_time=tau,
            block_length=self.block_length,
            lag1=lag1,
        )

    def _block_sums(self, per_iteration: Iterable[float]) -> list[float]:
        """The sum over each circular block, by its start (iterations 0, unit, 2 unit, ...)."""
        length, n = self.block_length, len(self.values)
        per_iteration = list(per_iteration)
        extended = itertools.chain(per_iteration, itertools.islice(per_iteration, length))
        prefix = list(itertools.accumulate(extended, initial=0))
        ends = itertools.islice(prefix, length, length + n, self.unit)
        return list(map(operator.sub, ends, itertools.islice(prefix, 0, n, self.unit)))

    def counts_at(self, threshold: float) -> list[float]:
        """Per circular block, how many of its iterations are at or below ``threshold``."""
        return self._block_sums(map(threshold.__ge__, self.values))

    def _picker(self, rng: random.Random) -> Callable[[Sequence[float]], Sequence[float]]:
        """One resample: its blocks' starts, as a function picking them from per-block sums.

        32 random bits per block, reduced modulo the number of starts (a bias
        below starts / 2^32, under 4e-6), are several times cheaper than a float.
        """
        units = self._units
        count = -(-units // self.block_units)
        raw = rng.getrandbits(8 * _WORD * count).to_bytes(_WORD * count, "little")
        starts = [word % units for word in array("I", raw)]
        if count == 1:
            return lambda sums: (sums[starts[0]],)
        return operator.itemgetter(*starts)

    def draws(
        self, quantiles: Sequence[float], resamples: int, rng: random.Random
    ) -> tuple[list[list[float]], list[float]]:
        """Each quantile's and the mean's value in ``resamples`` block resamples.

        Two passes over the same resamples (the generator is rewound between
        them): the first places each resample's quantile by the Bahadur
        representation around the sample quantile; the second repeats it
        around the nearest of ``GRID`` sample quantiles spread over the first
        pass's range, which leaves only the curvature over a short distance.
        """
        sums = self._block_sums(self.values)
        centre_counts = [self.counts_at(percentile(self.sorted, q)) for q in quantiles]
        # Every block holds block_length iterations, so every resample holds this many.
        total = -(-self._units // self.block_units) * self.block_length
        rewind = rng.getstate()
        mean_draws: list[float] = []
        first: list[list[float]] = [[] for _ in quantiles]
        for _ in range(resamples):
            pick = self._picker(rng)
            mean_draws.append(sum(pick(sums)) / total)
            for q, counts, levels in zip(quantiles, centre_counts, first, strict=True):
                levels.append(min(1.0, max(0.0, 2 * q - sum(pick(counts)) / total)))
        grids = [_Grid(self, min(levels), max(levels)) for levels in first]
        rng.setstate(rewind)
        ordered = self.sorted
        quantile_draws: list[list[float]] = [[] for _ in quantiles]
        for resample in range(resamples):
            pick = self._picker(rng)
            for q, grid, levels, out in zip(quantiles, grids, first, quantile_draws, strict=True):
                level, counts = grid.nearest(levels[resample])
                below = sum(pick(counts)) / total
                out.append(percentile(ordered, min(1.0, max(0.0, level + q - below))))
        return quantile_draws, mean_draws


def _lag1(centred: Sequence[float]) -> float:
    return sum(map(operator.mul, centred, itertools.islice(centred, 1, None)))


class _Grid:
    """Sample quantiles at ``GRID`` levels over [low, high], each with its block counts (lazily)."""

    def __init__(self, bootstrap: BlockBootstrap, low: float, high: float) -> None:
        self.bootstrap = bootstrap
        self.low = low
        self.step = (high - low) / (GRID - 1)
        self._counts: dict[int, list[float]] = {}

    def nearest(self, level: float) -> tuple[float, list[float]]:
        index = round((level - self.low) / self.step) if self.step > 0 else 0
        index = min(GRID - 1, max(0, index))
        counts = self._counts.get(index)
        grid_level = self.low + index * self.step
        if counts is None:
            threshold = percentile(self.bootstrap.sorted, grid_level)
            counts = self._counts[index] = self.bootstrap.counts_at(threshold)
        return grid_level, counts

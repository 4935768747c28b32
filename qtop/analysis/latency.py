"""Latency statistics of one phase of one variant: percentiles, validity, outliers.

Failed iterations (non-zero exit status) are counted but never enter the
percentiles: a crash that returns in 2 ms would otherwise look like a fast run.
Outliers follow hyperfine's rule (a modified z-score above 10 standard
deviations, with the MAD as the robust standard deviation), and a first
measured run that is such an outlier means the warm-up was too short.
"""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from qtop.analysis.numeric import mean, median_absolute_deviation, percentile, stdev
from qtop.analysis.tally import Tally

QUANTILES: tuple[tuple[str, float], ...] = (
    ("p50", 0.5),
    ("p90", 0.9),
    ("p95", 0.95),
    ("p99", 0.99),
    ("p999", 0.999),
)
OUTLIER_SIGMAS = 10.0
MAD_TO_SIGMA = 1.4826
# When more than half the values are identical the MAD is 0; the mean absolute
# deviation times sqrt(pi/2) estimates the same sigma for normal data.
MEAN_DEVIATION_TO_SIGMA = math.sqrt(math.pi / 2)
OUTLIER_INDICES_KEPT = 20


@dataclass(frozen=True, slots=True)
class LatencyStats:
    """Summary of the successful iterations of one phase (seconds)."""

    count: int
    failed: int
    mean_s: float | None
    stdev_s: float | None
    min_s: float | None
    max_s: float | None
    p50_s: float | None
    p90_s: float | None
    p95_s: float | None
    p99_s: float | None
    p999_s: float | None
    duration_s: float

    def quantile(self, name: str) -> float | None:
        """A statistic by its short name: p50, p90, p95, p99, p999, mean."""
        return getattr(self, f"{name}_s")


def latency_stats(
    latencies_s: Sequence[float],
    failed: int = 0,
    duration_s: float = 0.0,
    ordered: Sequence[float] | None = None,
    tally: Tally | None = None,
) -> LatencyStats:
    """Percentiles (linear interpolation between closest ranks), mean, spread.

    ``ordered`` is the same latencies sorted, when the caller has them already;
    ``tally`` their distinct values and counts (the same mean and spread, sooner).
    """
    if ordered is None:
        ordered = sorted(latencies_s)
    if not ordered:
        return LatencyStats(
            count=0,
            failed=failed,
            mean_s=None,
            stdev_s=None,
            min_s=None,
            max_s=None,
            p50_s=None,
            p90_s=None,
            p95_s=None,
            p99_s=None,
            p999_s=None,
            duration_s=duration_s,
        )
    values = {f"{name}_s": percentile(ordered, q) for name, q in QUANTILES}
    average = tally.mean() if tally is not None else mean(ordered)
    spread = tally.stdev(average) if tally is not None else None
    return LatencyStats(
        count=len(ordered),
        failed=failed,
        mean_s=average,
        stdev_s=spread if spread is not None else stdev(ordered, average),
        min_s=ordered[0],
        max_s=ordered[-1],
        duration_s=duration_s,
        **values,
    )


@dataclass(frozen=True, slots=True)
class Outliers:
    """Measured iterations far from the median, hyperfine's way."""

    count: int
    high: int
    low: int
    median_s: float | None
    sigma_s: float | None
    lower_bound_s: float | None
    upper_bound_s: float | None
    leading_slow: int
    indices: tuple[int, ...]


def find_outliers(
    latencies_s: Sequence[float],
    indices: Sequence[int] | None = None,
    ordered: Sequence[float] | None = None,
) -> Outliers:
    """Values with |x - median| > 10 * 1.4826 * MAD, in measurement order.

    ``leading_slow`` counts the consecutive high outliers the measurement
    starts with: the runs a longer warm-up would have absorbed. ``ordered`` is
    the same latencies sorted, when the caller has them already: then the
    median, the MAD and whether there is any outlier at all need no pass over
    the values in Python.
    """
    labels = indices if indices is not None else range(len(latencies_s))
    if len(latencies_s) < 3:
        return Outliers(0, 0, 0, None, None, None, None, 0, ())
    if ordered is None:
        ordered = sorted(latencies_s)
    centre = percentile(ordered, 0.5)  # type: ignore[arg-type]
    sigma = MAD_TO_SIGMA * median_absolute_deviation(latencies_s, centre, ordered)
    if sigma == 0:
        sigma = MEAN_DEVIATION_TO_SIGMA * mean(
            list(map(abs, map(operator.sub, latencies_s, itertools.repeat(centre))))
        )
    if not sigma > 0:
        # No spread (or none a float can hold): nothing stands out.
        return Outliers(0, 0, 0, centre, sigma if sigma == sigma else None, centre, centre, 0, ())
    limit = OUTLIER_SIGMAS * sigma
    # v - centre grows with v, so the sorted ends say whether there is any outlier.
    high: list[int] = []
    low: list[int] = []
    if ordered[-1] - centre > limit:
        flags = map(operator.gt, map(operator.sub, latencies_s, itertools.repeat(centre)),
                    itertools.repeat(limit))  # fmt: skip
        high = list(itertools.compress(itertools.count(), flags))
    if centre - ordered[0] > limit:
        flags = map(operator.gt, map(operator.sub, itertools.repeat(centre), latencies_s),
                    itertools.repeat(limit))  # fmt: skip
        low = list(itertools.compress(itertools.count(), flags))
    leading = 0
    while leading < len(high) and high[leading] == leading:
        leading += 1
    flagged = sorted(high + low)
    return Outliers(
        count=len(flagged),
        high=len(high),
        low=len(low),
        median_s=centre,
        sigma_s=sigma,
        lower_bound_s=centre - limit,
        upper_bound_s=centre + limit,
        leading_slow=leading,
        indices=tuple(labels[i] for i in flagged[:OUTLIER_INDICES_KEPT]),
    )


@dataclass(frozen=True, slots=True)
class Validity:
    """Whether the measurement met its minimum iterations and duration."""

    valid: bool
    iterations: int
    min_iterations: int
    duration_s: float
    min_duration_s: float
    reasons: tuple[str, ...]


def check_validity(
    iterations: int, duration_s: float, min_iterations: int, min_duration_s: float
) -> Validity:
    reasons = []
    if iterations < min_iterations:
        reasons.append(
            f"{iterations} successful measured iterations, fewer than the minimum "
            f"{min_iterations}: run more iterations"
        )
    if duration_s < min_duration_s:
        reasons.append(
            f"measured for {duration_s:.1f} s, less than the minimum {min_duration_s:g} s: "
            "run longer"
        )
    return Validity(
        valid=not reasons,
        iterations=iterations,
        min_iterations=min_iterations,
        duration_s=duration_s,
        min_duration_s=min_duration_s,
        reasons=tuple(reasons),
    )


@dataclass(frozen=True, slots=True)
class MetricStats:
    """One per-iteration metric of the tool (Genie's ttft_s, decode_tok_s, ...)."""

    name: str
    count: int
    mean: float
    p50: float
    p95: float
    min: float
    max: float


def metric_stats(metrics: Sequence[Mapping[str, float]]) -> tuple[MetricStats, ...]:
    """P50/P95 and extremes of every metric, in order of first appearance."""
    columns: dict[str, list[float]] = {}
    for row in metrics:
        for name, value in row.items():
            if isinstance(value, int | float) and not isinstance(value, bool):
                columns.setdefault(name, []).append(float(value))
    out = []
    for name, values in columns.items():
        ordered = sorted(values)
        out.append(
            MetricStats(
                name=name,
                count=len(ordered),
                mean=mean(ordered),
                p50=percentile(ordered, 0.5),
                p95=percentile(ordered, 0.95),
                min=ordered[0],
                max=ordered[-1],
            )
        )
    return tuple(out)


def outlier_hints(outliers: Outliers, measured: int, warmup: int | None) -> list[str]:
    """The advice an engineer acts on, in hyperfine's spirit."""
    hints = []
    if outliers.leading_slow:
        now = f"currently {warmup}" if warmup is not None else "warm-up"
        suggestion = (warmup or 0) + outliers.leading_slow
        hints.append(
            f"slow first runs: the first {outliers.leading_slow} measured iteration(s) are "
            f"outliers above the median: raise warm-up ({now}) to at least {suggestion}"
        )
    remaining = outliers.count - outliers.leading_slow
    if remaining > 0 and outliers.upper_bound_s is not None and outliers.median_s is not None:
        limit = outliers.upper_bound_s - outliers.median_s
        hints.append(
            f"{remaining} of {measured} measured iterations are statistical outliers "
            f"(|x - median| > 10 x 1.4826 x MAD = {limit * 1e3:.3g} ms): something else "
            "may have run on the device (other load, DVFS, thermal throttling)"
        )
    return hints

"""MLPerf's early-stopping P90 estimate against an exact binomial tail computed here."""

import math
import random

from qtop.analysis.early_stop import (
    EarlyStopWatch,
    binomial_cdf,
    estimate,
    minimum_queries,
    overlatency_allowance,
)


def reference_allowance(queries: int) -> int | None:
    """MLPerf's rule with exact integers: the largest t >= 1 such that
    P(Binomial(n, 1/10) <= t) < 1/100, i.e. 100 * sum C(n, j) 9^(n-j) < 10^n."""
    whole = 10**queries
    below = 0
    t = None
    for j in range(queries + 1):
        below += math.comb(queries, j) * 9 ** (queries - j)
        if 100 * below >= whole:
            break
        t = j
    return t if t is not None and t >= 1 else None


# (queries, the allowance) from the exact sums above, for counts a run meets: the
# smallest that has an estimate, MLPerf mobile's minimum, and counts in between.
COUNTS = (2, 30, 63, 64, 65, 100, 128, 200, 256, 500, 512, 1000, 1024, 2048, 3000, 5000)
REFERENCE = {n: reference_allowance(n) for n in COUNTS}


def test_the_allowance_matches_the_exact_binomial_tail_on_known_counts():
    assert REFERENCE[63] is None and REFERENCE[64] == 1  # MLPerf: "at least 64 queries"
    for queries, allowed in REFERENCE.items():
        assert overlatency_allowance(queries) == allowed, queries
    assert minimum_queries() == 64


def test_the_allowance_matches_every_count_up_to_400():
    for queries in range(2, 401):
        assert overlatency_allowance(queries) == reference_allowance(queries), queries


def test_the_binomial_tail_agrees_with_exact_fractions():
    for n, k in ((64, 1), (100, 3), (1024, 80), (1024, 120), (2000, 5), (500, 499)):
        exact = sum(math.comb(n, j) * 9 ** (n - j) for j in range(k + 1)) / 10**n
        assert math.isclose(binomial_cdf(k, n, 0.1), exact, rel_tol=1e-9), (n, k)


def test_the_bound_is_the_t_th_highest_latency_and_never_below_the_p90():
    rng = random.Random(4)
    latencies = [rng.lognormvariate(math.log(0.05), 0.2) for _ in range(1024)]
    watch = EarlyStopWatch()
    for value in latencies:
        watch.add(value)
    got = watch.estimate()
    assert got is not None
    ordered = sorted(latencies)
    allowed = REFERENCE[1024]
    assert got.bound_s == ordered[1024 - allowed]
    assert got.discarded == allowed - 1
    assert got.bound_s >= got.observed_p90_s
    assert 0 < got.margin < 0.1
    assert got.within(got.margin * 100 + 0.01) and not got.within(got.margin * 100 - 0.01)
    assert estimate(ordered[:63]) is None


def test_the_bound_tightens_as_queries_accumulate():
    rng = random.Random(9)
    latencies = sorted(rng.gauss(0.1, 0.01) for _ in range(4000))
    rng.shuffle(latencies)
    margins = []
    for n in (100, 400, 1600, 4000):
        got = estimate(sorted(latencies[:n]))
        assert got is not None
        margins.append(got.margin)
    assert margins == sorted(margins, reverse=True)

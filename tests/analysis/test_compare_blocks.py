"""The block bootstrap, its block length and effective size, on series of known dependence.

A Gaussian AR(1) series x_t = phi x_{t-1} + e_t has a known autocorrelation, and so
have its ranks: rho_k = (6 / pi) asin(phi^k / 2) (Pearson's formula for the rank
correlation of a bivariate normal), which fixes the effective size n / tau. Every
random draw comes from a seeded generator, so each test is exactly repeatable.
"""

import json
import math
import random

import pytest
from synthetic_streams import back_to_back, stream, write_recording

from qtop.analysis.numeric import (
    autocorrelation,
    normal_quantile,
    percentile,
    regularized_beta,
    t_quantile,
)
from qtop.analysis.resample import MAX_BLOCKS, BlockBootstrap, mid_ranks
from qtop.analysis.variability import change_interval, mann_whitney
from qtop.cli import main


def ar1(n: int, phi: float, rng: random.Random, spread: float = 0.05) -> list[float]:
    """A stationary AR(1) series, as latencies around 10 ms (log-normal margins)."""
    x = rng.gauss(0.0, 1.0) / math.sqrt(1 - phi * phi)
    out = []
    for _ in range(n):
        x = phi * x + rng.gauss(0.0, 1.0)
        out.append(0.010 * math.exp(spread * x))
    return out


def rank_autocorrelation_time(phi: float) -> float:
    return 1 + 2 * sum(6 / math.pi * math.asin(phi**k / 2) for k in range(1, 5000))


@pytest.mark.parametrize("p", [1e-12, 0.001, 0.025, 0.3, 0.5, 0.7, 0.975, 0.999999])
def test_normal_quantile_inverts_the_normal_cdf(p):
    z = normal_quantile(p)
    assert 0.5 * math.erfc(-z / math.sqrt(2)) == pytest.approx(p, rel=1e-12)


def test_t_quantiles_match_the_closed_forms_and_the_tables():
    for p in (0.6, 0.9, 0.975, 0.995, 0.1):
        # One degree of freedom is the Cauchy distribution; two have a closed form too.
        assert t_quantile(p, 1) == pytest.approx(math.tan(math.pi * (p - 0.5)), rel=1e-9)
        assert t_quantile(p, 2) == pytest.approx((2 * p - 1) / math.sqrt(2 * p * (1 - p)), rel=1e-9)
    # Student's table (two-sided 95% and 99%).
    assert t_quantile(0.975, 4) == pytest.approx(2.776445, abs=1e-6)
    assert t_quantile(0.975, 10) == pytest.approx(2.228139, abs=1e-6)
    assert t_quantile(0.995, 3) == pytest.approx(5.840909, abs=1e-6)
    assert t_quantile(0.975, math.inf) == pytest.approx(1.959964, abs=1e-6)
    assert t_quantile(0.975, 2.5) < t_quantile(0.975, 2) and t_quantile(0.975, 2.5) > 2.776


def test_regularized_beta_matches_its_closed_forms():
    for x in (0.01, 0.2, 0.5, 0.9, 0.999):
        assert regularized_beta(x, 1, 1) == pytest.approx(x, rel=1e-12)
        assert regularized_beta(x, 3.5, 1) == pytest.approx(x**3.5, rel=1e-10)
        assert regularized_beta(x, 1, 7) == pytest.approx(1 - (1 - x) ** 7, rel=1e-10)
    assert regularized_beta(0.0, 2, 3) == 0.0 and regularized_beta(1.0, 2, 3) == 1.0


def test_mid_ranks_share_ties():
    assert mid_ranks([3.0, 1.0, 3.0, 2.0, 3.0]) == [4.0, 1.0, 4.0, 2.0, 4.0]


@pytest.mark.parametrize("phi", [0.0, 0.5, 0.9])
def test_effective_size_of_an_ar1_series_is_n_over_its_rank_autocorrelation_time(phi):
    n = 20000
    expected = n / rank_autocorrelation_time(phi)
    for seed in range(3):
        dependence = BlockBootstrap(ar1(n, phi, random.Random(seed))).dependence
        assert dependence.n == n
        assert dependence.n_eff == pytest.approx(expected, rel=0.2)
        assert dependence.lag1 == pytest.approx(6 / math.pi * math.asin(phi / 2), abs=0.03)


def test_block_length_grows_with_the_dependence_and_stays_within_its_bounds():
    n = 4000
    lengths = [
        BlockBootstrap(ar1(n, phi, random.Random(1))).dependence.block_length
        for phi in (0.0, 0.6, 0.9, 0.97)
    ]
    assert lengths == sorted(lengths)
    assert lengths[0] == math.ceil(n / MAX_BLOCKS)
    assert lengths[-1] <= math.ceil(3 * math.sqrt(n))
    # The Politis-White length itself, uncapped, for a strongly dependent series.
    ranks = mid_ranks(ar1(n, 0.9, random.Random(1)))
    assert 20 < autocorrelation(ranks).block_length < 3 * math.sqrt(n)


def test_a_constant_series_is_one_independent_value_per_iteration():
    dependence = BlockBootstrap([0.01] * 500).dependence
    assert dependence.n_eff == 500 and dependence.autocorrelation_time == 1.0


def test_counting_resamples_give_the_bootstrap_that_sorting_them_gives():
    series = ar1(2000, 0.7, random.Random(5), spread=0.2)
    bootstrap = BlockBootstrap(series)
    (fast_p50, fast_p95), fast_means = bootstrap.draws((0.5, 0.95), 2000, random.Random(6))
    # The same circular blocks, materialised and sorted.
    b, n = bootstrap.block_units, len(series)
    extended = series + series[:b]
    rng = random.Random(7)
    slow: dict[str, list[float]] = {"p50": [], "p95": [], "mean": []}
    for _ in range(800):
        resample = []
        for _ in range(math.ceil(n / b)):
            start = rng.randrange(n)
            resample += extended[start : start + b]
        resample.sort()
        slow["p50"].append(percentile(resample, 0.5))
        slow["p95"].append(percentile(resample, 0.95))
        slow["mean"].append(math.fsum(resample) / len(resample))
    for name, fast in (("p50", fast_p50), ("p95", fast_p95), ("mean", fast_means)):
        fast, reference = sorted(fast), sorted(slow[name])
        width = percentile(reference, 0.975) - percentile(reference, 0.025)
        for q in (0.025, 0.5, 0.975):
            assert abs(percentile(fast, q) - percentile(reference, q)) < 0.15 * width, (name, q)


def _coverage(n: int, seeds: int, resamples: int, block_length: int | None) -> dict[str, float]:
    """How often the 95% interval of the change between two runs of one AR(1) process holds 0."""
    covered = {"p50": 0, "mean": 0}
    for seed in range(seeds):
        rng = random.Random(seed)
        sides = [BlockBootstrap(ar1(n, 0.8, rng), block_length) for _ in range(2)]
        (base_p50,), base_mean = sides[0].draws((0.5,), resamples, rng)
        (new_p50,), new_mean = sides[1].draws((0.5,), resamples, rng)
        for name, base, new in (("p50", base_p50, new_p50), ("mean", base_mean, new_mean)):
            low, high = change_interval(base, new, 0.95)
            covered[name] += low <= 0 <= high
    return {name: count / seeds for name, count in covered.items()}


def test_block_intervals_cover_a_null_change_at_about_their_confidence():
    coverage = _coverage(1000, 120, 250, None)
    assert 0.86 <= coverage["p50"] <= 0.99
    assert 0.86 <= coverage["mean"] <= 0.99


def test_resampling_iterations_one_by_one_covers_far_less_than_it_claims():
    coverage = _coverage(500, 30, 150, 1)
    assert coverage["p50"] < 0.75
    assert coverage["mean"] < 0.75


def test_mann_whitney_p_values_of_correlated_runs_are_not_absurd():
    adjusted = naive = 0
    for seed in range(40):
        rng = random.Random(100 + seed)
        base, new = ar1(1000, 0.9, rng), ar1(1000, 0.9, rng)
        taus = [BlockBootstrap(side).dependence.autocorrelation_time for side in (base, new)]
        adjusted += mann_whitney(base, new, *taus).p_value < 0.05
        naive += mann_whitney(base, new).p_value < 0.05
    # Two runs of one process: a 5% test should reject about 5% of the time.
    assert adjusted <= 6
    assert naive >= 15


def test_mann_whitney_variance_widens_by_the_autocorrelation_times():
    base, new = [1.0, 2.0, 3.0, 4.0], [2.5, 3.5, 4.5, 5.5]
    plain = mann_whitney(base, new)
    widened = mann_whitney(base, new, 9.0, 1.0)
    # (n_new tau_base + n_base tau_new) / (n_base + n_new) = (4 * 9 + 4) / 8 = 5.
    assert widened.u == plain.u
    assert widened.z == pytest.approx(plain.z / math.sqrt(5))
    assert widened.n_eff_base == pytest.approx(4 / 9) and widened.n_eff_new == 4


def _drifting_run(rng: random.Random, n: int = 3000) -> list[float]:
    """A run that heats up and then throttles in steps: strongly correlated iterations."""
    out = []
    level = 1.0
    for k in range(n):
        if k % 150 == 0:
            level = 1.0 + 0.08 * rng.choice((0, 1, 2, 3)) * min(1.0, k / 600)
        out.append(0.010 * level * math.exp(rng.gauss(0.0, 0.02)))
    return out


def test_compare_reports_the_effective_size_in_every_format(tmp_path, capsys):
    paths = []
    for seed in (1, 2):
        events = stream([], back_to_back(0.0, _drifting_run(random.Random(seed))))
        paths.append(str(write_recording(tmp_path / f"{seed}.jsonl", events)))
    assert main(["compare", *paths, "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    (variant,) = data["variants"]
    for side in ("base_dependence", "new_dependence"):
        dependence = variant[side]
        assert dependence["n"] == 3000
        assert 10 < dependence["n_eff"] < 300
        assert dependence["block_length"] > 1
        assert dependence["autocorrelation_time"] == pytest.approx(3000 / dependence["n_eff"])
    assert variant["deltas"][0]["interval"] == "block bootstrap"
    test = variant["mann_whitney"]
    assert test["n_eff_base"] == pytest.approx(variant["base_dependence"]["n_eff"])
    n_eff = round(variant["base_dependence"]["n_eff"])
    for form in ("text", "markdown"):
        assert main(["compare", *paths, "--format", form]) == 0
        out = capsys.readouterr().out
        assert f"effective iterations: BASE {n_eff} of 3000" in out
        assert "(effective n " in out

import random

import pytest
from synthetic_streams import back_to_back, header, stream

from qtop.analysis.latency import find_outliers, latency_stats
from qtop.analysis.session import analyze
from qtop.events import Log

# 10, 11, ..., 109 ms in a shuffled order: P50 59.5, P90 99.1, P95 104.05, P99 108.01,
# P99.9 108.901 (linear interpolation between closest ranks).
KNOWN = [(10 + k) / 1000 for k in range(100)]
random.Random(3).shuffle(KNOWN)


def test_percentiles_interpolate_between_closest_ranks():
    stats = latency_stats(KNOWN)
    assert stats.count == 100
    assert stats.p50_s == pytest.approx(0.0595)
    assert stats.p90_s == pytest.approx(0.0991)
    assert stats.p95_s == pytest.approx(0.10405)
    assert stats.p99_s == pytest.approx(0.10801)
    assert stats.p999_s == pytest.approx(0.108901)
    assert stats.mean_s == pytest.approx(0.0595)
    assert (stats.min_s, stats.max_s) == (0.010, 0.109)


def test_empty_latencies_give_none_not_zero():
    stats = latency_stats([], failed=3)
    assert stats.count == 0
    assert stats.failed == 3
    assert stats.p50_s is None
    assert stats.mean_s is None


def test_warmup_is_separated_and_failures_are_counted_but_excluded():
    warmup = back_to_back(0.0, [0.5] * 5, phase="warmup")
    measured = back_to_back(3.0, [*KNOWN, 0.001, 0.002], first_index=5, failed=(100, 101))
    analysis = analyze(stream([], warmup, measured))
    (variant,) = analysis.variants
    assert variant.warmup is not None
    assert variant.warmup.count == 5
    assert variant.warmup.p50_s == 0.5
    assert variant.measured.count == 100
    assert variant.measured.failed == 2
    assert variant.measured.p50_s == pytest.approx(0.0595)
    assert variant.measured.min_s == 0.010
    assert "2 measured iteration(s) failed and are not in the statistics" in variant.hints


def test_validity_uses_the_recorded_profile_minimums():
    profile = {"name": "p", "run": {"min_iterations": 150, "min_duration_s": 60.0}}
    events = stream([], back_to_back(0.0, [0.06] * 100), head=header(profile=profile))
    variant = analyze(events).variants[0]
    assert not variant.validity.valid
    assert variant.validity.min_iterations == 150
    assert variant.validity.reasons == (
        "100 successful measured iterations, fewer than the minimum 150: run more iterations",
        "measured for 6.0 s, less than the minimum 60 s: run longer",
    )


def test_validity_arguments_override_the_profile():
    profile = {"name": "p", "run": {"min_iterations": 150}}
    events = stream([], back_to_back(0.0, KNOWN), head=header(profile=profile))
    variant = analyze(events, min_iterations=100, min_duration_s=5.0).variants[0]
    assert variant.validity.valid
    assert variant.validity.reasons == ()


def test_default_minimum_is_thirty_iterations():
    variant = analyze(stream([], back_to_back(0.0, KNOWN[:29]))).variants[0]
    assert not variant.validity.valid
    assert variant.validity.min_iterations == 30


def test_outliers_follow_the_hyperfine_rule_exactly():
    # median 100, MAD 1 -> limit 10 * 1.4826 = 14.826 around the median.
    values = [99.0, 100.0, 101.0] * 10 + [114.8, 114.9, 85.2, 85.1]
    outliers = find_outliers(values)
    assert outliers.median_s == 100.0
    assert outliers.sigma_s == pytest.approx(1.4826)
    assert outliers.upper_bound_s == pytest.approx(114.826)
    assert outliers.high == 1
    assert outliers.low == 1
    assert outliers.indices == (31, 33)


def test_zero_mad_falls_back_to_the_mean_absolute_deviation():
    values = [10.0] * 20 + [11.0, 200.0]
    outliers = find_outliers(values)
    # mean |x - 10| = 191 / 22; sigma = sqrt(pi/2) * that = 10.88; limit 108.8
    assert outliers.sigma_s == pytest.approx(1.2533141373155 * 191 / 22)
    assert outliers.count == 1
    assert outliers.indices == (21,)


def test_slow_first_runs_suggest_more_warmup():
    rng = random.Random(5)
    latencies = [0.200, 0.180] + [0.100 + rng.uniform(-0.002, 0.002) for _ in range(60)]
    warmup = back_to_back(0.0, [0.3, 0.3], phase="warmup")
    variant = analyze(stream([], warmup, back_to_back(1.0, latencies, first_index=2))).variants[0]
    assert variant.outliers.leading_slow == 2
    assert variant.outliers.indices == (2, 3)
    assert variant.hints[0] == (
        "slow first runs: the first 2 measured iteration(s) are outliers above the median: "
        "raise warm-up (currently 2) to at least 4"
    )


def test_scattered_outliers_are_reported_without_the_warmup_hint():
    latencies = [0.100] * 10 + [0.101] * 10 + [0.099] * 10 + [0.5] + [0.100] * 10
    variant = analyze(stream([], back_to_back(0.0, latencies))).variants[0]
    assert variant.outliers.leading_slow == 0
    assert variant.outliers.count == 1
    assert variant.hints[0].startswith("1 of 41 measured iterations are statistical outliers")


def test_timer_overhead_comes_from_the_agent_log():
    log = Log(t=0.5, stream="agent", text="timer_overhead_s=0.000812")
    analysis = analyze(stream([], [log], back_to_back(1.0, [0.010] * 40)))
    assert analysis.timer_overhead_s == 0.000812
    assert any("8.1% of the P50" in hint for hint in analysis.variants[0].hints)


def test_timer_overhead_falls_back_to_the_header():
    events = stream(
        [], back_to_back(0.0, [0.5] * 40), head=header(device={"timer_overhead_s": 0.0002})
    )
    analysis = analyze(events)
    assert analysis.timer_overhead_s == 0.0002
    assert not any("overhead" in hint for hint in analysis.variants[0].hints)


def test_genie_metrics_are_summarised():
    def metrics(k: int) -> dict[str, float]:
        return {"ttft_s": 0.1 + k / 1000, "decode_tok_s": 20.0}

    variant = analyze(stream([], back_to_back(0.0, [1.0] * 11, metrics=metrics))).variants[0]
    ttft = next(m for m in variant.metrics if m.name == "ttft_s")
    assert ttft.count == 11
    assert ttft.p50 == pytest.approx(0.105)
    assert ttft.p95 == pytest.approx(0.1095)
    decode = next(m for m in variant.metrics if m.name == "decode_tok_s")
    assert decode.p50 == 20.0


def test_variants_are_analysed_separately_in_order_of_appearance():
    first = back_to_back(0.0, [0.010] * 40, variant="w8a8")
    second = back_to_back(10.0, [0.020] * 40, variant="w8a16")
    analysis = analyze(stream([], first, second))
    assert [v.name for v in analysis.variants] == ["w8a8", "w8a16"]
    assert analysis.variant("w8a16").measured.p50_s == 0.020
    assert analysis.variant("missing") is None

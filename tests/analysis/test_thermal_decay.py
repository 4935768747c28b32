import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from synthetic_streams import (
    CDSP,
    CDSP_INFO,
    NSP,
    NSP_INFO,
    back_to_back,
    stream,
    ticks,
)

from qtop.analysis.numeric import median
from qtop.analysis.session import analyze
from qtop.analysis.thermal import (
    ROLLING_STEPS_PER_WINDOW,
    fit_decay,
    rolling_median,
    rolling_median_points,
    stability,
)
from qtop.events import Iteration

BASE_S = 0.100


def decay_run(
    onset_s: float,
    tau_s: float,
    *,
    step: float = 0.10,
    slowdown: float = 0.5,
    duration_s: float = 600.0,
    noise: float = 0.01,
    seed: int = 1,
    t0: float = 10.0,
) -> list[Iteration]:
    """Flat at BASE_S until onset, then a step and an exponential approach to the plateau."""
    rng = random.Random(seed)
    l0, linf = BASE_S * (1 + step), BASE_S * (1 + slowdown)
    out = []
    t, index = t0, 0
    while t < t0 + duration_s:
        offset = t - t0
        rise = (linf - l0) * math.exp(-(offset - onset_s) / tau_s)
        level = BASE_S if offset < onset_s else linf - rise
        latency = level * (1 + rng.gauss(0, noise))
        out.append(
            Iteration(t=t + latency, seq=index, index=index, start=t, end=t + latency,
                      latency_s=latency)
        )  # fmt: skip
        t += latency + 0.05
        index += 1
    return out


@pytest.mark.parametrize(
    ("onset_s", "tau_s", "step", "seed"),
    [(120.0, 90.0, 0.10, 1), (200.0, 40.0, 0.08, 2), (60.0, 150.0, 0.15, 3)],
)
def test_step_then_exponential_recovers_onset_within_a_window_and_tau_within_ten_percent(
    onset_s, tau_s, step, seed
):
    events = stream([], decay_run(onset_s, tau_s, step=step, seed=seed))
    thermal = analyze(events, window_s=10.0, hold_s=10.0).variants[0].thermal
    assert thermal is not None
    assert thermal.onset_offset_s == pytest.approx(onset_s, abs=10.0)
    assert thermal.fit is not None
    assert thermal.fit.converged
    assert thermal.fit.tau_s == pytest.approx(tau_s, rel=0.10)
    assert thermal.fit.linf_s == pytest.approx(0.150, rel=0.02)
    assert thermal.baseline_p50_s == pytest.approx(BASE_S, rel=0.01)


def test_exact_exponential_is_fitted_exactly():
    times = [k * 0.5 for k in range(1200)]
    values = [0.15 - 0.05 * math.exp(-t / 73.0) for t in times]
    fit = fit_decay(times, values, 0.0)
    assert fit is not None
    assert fit.tau_s == pytest.approx(73.0, rel=1e-4)
    assert fit.l0_s == pytest.approx(0.10, rel=1e-5)
    assert fit.linf_s == pytest.approx(0.15, rel=1e-5)
    assert fit.r_squared == pytest.approx(1.0, abs=1e-9)


def test_decay_still_rising_at_the_end_is_not_converged():
    times = [k * 0.5 for k in range(200)]
    values = [0.1 + 0.0001 * t for t in times]
    fit = fit_decay(times, values, 0.0)
    assert fit is not None
    assert not fit.converged
    assert fit.note.startswith("latency was still rising when the run ended")


def test_flat_run_has_no_onset_and_passes_stability():
    events = stream([], back_to_back(0.0, [0.1] * 1200))
    thermal = analyze(events).variants[0].thermal
    assert thermal is not None
    assert thermal.onset_t is None
    assert thermal.fit is None
    assert thermal.sustained_slowdown == 0.0
    assert thermal.time_to_90pct_s is None
    assert thermal.stability is not None
    assert thermal.stability.windows == 4
    assert thermal.stability.ratio == pytest.approx(1.0)
    assert thermal.stability.passed


def test_stability_is_worst_over_best_window_throughput():
    # Windows of 30 s: iterations of 0.1 s, then 0.125 s, then 0.1 s again.
    latencies = [0.1] * 300 + [0.125] * 240 + [0.1] * 300
    its = back_to_back(0.0, latencies)
    times = [(it.start + it.end) / 2 for it in its]
    result = stability(times, latencies, 0.0, its[-1].end, 30.0, 0.97)
    assert result is not None
    assert result.windows == 3
    assert result.best_per_s == pytest.approx(10.0)
    assert result.worst_per_s == pytest.approx(8.0)
    assert result.ratio == pytest.approx(0.8)
    assert not result.passed


def test_stability_needs_two_full_windows():
    latencies = [0.1] * 500
    its = back_to_back(0.0, latencies)
    times = [(it.start + it.end) / 2 for it in its]
    assert stability(times, latencies, 0.0, 50.0, 30.0, 0.97) is None


def test_onset_is_corroborated_by_a_cooling_step():
    iterations = decay_run(120.0, 60.0)
    samples = ticks(0.0, 615.0, 0.5, lambda t: {CDSP: 0.0 if t < 128.0 else 3.0, NSP: 70.0})
    thermal = analyze(stream([NSP_INFO, CDSP_INFO], iterations, samples)).variants[0].thermal
    assert thermal.corroborated is True
    assert thermal.corroboration.detail == "cooling/cdsp stepped 0 -> 3/12"
    assert thermal.corroboration.t == 128.0
    assert thermal.hottest_channel == NSP
    assert thermal.temperature_at_onset_c == 70.0


def test_uncorroborated_onset_says_the_slowdown_may_have_another_cause():
    samples = ticks(0.0, 615.0, 0.5, lambda t: {CDSP: 0.0})
    events = stream([CDSP_INFO], decay_run(120.0, 60.0), samples)
    thermal = analyze(events).variants[0].thermal
    assert thermal.corroborated is False
    assert any("may have another cause" in note for note in thermal.notes)


def test_trip_crossings_are_found_once_per_trip():
    samples = ticks(0.0, 615.0, 1.0, lambda t: {NSP: 80.0 + t / 20})
    events = stream([NSP_INFO], decay_run(120.0, 60.0), samples)
    thermal = analyze(events).variants[0].thermal
    crossings = [e for e in thermal.evidence if e.kind == "trip_crossing"]
    assert len(crossings) == 1
    assert crossings[0].t == 300.0  # 80 + 300 / 20 = 95 C, the passive trip
    assert crossings[0].detail == f"{NSP} crossed its passive trip 95 C (95 C)"


def test_cooling_step_without_slowdown_is_noted():
    samples = ticks(0.0, 130.0, 0.5, lambda t: {CDSP: 0.0 if t < 60.0 else 2.0})
    events = stream([CDSP_INFO], back_to_back(0.0, [0.1] * 1200), samples)
    thermal = analyze(events).variants[0].thermal
    assert thermal.onset_t is None
    assert thermal.notes == (
        "cooling/cdsp stepped 0 -> 2/12 at +60 s, but the rolling P50 stayed within 5% "
        "of the baseline",
    )


def test_time_to_ninety_percent_of_the_final_degradation():
    # A step at +100 s from 0.1 to 0.2 s. After the step iterations come half as often, so
    # the 10 s centred window holds a majority of slow ones from 100 + (2-1)/(2+1) * 5 s on.
    latencies = [0.1] * 1000 + [0.2] * 1000
    thermal = analyze(stream([], back_to_back(0.0, latencies))).variants[0].thermal
    assert thermal.sustained_slowdown == pytest.approx(1.0)
    assert thermal.onset_offset_s == pytest.approx(100 + 5 / 3, abs=0.25)
    assert thermal.time_to_90pct_s == pytest.approx(100 + 5 / 3, abs=0.25)


def test_short_run_skips_onset_detection_and_says_so():
    thermal = analyze(stream([], back_to_back(0.0, [0.1] * 150))).variants[0].thermal
    assert thermal.onset_t is None
    assert thermal.notes[0] == (
        "measured for 15 s, shorter than window + hold (10 s + 10 s): no onset detection"
    )


def _centred_median(times, values, t, window):
    pairs = zip(times, values, strict=True)
    return median([v for s, v in pairs if t - window / 2 <= s <= t + window / 2])


def _check_rolling(times, values, window):
    """Exact at the evaluated points, which follow the documented stride; held between."""
    evaluated, medians = rolling_median_points(times, values, window)
    rolling = rolling_median(times, values, window)
    assert len(rolling) == len(times)
    assert evaluated[:1] == [0] if times else evaluated == []
    for k, (i, value) in enumerate(zip(evaluated, medians, strict=True)):
        t = times[i]
        assert value == _centred_median(times, values, t, window)
        size = sum(1 for s in times if t - window / 2 <= s <= t + window / 2)
        following = evaluated[k + 1] if k + 1 < len(evaluated) else len(times)
        assert following == min(i + max(1, size // ROLLING_STEPS_PER_WINDOW), len(times))
        assert rolling[i:following] == [value] * (following - i)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(0.0, 100.0), min_size=1, max_size=60),
    st.floats(0.1, 30.0),
)
def test_rolling_median_equals_the_median_of_the_centred_window(gaps, window):
    times, t = [], 0.0
    for gap in gaps:
        t += gap / 10
        times.append(t)
    values = [math.sin(i) for i in range(len(times))]
    _check_rolling(times, values, window)


@settings(max_examples=15, deadline=None)
@given(
    st.integers(200, 1500),
    st.sampled_from(["noise", "rising", "falling", "few values", "step"]),
    st.floats(0.5, 20.0),
    st.integers(0, 2**32),
)
def test_rolling_median_of_many_points_is_exact_where_evaluated(count, shape, window, seed):
    # Windows of hundreds of points: evaluated every size // 64 points, the median
    # leaving and re-entering the band of values kept around it.
    rng = random.Random(seed)
    times = sorted(rng.uniform(0, 60) for _ in range(count))
    values = {
        "noise": lambda i: rng.gauss(1, 0.1),
        "rising": lambda i: i * 0.01,
        "falling": lambda i: -i * 0.01 + rng.random() * 0.05,
        "few values": lambda i: float(rng.randrange(4)),
        "step": lambda i: 1.0 + (0.3 if i > count // 2 else 0.0) + rng.random() * 0.01,
    }[shape]
    _check_rolling(times, [values(i) for i in range(count)], window)

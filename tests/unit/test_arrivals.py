"""A paced run's schedule as the host plans it, and the profile rules around it."""

from __future__ import annotations

import math
import statistics

import pytest

from qtop.device.arrivals import MAX_ARRIVALS, arrivals_file, gaps_needed, poisson_gaps_us
from qtop.device.plan import RunOptions, _plan_sh
from qtop.profiles import load_profile_text
from qtop.profiles.validate import check_profile_text


def profile(run: str):
    return load_profile_text(f"name: p\nrun: {{command: ./bench, {run}}}\n", "p.yaml")


def test_poisson_gaps_have_the_mean_and_the_spread_of_an_exponential():
    gaps = [gap / 1e6 for gap in poisson_gaps_us(8.0, 42, 20000)]
    mean = statistics.fmean(gaps)
    # The mean of 20,000 exponential gaps is within 3% of 1/rate (4 standard errors).
    assert mean == pytest.approx(1 / 8.0, rel=0.03)
    # An exponential's standard deviation equals its mean, and e^-1 of it lies above the mean.
    assert statistics.stdev(gaps) == pytest.approx(mean, rel=0.05)
    above = sum(gap > 1 / 8.0 for gap in gaps) / len(gaps)
    assert above == pytest.approx(math.exp(-1), abs=0.015)


def test_a_seed_gives_the_same_sequence_and_another_seed_another():
    assert poisson_gaps_us(5.0, 7, 100) == poisson_gaps_us(5.0, 7, 100)
    assert poisson_gaps_us(5.0, 7, 100) != poisson_gaps_us(5.0, 8, 100)
    # A longer draw starts with the shorter one: warm-up and measurement share a prefix.
    assert poisson_gaps_us(5.0, 7, 200)[:100] == poisson_gaps_us(5.0, 7, 100)


def test_the_arrivals_file_is_seconds_and_microseconds_for_a_32_bit_shell():
    p = profile("iterations: 5, warmup: 2, rate: 0.01, schedule: poisson, arrival_seed: 9")
    lines = arrivals_file(p).splitlines()
    gaps = poisson_gaps_us(0.01, 9, 7)
    assert len(lines) == gaps_needed(p) == 7
    for line, gap in zip(lines, gaps, strict=True):
        seconds, micro = map(int, line.split())
        assert 0 <= micro < 1_000_000 and seconds * 1_000_000 + micro == gap
        assert seconds < 2**31


def test_a_duration_run_gets_gaps_past_its_end_and_a_fixed_rate_none():
    p = profile("duration: 60s, rate: 10, schedule: poisson")
    gaps = poisson_gaps_us(10, 1, gaps_needed(p))
    assert sum(gaps) > 60e6
    assert gaps_needed(profile("duration: 7d, rate: 1000, schedule: poisson")) == MAX_ARRIVALS
    assert arrivals_file(profile("iterations: 5, rate: 10")) is None
    assert arrivals_file(profile("iterations: 5")) is None


def test_the_plan_says_which_schedule():
    fixed = _plan_sh(profile("iterations: 5, rate: 4"), "/bin/sh", "r", RunOptions())
    assert "QTOP_PERIOD_US=250000\n" in fixed and "QTOP_ARRIVALS=''\n" in fixed
    poisson = _plan_sh(
        profile("iterations: 5, rate: 4, schedule: poisson"), "/bin/sh", "r", RunOptions()
    )
    assert "QTOP_PERIOD_US=''\n" in poisson and "QTOP_ARRIVALS=1\n" in poisson


def test_the_deadline_defaults_to_the_period():
    assert profile("iterations: 5, rate: 4").run.effective_deadline_s() == 0.25
    assert profile("iterations: 5, rate: 4, deadline: 1s").run.effective_deadline_s() == 1.0
    assert profile("iterations: 5").run.effective_deadline_s() is None


@pytest.mark.parametrize(
    ("run", "key", "message"),
    [
        (
            "deadline: 30ms",
            "run.deadline",
            "a deadline counts from each iteration's arrival, and without 'rate' there are none",
        ),
        ("schedule: poisson", "run.schedule", "'schedule: poisson' needs a mean rate"),
        (
            "rate: 2, deadline: 1s, latency_source: execute_stats, "
            "profiler: {kind: qnn_log, path: /o}",
            "run.deadline",
            "deadlines are checked for each run of the command (latency_source 'wall'); with "
            "'execute_stats' one run holds many inferences, and 'rate' paces the runs",
        ),
    ],
)
def test_pacing_keys_that_cannot_work_are_refused(run, key, message):
    checked = check_profile_text(f"run: {{command: ./b, iterations: 5, {run}}}\n", "p.yaml")
    assert checked.profile is None
    (issue,) = [issue for issue in checked.errors if issue.key == key]
    assert issue.message == message and issue.fix

"""Paced runs against the simulated board over SSH: misses, lateness and rate as the truth says.

The simulated qnn-net-run's latency is fixed by its config here, and the ground
truth log says how long each run of it lived. From that and the schedule, a
queue the test runs itself (each run starts at its arrival or when the one
before ends, whichever is later) says which iterations end later than the
deadline after their arrival. The device shell adds a few milliseconds between
one run's end and the next one's start (more on a loaded machine), which the
truth cannot know: the expectation is the range between no such gap and a
generous one (``SHELL_GAP_S``).
"""

from __future__ import annotations

import dataclasses
import itertools
import json

import pytest

from qtop.cli import main
from qtop.device.arrivals import poisson_gaps_us
from qtop.sim import start_sim
from qtop.sim.config import default_config

from .sim_runs import PRISMML, custom, iterations, netrun, run_profile, truth

# Far more than an idle machine's fork and exec of `sh -c` and the simulated tool's start.
SHELL_GAP_S = 0.04
INFERENCES_SUSTAINABLE = 10
INFERENCES_OVERLOADED = 30


def fixed_latency_config():
    config = default_config("evk")
    return dataclasses.replace(
        config, latency=dataclasses.replace(config.latency, distribution="fixed")
    )


def queue_misses(arrivals: list[float], services: list[float], deadline: float, gap: float) -> int:
    """Iterations that end later than ``deadline`` after their arrival, in a queue of one server."""
    missed = 0
    free_at = -float("inf")
    for arrival, service in zip(arrivals, services, strict=True):
        start = max(arrival, free_at + gap)
        free_at = start + service
        missed += free_at - arrival > deadline
    return missed


def measured_services(sim) -> list[float]:
    """How long each measured run of qnn-net-run lived, by the simulator's truth (warm-up first)."""
    return [record["wall_s"] for record in truth(sim, "qnn-net-run")][1:]


async def paced_run(tmp_path, run_yaml: str):
    async with start_sim(tmp_path / "sim", variant="evk", config=fixed_latency_config()) as sim:
        profile = custom(sim, run_yaml)
        path = tmp_path / "paced.jsonl"
        events = await run_profile(profile, path)
        services = measured_services(sim)
    measured = [i for i in iterations(events) if i["phase"] == "measure"]
    assert events[-1]["reason"] == "completed"
    assert len(measured) == len(services)
    return path, measured, services


def report_pacing(path, capsys) -> dict:
    assert main(["report", str(path), "--format", "json"]) == 0
    (variant,) = json.loads(capsys.readouterr().out)["analysis"]["variants"]
    return variant["pacing"]


async def test_an_overloaded_rate_misses_as_many_deadlines_as_the_truth_implies(tmp_path, capsys):
    # Each run takes about 147 ms (18 ms init, 30 x 4.2 ms, 2.6 ms de-init): 13.5 a
    # second arrive, about twice what the device can serve, and the queue grows.
    rate, deadline, count = 13.5, 0.4, 30
    command = netrun(PRISMML, INFERENCES_OVERLOADED)
    run_yaml = (
        f"  command: '{command}'\n  warmup: 1\n  iterations: {count}\n"
        f"  rate: {rate}\n  deadline: {deadline}\n"
    )
    path, measured, services = await paced_run(tmp_path, run_yaml)
    period = 1 / rate
    arrivals = [k * period for k in range(count)]
    fewest = queue_misses(arrivals, services, deadline, 0.0)
    most = queue_misses(arrivals, services, deadline, SHELL_GAP_S)
    missed = sum(1 for i in measured if i["missed"])
    assert fewest <= missed <= most
    assert 0 < fewest < count  # the deadline makes the first few, and the rest miss
    # Arrivals do not wait: each starts when the one before ends, later and later.
    lateness = [i["lateness_s"] for i in measured]
    assert lateness[-1] >= (count - 1) * (min(services) - period)
    scheduled = [i["scheduled"] for i in measured]
    assert all(abs(b - a - period) < 2e-6 for a, b in itertools.pairwise(scheduled))
    pacing = report_pacing(path, capsys)
    assert pacing["missed"] == missed and pacing["iterations"] == count
    assert pacing["miss_fraction"] == pytest.approx(missed / count)
    # The rate counts starts, first to last: the runs between them are all but the last
    # (which a loaded machine may well have slowed the most).
    spanned = sum(services[:-1]) / (len(services) - 1)
    assert 1 / (spanned + SHELL_GAP_S) <= pacing["achieved_rate_hz"] <= 1.01 / spanned
    mean_service = sum(services) / len(services)
    assert pacing["target_rate_hz"] == rate and pacing["deadline_s"] == deadline
    assert pacing["duty_cycle"] > mean_service / (mean_service + SHELL_GAP_S)


@pytest.mark.slow
async def test_a_sustainable_rate_meets_every_deadline_at_the_target_rate(tmp_path, capsys):
    rate, count = 4.0, 30
    command = netrun(PRISMML, INFERENCES_SUSTAINABLE)
    run_yaml = f"  command: '{command}'\n  warmup: 1\n  iterations: {count}\n  rate: {rate}\n"
    path, measured, services = await paced_run(tmp_path, run_yaml)
    period = 1 / rate
    arrivals = [k * period for k in range(count)]
    # The deadline is the period; the truth says every run ends well inside it.
    assert queue_misses(arrivals, services, period, SHELL_GAP_S) == 0
    assert not any(i["missed"] for i in measured)
    pacing = report_pacing(path, capsys)
    assert pacing["missed"] == 0 and pacing["deadline_s"] == period
    # Starts keep to the schedule: late by a wake-up at most, over 29 periods.
    assert pacing["achieved_rate_hz"] == pytest.approx(rate, rel=0.02)
    mean_service = sum(services) / len(services)
    assert mean_service / period * 0.95 <= pacing["duty_cycle"]
    assert pacing["duty_cycle"] <= (mean_service + SHELL_GAP_S) / period


@pytest.mark.slow
async def test_poisson_arrivals_follow_the_seeded_sequence(tmp_path, capsys):
    rate, seed, count = 4.0, 11, 30
    command = netrun(PRISMML, INFERENCES_SUSTAINABLE)
    run_yaml = (
        f"  command: '{command}'\n  warmup: 1\n  iterations: {count}\n  rate: {rate}\n"
        f"  schedule: poisson\n  arrival_seed: {seed}\n"
    )
    path, measured, services = await paced_run(tmp_path, run_yaml)
    gaps = [gap / 1e6 for gap in poisson_gaps_us(rate, seed, count - 1)]
    scheduled = [i["scheduled"] for i in measured]
    got = [b - a for a, b in itertools.pairwise(scheduled)]
    assert got == pytest.approx(gaps, abs=2e-6)
    arrivals = [sum(gaps[:k]) for k in range(count)]
    fewest = queue_misses(arrivals, services, 1 / rate, 0.0)
    most = queue_misses(arrivals, services, 1 / rate, SHELL_GAP_S)
    missed = sum(1 for i in measured if i["missed"])
    assert fewest <= missed <= most
    # Lateness is queueing: an iteration arriving while the one before runs waits for it.
    for k in range(1, count):
        busy_until = measured[k - 1]["end"]
        if scheduled[k] > busy_until:
            continue
        assert measured[k]["start"] >= busy_until
        assert measured[k]["lateness_s"] >= busy_until - scheduled[k]
    assert report_pacing(path, capsys)["schedule"] == "poisson"

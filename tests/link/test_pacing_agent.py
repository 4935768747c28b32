"""The agent keeps a paced run's schedule in every shell: arrivals as planned, never waiting."""

from __future__ import annotations

import itertools

import pytest

from qtop.device import plan as plan_module
from qtop.device.arrivals import poisson_gaps_us
from qtop.device.plan import RunOptions
from qtop.device.protocol import PhaseLine, ProcessLine

from .helpers import AGENT_SHELLS, launch_locally, make_sysfs, profile_for, shell_id


def processes(run, phase: str = "measure") -> list[ProcessLine]:
    lines = run.lines("events")
    return [line for line in lines if isinstance(line, ProcessLine) and line.phase == phase]


def phase_start_us(run, phase: str = "measure") -> int:
    return next(
        line.time_us
        for line in run.lines("events")
        if isinstance(line, PhaseLine) and line.phase == phase
    )


@pytest.mark.parametrize("shell", AGENT_SHELLS, ids=shell_id)
def test_poisson_arrivals_are_the_seeded_gaps_in_every_shell(tmp_path, shell):
    profile = profile_for(
        make_sysfs(tmp_path / "sys"),
        tmp_path / "spool",
        "{command: 'sleep 0.01', warmup: 2, iterations: 8, rate: 20, schedule: poisson, "
        "arrival_seed: 3}",
    )
    run = launch_locally(shell, profile, RunOptions(calibrations=1))
    assert run.wait() == "completed"
    gaps = poisson_gaps_us(20, 3, 7)
    for phase, count in (("warmup", 2), ("measure", 8)):
        lines = processes(run, phase)
        scheduled = [line.scheduled_us for line in lines]
        assert len(scheduled) == count
        # Every phase starts the sequence again, from the phase's start.
        assert scheduled[0] == phase_start_us(run, phase)
        assert [b - a for a, b in itertools.pairwise(scheduled)] == gaps[: count - 1]
        assert all(line.start_us >= line.scheduled_us for line in lines)


@pytest.mark.parametrize("shell", AGENT_SHELLS, ids=shell_id)
def test_an_iteration_that_cannot_start_on_time_starts_when_the_one_before_ends(tmp_path, shell):
    # 50 ms of work arriving every 25 ms: each start waits for the end before it.
    profile = profile_for(
        make_sysfs(tmp_path / "sys"),
        tmp_path / "spool",
        "{command: 'sleep 0.05', warmup: 0, iterations: 6, rate: 40}",
    )
    run = launch_locally(shell, profile, RunOptions(calibrations=1))
    assert run.wait() == "completed"
    lines = processes(run)
    scheduled = [line.scheduled_us for line in lines]
    assert [b - a for a, b in itertools.pairwise(scheduled)] == [25000] * 5
    for before, line in itertools.pairwise(lines):
        assert line.start_us >= before.end_us
    # The schedule does not slip with the queue: lateness grows by about 25 ms each time.
    lateness = [line.start_us - line.scheduled_us for line in lines]
    assert lateness[-1] >= 5 * 25000


def test_a_schedule_longer_than_its_list_reads_the_list_again(tmp_path, monkeypatch):
    # mksh counts in 32 bits: the gaps are seconds and microseconds apart.
    monkeypatch.setattr(plan_module, "arrivals_file", lambda profile: "0 30000\n0 60000\n")
    profile = profile_for(
        make_sysfs(tmp_path / "sys"),
        tmp_path / "spool",
        "{command: 'true', warmup: 0, iterations: 6, rate: 20, schedule: poisson}",
    )
    shell = next((s for s in AGENT_SHELLS if "mksh" in s), AGENT_SHELLS[0])
    run = launch_locally(shell, profile, RunOptions(calibrations=1))
    assert run.wait() == "completed"
    scheduled = [line.scheduled_us for line in processes(run)]
    assert [b - a for a, b in itertools.pairwise(scheduled)] == [30000, 60000] * 2 + [30000]


def test_an_unpaced_run_has_no_schedule(tmp_path):
    profile = profile_for(
        make_sysfs(tmp_path / "sys"), tmp_path / "spool", "{command: 'true', iterations: 2}"
    )
    run = launch_locally(AGENT_SHELLS[0], profile, RunOptions(calibrations=1))
    assert run.wait() == "completed"
    assert [line.scheduled_us for line in processes(run)] == [None, None]

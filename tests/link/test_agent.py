"""The device agent run locally with dash and bash against a fake sysfs tree."""

import itertools
import time

import pytest

from qtop.device.plan import RunOptions
from qtop.device.protocol import (
    CalibrationLine,
    ClockLine,
    PhaseLine,
    ProcessLine,
    RunEndLine,
    SampleLine,
    SamplerEndLine,
    StderrLine,
)

from .helpers import SHELLS, group_alive, launch_locally, make_sysfs, profile_for


@pytest.fixture
def tree(tmp_path):
    return make_sysfs(tmp_path / "sys"), tmp_path / "spool"


@pytest.fixture
def runs():
    started = []
    yield started
    for run in started:
        if run.state() == "running":
            run.control("stop", str(run.run_dir), "10")


def start(runs, shell, profile, options=None):
    run = launch_locally(shell, profile, options or RunOptions(calibrations=3))
    runs.append(run)
    return run


@pytest.mark.parametrize("shell", SHELLS)
def test_a_counted_run_calibrates_warms_up_measures_and_ends(tree, runs, shell):
    profile = profile_for(*tree, "{command: 'echo hi', warmup: 2, iterations: 3}")
    run = start(runs, shell, profile)
    assert run.wait() == "completed"
    events = run.lines("events")
    assert isinstance(events[0], ClockLine)
    assert events[0].clock == ("epoch" if "bash" in shell else "date")
    assert isinstance(events[1], CalibrationLine) and len(events[1].durations_us) == 3
    assert [e.seq for e in events] == list(range(len(events)))
    phases = [(e.phase, e.planned_iterations) for e in events if isinstance(e, PhaseLine)]
    assert phases == [("warmup", 2), ("measure", 3), ("done", None)]
    processes = [e for e in events if isinstance(e, ProcessLine)]
    assert [(p.process, p.phase, p.index, p.exit_status) for p in processes] == [
        (0, "warmup", 0, 0),
        (1, "warmup", 1, 0),
        (2, "measure", 0, 0),
        (3, "measure", 1, 0),
        (4, "measure", 2, 0),
    ]
    assert all(p.end_us > p.start_us for p in processes)
    end = events[-1]
    assert isinstance(end, RunEndLine) and end.reason == "completed"
    assert end.stdout_bytes == len("hi\n") * 5 == (run.run_dir / "stdout").stat().st_size
    assert end.samples_bytes == (run.run_dir / "samples").stat().st_size
    assert not group_alive(run.pgid)


@pytest.mark.parametrize("shell", SHELLS)
def test_the_sampler_reads_every_file_each_tick_on_absolute_time(tree, runs, shell):
    profile = profile_for(*tree, "{command: 'sleep 0.6', warmup: 0, iterations: 1}")
    run = start(runs, shell, profile)
    run.wait()
    lines = run.lines("samples")
    assert isinstance(lines[0], ClockLine) and isinstance(lines[-1], SamplerEndLine)
    ticks = [line for line in lines if isinstance(line, SampleLine)]
    assert [t.seq for t in ticks] == list(range(1, len(ticks) + 1))
    assert len(ticks) >= 8
    assert ticks[0].values[:7] == ("45000", "52000", "-273000", "0", "Discharging", "-420000",
                                   "3900000")  # fmt: skip
    assert len(ticks[0].values) == len(run.sensors.reads)
    slots = [t.slot for t in ticks]
    assert slots == list(range(len(slots)))
    # Due times are start + slot * 50 ms: lateness does not accumulate.
    start_us = ticks[0].time_us
    lateness = [t.time_us - (start_us + t.slot * 50000) for t in ticks]
    assert max(lateness) < 25000


@pytest.mark.parametrize("shell", SHELLS)
def test_failed_iterations_report_status_and_stderr_and_stop_the_run(tree, runs, shell):
    command = "{command: 'echo first >&2; echo broken >&2; exit 3', warmup: 0, iterations: 10, "
    profile = profile_for(*tree, command + "max_consecutive_failures: 2}")
    run = start(runs, shell, profile)
    assert run.wait() == "failed"
    events = run.lines("events")
    stderr = [(e.process, e.text) for e in events if isinstance(e, StderrLine)]
    assert stderr == [("0", "first"), ("0", "broken"), ("1", "first"), ("1", "broken")]
    statuses = [e.exit_status for e in events if isinstance(e, ProcessLine)]
    assert statuses == [3, 3]
    assert events[-1].detail == "2 consecutive iterations failed"


def test_only_the_last_lines_of_a_long_stderr_are_reported(tree, runs):
    profile = profile_for(
        *tree,
        "{command: 'for i in 1 2 3 4 5; do echo l$i >&2; done; exit 1', warmup: 0, iterations: 1}",
    )
    run = start(runs, "/bin/dash", profile, RunOptions(calibrations=1, stderr_lines=2))
    run.wait()
    texts = [e.text for e in run.lines("events") if isinstance(e, StderrLine)]
    assert texts == ["(3 earlier lines of stderr not shown)", "l4", "l5"]


def test_a_duration_run_measures_until_the_time_is_up(tree, runs):
    profile = profile_for(*tree, "{command: 'sleep 0.05', warmup: 1, duration: 400ms}")
    run = start(runs, "/bin/bash", profile)
    run.wait()
    events = run.lines("events")
    measure = [e for e in events if isinstance(e, ProcessLine) and e.phase == "measure"]
    assert [p.planned_duration_us for p in events if isinstance(p, PhaseLine)][1] == 400000
    assert 5 <= len(measure) <= 8
    assert measure[-1].start_us - measure[0].start_us < 400000


def test_pacing_starts_iterations_on_a_fixed_rate(tree, runs):
    profile = profile_for(*tree, "{command: 'true', warmup: 0, iterations: 6, rate: 20}")
    run = start(runs, "/bin/bash", profile)
    run.wait()
    starts = [e.start_us for e in run.lines("events") if isinstance(e, ProcessLine)]
    gaps = [b - a for a, b in itertools.pairwise(starts)]
    assert all(abs(gap - 50000) < 10000 for gap in gaps), gaps


def test_a_timeout_stops_the_command_and_marks_the_iteration(tree, runs):
    profile = profile_for(*tree, "{command: 'sleep 30', warmup: 0, iterations: 1, timeout: 300ms}")
    run = start(runs, "/bin/dash", profile, RunOptions(calibrations=1))
    began = time.monotonic()
    run.wait()
    assert time.monotonic() - began < 5
    (process,) = [e for e in run.lines("events") if isinstance(e, ProcessLine)]
    assert process.timed_out and process.exit_status == 130
    assert not group_alive(run.pgid)


def test_variants_run_in_turn_with_their_environment(tree, runs):
    profile = profile_for(
        *tree,
        '{command: \'echo "$Q" "$BASE"\', warmup: 0, iterations: 2, env: {BASE: b, Q: base}, '
        "variants: [{name: one, env: {Q: 1}}, {name: two, env: {Q: 2}}]}",
    )
    run = start(runs, "/bin/dash", profile)
    run.wait()
    assert (run.run_dir / "stdout").read_text() == "base b\n" * 0 + "1 b\n1 b\n2 b\n2 b\n"
    phases = [(e.phase, e.variant) for e in run.lines("events") if isinstance(e, PhaseLine)]
    assert phases == [("measure", 1), ("measure", 2), ("done", 0)]


@pytest.mark.parametrize("shell", SHELLS)
def test_stopping_kills_the_whole_group_and_leaves_no_process(tree, runs, shell):
    profile = profile_for(*tree, "{command: 'sleep 30 & sleep 30', warmup: 0, iterations: 5}")
    run = start(runs, shell, profile)
    time.sleep(0.4)
    assert group_alive(run.pgid)
    listing = run.control("leftovers", str(run.run_dir.parent))
    assert listing.startswith(f"run\t{run.run_dir.name}\t{run.pgid}\t")
    answer = run.control("stop", str(run.run_dir), "30")
    assert answer.splitlines()[0] == f"stopped\t{run.pgid}\tTERM"
    assert not group_alive(run.pgid)
    assert run.state() == "stopped"
    assert isinstance(run.lines("events")[-1], RunEndLine)
    assert run.control("leftovers", str(run.run_dir.parent)) == ""


def test_cooldown_waits_for_the_zones_to_cool(tree, runs):
    sysfs, spool = tree
    profile = profile_for(
        sysfs,
        spool,
        "{command: 'true', warmup: 0, iterations: 1, "
        "cooldown: {below: 50, zones: ['nsp*'], timeout: 10s}}",
    )
    run = start(runs, "/bin/bash", profile)
    time.sleep(0.8)
    assert run.state() == "running"
    (sysfs / "class/thermal/thermal_zone1/temp").write_text("45000\n")
    run.wait()
    events = run.lines("events")
    cooldown = next(e for e in events if isinstance(e, PhaseLine) and e.phase == "cooldown")
    measure = next(e for e in events if isinstance(e, PhaseLine) and e.phase == "measure")
    assert cooldown.note == "until nsp* below 50 C"
    assert measure.time_us - cooldown.time_us >= 700000


@pytest.mark.parametrize("shell", SHELLS)
def test_a_sampler_with_a_long_interval_still_ends_with_the_run(tree, runs, shell):
    profile = profile_for(
        *tree, "{command: 'true', warmup: 0, iterations: 2}", "sample_interval: 1h"
    )
    run = start(runs, shell, profile)
    began = time.monotonic()
    assert run.wait(timeout=5) == "completed"
    assert time.monotonic() - began < 2
    assert isinstance(run.lines("samples")[-1], SamplerEndLine)

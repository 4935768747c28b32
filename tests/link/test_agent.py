"""The device agent run locally in every shell it must support, against a fake sysfs tree.

Times are asserted only where the agent guarantees them (a tick is never early
and never a whole interval late; a paced iteration never starts before its
due time); everything else waits for the agent's own lines, with generous
timeouts as hang guards only.
"""

import itertools
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from qtop.device.plan import RunOptions, agent_script
from qtop.device.protocol import (
    AgentLogLine,
    CalibrationLine,
    ClockLine,
    PhaseLine,
    ProcessLine,
    RunEndLine,
    SampleLine,
    SamplerEndLine,
    StderrLine,
)

from .helpers import (
    AGENT_SHELLS,
    group_alive,
    group_ends,
    launch_locally,
    make_sysfs,
    profile_for,
    shadow_command,
    shell_id,
)

FINE_CLOCK_SHELLS = ("bash", "mksh", "busybox")


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


def wait_for(run, name, predicate, timeout=30.0):
    """The first line of the file that satisfies ``predicate`` (a hang guard, not a bound)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for line in run.lines(name):
            if predicate(line):
                return line
        time.sleep(0.02)
    raise AssertionError(f"no such line in {run.run_dir / name} within {timeout} s")


shells = pytest.mark.parametrize("shell", AGENT_SHELLS, ids=shell_id)


@shells
def test_a_counted_run_calibrates_warms_up_measures_and_ends(tree, runs, shell):
    profile = profile_for(*tree, "{command: 'echo hi', warmup: 2, iterations: 3}")
    run = start(runs, shell, profile)
    assert run.wait() == "completed"
    events = run.lines("events")
    assert isinstance(events[0], ClockLine)
    fine = shell_id(shell) in FINE_CLOCK_SHELLS
    assert events[0].clock == ("epoch" if fine else "date")
    assert events[0].sleep == ("read" if fine else "sleep")
    assert events[0].arithmetic_bits == (32 if shell_id(shell) == "mksh" else 64)
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
    assert group_ends(run.pgid)


@shells
def test_a_size_count_ended_by_the_stop_is_taken_again(tree, runs, shell, tmp_path, monkeypatch):
    """A stop's TERM reaches the whole group, the `wc` the runner forks for its last
    line's sizes too: one that dies without printing must not leave a size empty (the
    host cannot read that line, and the run's end with it)."""
    real_wc = shutil.which("wc")
    deaths = tmp_path / "wc-deaths"
    shadow_command(
        monkeypatch,
        tmp_path / "dying-bin",
        "wc",
        f'#!/bin/sh\nif [ "$(cat "{deaths}" 2>/dev/null)" != xx ]; then\n'
        f'  printf x >>"{deaths}"\n  kill -KILL $$\nfi\nexec "{real_wc}" "$@"\n',
    )
    profile = profile_for(*tree, "{command: 'echo hi', warmup: 0, iterations: 2}")
    run = start(runs, shell, profile, RunOptions(calibrations=1))
    assert run.wait() == "completed"
    assert deaths.read_text() == "xx", "no wc died: the test checks nothing"
    end = run.lines("events")[-1]
    assert isinstance(end, RunEndLine) and end.reason == "completed"
    assert end.stdout_bytes == len("hi\n") * 2 == (run.run_dir / "stdout").stat().st_size
    assert end.samples_bytes == (run.run_dir / "samples").stat().st_size > 0


@shells
def test_a_slow_clock_does_not_pass_a_refused_timed_read_for_a_sleep(
    tree, runs, shell, tmp_path, monkeypatch
):
    """On a busy device dash's two `date` forks around its refused `read -t` take longer
    than the 50 ms asked for: that must not make the runner take the refusal for a sleep
    (its sleeps would spin, and its watchdog would be ended without its children)."""
    real_date = shutil.which("date")
    shadow_command(
        monkeypatch,
        tmp_path / "slow-bin",
        "date",
        f'#!/bin/sh\nsleep 0.04\nexec "{real_date}" "$@"\n',
    )
    profile = profile_for(*tree, "{command: 'true', warmup: 0, iterations: 1}")
    run = start(runs, shell, profile, RunOptions(calibrations=1))
    assert run.wait() == "completed"
    clock = run.lines("events")[0]
    assert isinstance(clock, ClockLine)
    fine = shell_id(shell) in FINE_CLOCK_SHELLS
    assert (clock.clock, clock.sleep) == (("epoch", "read") if fine else ("date", "sleep"))
    assert not list(run.run_dir.glob("timed-read.*"))


@shells
def test_the_sampler_reads_every_file_each_tick_on_absolute_time(tree, runs, shell):
    profile = profile_for(*tree, "{command: 'sleep 0.6', warmup: 0, iterations: 1}")
    run = start(runs, shell, profile)
    run.wait()
    lines = run.lines("samples")
    clock = lines[0]
    assert isinstance(clock, ClockLine) and isinstance(lines[-1], SamplerEndLine)
    ticks = [line for line in lines if isinstance(line, SampleLine)]
    assert [t.seq for t in ticks] == list(range(1, len(ticks) + 1))
    assert len(ticks) >= 2
    assert ticks[0].values[:7] == ("45000", "52000", "-273000", "0", "Discharging", "-420000",
                                   "3900000")  # fmt: skip
    assert len(ticks[0].values) == len(run.sensors.reads)
    # Due times are start + slot * 50 ms: a tick is never early (beyond the clock's
    # resolution) and a slot is skipped only when a whole interval was lost.
    start_us = ticks[0].time_us
    for tick in ticks:
        lateness = tick.time_us - (start_us + tick.slot * 50000)
        assert -clock.resolution_us <= lateness < 50000, (tick, lateness)
    assert all(b.slot > a.slot for a, b in itertools.pairwise(ticks))


@shells
def test_the_sampler_reads_its_files_with_stdin_closed(tree, runs, shell):
    # An open stdin is saved and restored around every `read <file` (8 more
    # system calls a read in bash): the sampler keeps fd 0 closed, and its
    # timed read waits on the wake-up fifo at fd 9 (as fd 0 only while it waits).
    profile = profile_for(*tree, "{command: 'sleep 30', warmup: 0, iterations: 1}")
    run = start(runs, shell, profile)
    clock = wait_for(run, "samples", lambda line: isinstance(line, ClockLine))
    wait_for(run, "samples", lambda line: isinstance(line, SampleLine))
    pid = (run.run_dir / "sampler.pid").read_text().split()[0]
    fds = {name: os.readlink(f"/proc/{pid}/fd/{name}") for name in os.listdir(f"/proc/{pid}/fd")}
    if clock.sleep == "read":
        assert fds["9"].endswith("/wake.sampler"), fds
        assert fds.get("0", fds["9"]) == fds["9"], fds
    else:
        assert "0" not in fds and "9" not in fds, fds
    assert fds["1"].endswith("/samples")


@shells
def test_a_sleep_never_ends_before_the_time_asked(shell, tmp_path):
    """busybox's timed read drops the fraction below a millisecond (`read -t 0.0093`
    waits 9 ms): the agent finds that out and asks such a shell for whole milliseconds,
    rounded up, so that a tick does not wake early and wait again."""
    program = agent_script("lib.sh") + (
        'qtop_clock_init ""\nqtop_wait_init "$1" probe\n'
        'qtop_put "$qtop_sleeper${qtop_read_ms:+ in milliseconds}"\n'
        "qtop_now\nqtop_a_s=$qtop_s\nqtop_a_f=$qtop_f\n"
        'qtop_sleep_us 9300\nqtop_now\nqtop_us_since "$qtop_a_s" "$qtop_a_f"\nqtop_put "$qtop_d"\n'
    )
    out = subprocess.run(
        [shell, "-c", program, "sh", str(tmp_path)], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    sleeper = {"dash": "sleep", "busybox": "read in milliseconds"}.get(shell_id(shell), "read")
    assert out[0] == sleeper
    assert int(out[1]) >= (10_000 if shell_id(shell) == "busybox" else 9_300)


@shells
def test_a_child_ending_during_the_timed_read_probe_is_not_taken_for_a_refusal(shell, tmp_path):
    """The runner starts its sampler just before it probes `read -t`, and a test (or a
    user) may kill it then: the child's end cuts the probe's read short, which mksh
    reports on stderr as a dash refusing the option would. It must try again."""
    program = agent_script("lib.sh") + (
        'qtop_clock_init ""\nsleep 0.02 &\nqtop_wait_init "$1" probe\n'
        'qtop_put "${qtop_sleeper:-sleep}"\n'
    )
    out = subprocess.run(
        [shell, "-c", program, "sh", str(tmp_path)], capture_output=True, text=True, check=True
    ).stdout
    assert out == ("sleep\n" if shell_id(shell) == "dash" else "read\n")
    assert not list(tmp_path.glob("timed-read.*"))


@shells
def test_a_shell_preempted_between_uptime_and_its_clock_sees_no_step(shell):
    """On a busy device the shell can lose its CPU for longer than uptime's 10 ms tick
    between reading uptime and reading its clock (seen in CI: 21 ms, taken for a step of
    the clock and 21 ms taken off an iteration). Here every reading of the clock comes
    25 ms after uptime ticked: no pair is known to within 10 ms, so no step."""
    program = agent_script("lib.sh") + (
        'qtop_line() { :; }\nqtop_clock_init ""\nqtop_emit_clock\n'
        "qtop_late_read() { sleep 0.025; $qtop_plain_fn; }\n"
        "qtop_plain_fn=$qtop_read_fn\nqtop_read_fn=qtop_late_read\nqtop_now_fn=qtop_late_read\n"
        # The reading that triggers the check is a second off, whatever the machine's load.
        "$qtop_plain_fn\nqtop_sub_time -1 0\nqtop_clean=unread\n"
        'qtop_check_step\nqtop_put "stepped=${qtop_stepped:-no} clean=${qtop_clean:-no}"\n'
    )
    out = subprocess.run(
        [shell, "-c", program], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    assert out == "stepped=no clean=no\n"


@shells
def test_waiting_for_a_time_long_past_returns_at_once(shell, tmp_path):
    """Half an hour late (a runner held stopped): in 32-bit mksh the microseconds to
    wait would overflow into 21 minutes of sleep."""
    program = agent_script("lib.sh") + (
        'qtop_clock_init ""\nqtop_wait_init "$1" probe\n'
        "qtop_now\nqtop_sleep_until $((qtop_s - 3000)) 0\nqtop_put returned\n"
    )
    out = subprocess.run(
        [shell, "-c", program, "sh", str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    assert out == "returned\n"


@shells
def test_a_command_of_plain_words_is_execd_without_a_second_shell(
    tree, runs, shell, tmp_path, monkeypatch
):
    log = tmp_path / "sh.log"
    shadow_command(
        monkeypatch, tmp_path / "bin", "sh", f'#!/bin/sh\necho "$*" >>{log}\nexec /bin/sh "$@"\n'
    )
    plain = start(
        runs, shell, profile_for(*tree, "{command: 'echo one  two', warmup: 0, iterations: 2}")
    )
    assert plain.wait() == "completed"
    assert (plain.run_dir / "stdout").read_text().splitlines() == ["one two"] * 2
    assert not log.exists() or "-c" not in log.read_text().split()
    # A pipeline needs a shell: it, and the calibration with it, go through `sh -c`.
    piped = start(
        runs, shell, profile_for(*tree, "{command: 'echo one | tr o 0', warmup: 0, iterations: 2}")
    )
    assert piped.wait() == "completed"
    assert (piped.run_dir / "stdout").read_text().splitlines() == ["0ne"] * 2
    calls = log.read_text().splitlines()
    assert calls.count("-c echo one | tr o 0") == 2
    # The three calibrations (start()'s RunOptions) took the same path.
    assert len([call for call in calls if call.endswith("/true'")]) == 3


@shells
def test_a_missing_program_run_directly_fails_with_127_and_says_so(tree, runs, shell):
    profile = profile_for(*tree, "{command: 'no-such-program --flag', warmup: 0, iterations: 3}")
    run = start(runs, shell, profile, RunOptions(calibrations=1))
    run.wait()
    ends = [line for line in run.lines("events") if isinstance(line, ProcessLine)]
    assert ends and all(line.exit_status == 127 for line in ends)
    errors = [line.text for line in run.lines("events") if isinstance(line, StderrLine)]
    assert any("no-such-program" in text for text in errors), errors


@shells
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


@shells
def test_a_duration_run_stops_starting_iterations_once_the_time_is_up(tree, runs, shell):
    profile = profile_for(*tree, "{command: 'sleep 0.05', warmup: 1, duration: 400ms}")
    run = start(runs, shell, profile)
    run.wait()
    events = run.lines("events")
    phase = next(p for p in events if isinstance(p, PhaseLine) and p.phase == "measure")
    assert phase.planned_duration_us == 400000
    measure = [e for e in events if isinstance(e, ProcessLine) and e.phase == "measure"]
    # Another iteration starts while the last one ended within the duration, and only then.
    assert all(p.end_us - phase.time_us < 400000 for p in measure[:-1])
    assert measure[-1].end_us - phase.time_us >= 400000


@shells
def test_pacing_never_starts_an_iteration_before_its_due_time(tree, runs, shell):
    profile = profile_for(*tree, "{command: 'true', warmup: 0, iterations: 6, rate: 20}")
    run = start(runs, shell, profile)
    run.wait()
    events = run.lines("events")
    phase = next(p for p in events if isinstance(p, PhaseLine) and p.phase == "measure")
    starts = [e.start_us for e in events if isinstance(e, ProcessLine)]
    resolution = events[0].resolution_us
    assert len(starts) == 6
    for index, start_us in enumerate(starts):
        assert start_us >= phase.time_us + index * 50000 - resolution


@shells
def test_a_timeout_stops_the_command_and_marks_the_iteration(tree, runs, shell):
    profile = profile_for(*tree, "{command: 'sleep 30', warmup: 0, iterations: 1, timeout: 300ms}")
    run = start(runs, shell, profile, RunOptions(calibrations=1))
    # A hang guard well under the command's 30 s: the timeout must have ended it.
    assert run.wait(timeout=20) == "completed"
    (process,) = [e for e in run.lines("events") if isinstance(e, ProcessLine)]
    assert process.timed_out and process.exit_status == 130
    assert group_ends(run.pgid)


@shells
def test_a_run_launched_with_sigint_ignored_times_out_with_sigterm(tree, runs, shell):
    # What a launch from a background job of a script gets: SIGINT ignored, for good.
    profile = profile_for(*tree, "{command: 'sleep 30', warmup: 0, iterations: 1, timeout: 300ms}")
    run = launch_locally(shell, profile, RunOptions(calibrations=1), sigint=signal.SIG_IGN)
    runs.append(run)
    assert run.wait(timeout=20) == "completed"
    events = run.lines("events")
    (process,) = [e for e in events if isinstance(e, ProcessLine)]
    assert process.timed_out and process.exit_status == 143
    warnings = [e.text for e in events if isinstance(e, AgentLogLine)]
    assert any("SIGINT is ignored" in text for text in warnings), warnings
    assert group_ends(run.pgid)


def test_variants_run_in_turn_with_their_environment(tree, runs):
    profile = profile_for(
        *tree,
        '{command: \'echo "$Q" "$BASE"\', warmup: 0, iterations: 2, env: {BASE: b, Q: base}, '
        "variants: [{name: one, env: {Q: 1}}, {name: two, env: {Q: 2}}]}",
    )
    run = start(runs, "/bin/dash", profile)
    run.wait()
    assert (run.run_dir / "stdout").read_text() == "1 b\n1 b\n2 b\n2 b\n"
    phases = [(e.phase, e.variant) for e in run.lines("events") if isinstance(e, PhaseLine)]
    assert phases == [("measure", 1), ("measure", 2), ("done", 0)]


@shells
def test_stopping_kills_the_whole_group_and_leaves_no_process(tree, runs, shell):
    profile = profile_for(*tree, "{command: 'sleep 30 & sleep 30', warmup: 0, iterations: 5}")
    run = start(runs, shell, profile)
    wait_for(run, "events", lambda line: isinstance(line, PhaseLine) and line.phase == "measure")
    assert group_alive(run.pgid)
    listing = run.control("leftovers", str(run.run_dir.parent))
    assert listing.startswith(f"run\t{run.run_dir.name}\t{run.pgid}\t")
    answer = run.control("stop", str(run.run_dir), "30")
    assert answer.splitlines()[0] == f"stopped\t{run.pgid}\tTERM"
    assert group_ends(run.pgid)
    assert run.state() == "stopped"
    assert isinstance(run.lines("events")[-1], RunEndLine)
    assert run.control("leftovers", str(run.run_dir.parent)) == ""


def test_a_completed_run_leaves_no_process_behind(tree, runs):
    """What the command left in the background is ended with the run."""
    profile = profile_for(*tree, "{command: 'sleep 300 & echo started', warmup: 0, iterations: 3}")
    run = start(runs, "/bin/dash", profile)
    assert run.wait() == "completed"
    assert group_ends(run.pgid)


def test_cooldown_waits_for_the_zones_to_cool(tree, runs):
    sysfs, spool = tree
    profile = profile_for(
        sysfs,
        spool,
        "{command: 'true', warmup: 0, iterations: 1, "
        "cooldown: {below: 50, zones: ['nsp*'], timeout: 60s}}",
    )
    run = start(runs, "/bin/bash", profile)
    cooldown = wait_for(run, "events", lambda e: isinstance(e, PhaseLine) and e.phase == "cooldown")
    assert cooldown.note == "until nsp* below 50 C"
    # bash's clock is this machine's wall clock: the zone was hot until this moment.
    cooled = time.time_ns() // 1000
    (sysfs / "class/thermal/thermal_zone1/temp").write_text("45000\n")
    run.wait()
    events = run.lines("events")
    measure = next(e for e in events if isinstance(e, PhaseLine) and e.phase == "measure")
    assert measure.time_us >= cooled
    assert not [e for e in events if isinstance(e, AgentLogLine)]


@shells
def test_a_sampler_with_a_long_interval_still_ends_with_the_run(tree, runs, shell):
    profile = profile_for(
        *tree, "{command: 'true', warmup: 0, iterations: 2}", "sample_interval: 1000s"
    )
    run = start(runs, shell, profile)
    # The sampler sleeps 1000 s between ticks: ending within the guard means it was woken.
    assert run.wait(timeout=60) == "completed"
    assert isinstance(run.lines("samples")[-1], SamplerEndLine)
    assert group_ends(run.pgid)


def test_the_timer_is_calibrated_again_during_a_long_run(tree, runs):
    profile = profile_for(*tree, "{command: 'sleep 0.05', warmup: 0, duration: 2500ms}")
    options = RunOptions(calibrations=3, recalibrate_s=1, recalibrations=2)
    run = start(runs, "/bin/bash", profile, options)
    assert run.wait() == "completed"
    events = run.lines("events")
    calibrations = [line for line in events if isinstance(line, CalibrationLine)]
    assert len(calibrations) >= 2
    assert len(calibrations[0].durations_us) == 3
    assert all(len(c.durations_us) == 2 for c in calibrations[1:])
    # A recalibration never interrupts the numbering of the processes.
    processes = [line.process for line in events if isinstance(line, ProcessLine)]
    assert processes == list(range(len(processes)))


@shells
def test_a_watchdog_per_iteration_leaves_the_iterations_numbered(tree, runs, shell):
    profile = profile_for(*tree, "{command: 'true', warmup: 1, iterations: 4, timeout: 5s}")
    run = start(runs, shell, profile, RunOptions(calibrations=2))
    assert run.wait() == "completed"
    processes = [line for line in run.lines("events") if isinstance(line, ProcessLine)]
    assert [(p.phase, p.index, p.timed_out) for p in processes] == [
        ("warmup", 0, False),
        ("measure", 0, False),
        ("measure", 1, False),
        ("measure", 2, False),
        ("measure", 3, False),
    ]


def read_calls(pid: int) -> int:
    """How many read(2) calls process ``pid`` has made (the kernel's I/O accounting)."""
    for line in Path(f"/proc/{pid}/io").read_text().splitlines():
        if line.startswith("syscr:"):
            return int(line.split()[1])
    raise AssertionError(f"/proc/{pid}/io has no syscr")


def the_watchdog(run) -> int:
    """The runner's child that is neither the sampler nor the measured command."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        command = (run.run_dir / "cmd.pid").read_text().split()
        kids = Path(f"/proc/{run.pgid}/task/{run.pgid}/children").read_text().split()
        others = [
            int(kid)
            for kid in kids
            if kid not in command[:1]
            and b"sampler.sh" not in Path(f"/proc/{kid}/cmdline").read_bytes()
        ]
        if command and len(others) == 1:
            return others[0]
        time.sleep(0.02)
    raise AssertionError("hang guard: no watchdog beside the measured command within 30 s")


@shells
def test_a_watchdog_sleeps_until_the_timeout_instead_of_spinning(tree, runs, shell, tmp_path):
    """An asynchronous list starts with its standard input from /dev/null, where a timed
    `read` returns at once: a watchdog sleeping that way would call read(2) without end
    on a busy core, thousands of times a second. Sleeping, it wakes once a second to
    read its clock and /proc/uptime (dash reads a byte a call: about 25 calls a wake)."""
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    profile = profile_for(
        *tree,
        f"{{command: 'cat {gate}', warmup: 0, iterations: 1, timeout: 300s}}",
        "sample_interval: 20ms",
    )
    run = start(runs, shell, profile, RunOptions(calibrations=1))
    wait_for(run, "events", lambda line: isinstance(line, PhaseLine) and line.phase == "measure")
    watchdog = the_watchdog(run)
    before, started = read_calls(watchdog), time.monotonic()
    ticks = sum(isinstance(line, SampleLine) for line in run.lines("samples"))
    deadline = time.monotonic() + 60
    while sum(isinstance(line, SampleLine) for line in run.lines("samples")) < ticks + 10:
        assert time.monotonic() < deadline, "hang guard: ten ticks within 60 s"
        time.sleep(0.02)
    calls = read_calls(watchdog) - before
    # On a busy machine ten ticks take seconds, and the watchdog wakes once in each.
    seconds = time.monotonic() - started
    with open(gate, "w"):
        pass
    assert calls < 50 * (1 + seconds), (
        f"the watchdog called read(2) {calls} times in {seconds:.1f} s (ten ticks)"
    )
    assert run.wait() == "completed"

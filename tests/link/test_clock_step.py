"""The device's wall clock stepping during a run (NTP setting it): the run goes on as if
it had not, and every time it writes stays on the uptime line.

libfaketime steps the clock of the run's processes (the shells, `date`, the command)
while it runs: it is the real shells reading a clock that really jumps. It fakes
mksh's and busybox's `$EPOCHREALTIME` and the `date` that dash's runner forks; bash
5.2 reads its clock past it, and runs the same shell code as mksh.
"""

from __future__ import annotations

import asyncio
import glob
import itertools
import os
import re
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from qtop.device.plan import RunOptions
from qtop.device.protocol import (
    AgentLogLine,
    ClockLine,
    Line,
    PhaseLine,
    ProcessLine,
    SampleLine,
)

from .helpers import AGENT_SHELLS, LocalRun, launch_locally, make_sysfs, profile_for, shell_id
from .recording import local_source, of_kind, record

LIBFAKETIME = next(iter(sorted(glob.glob("/usr/lib/*/faketime/libfaketime.so.1"))), None)

pytestmark = pytest.mark.skipif(
    LIBFAKETIME is None, reason="needs libfaketime (apt-get install libfaketime)"
)

STEP_NOTE = re.compile(r"clock was set (\d+\.\d{6}) s (forward|back) during the run")


def agent_shell(name: str) -> str:
    return next(shell for shell in AGENT_SHELLS if shell_id(shell) == name)


def boottime() -> float:
    return time.clock_gettime(time.CLOCK_BOOTTIME)


class SteppedClock:
    """The offset libfaketime gives the processes started after it; re-read on every
    call (FAKETIME_NO_CACHE), so writing it steps their clocks at once.

    libfaketime keeps a semaphore and shared memory made by the first process it loads
    into, named in FAKETIME_SHARED for its children: left to the launcher, they went
    stale under the run now and then, and a command then failed on them at its start.
    A keeper made here makes them for the whole test; they are removed after it.
    """

    def __init__(self, directory: Path, monkeypatch) -> None:
        self.file = directory / "faketime"
        self.file.write_text("+0\n")
        monkeypatch.setenv("LD_PRELOAD", str(LIBFAKETIME))
        monkeypatch.setenv("FAKETIME_TIMESTAMP_FILE", str(self.file))
        monkeypatch.setenv("FAKETIME_NO_CACHE", "1")
        # NTP steps CLOCK_REALTIME only; CLOCK_MONOTONIC and /proc/uptime go on.
        monkeypatch.setenv("FAKETIME_DONT_FAKE_MONOTONIC", "1")
        monkeypatch.delenv("FAKETIME_SHARED", raising=False)
        self.keeper = subprocess.Popen(["/bin/sh", "-c", "read -r _"], stdin=subprocess.PIPE)
        pid = self.keeper.pid
        deadline = time.monotonic() + 30.0
        while not Path(f"/dev/shm/sem.faketime_sem_{pid}").exists():
            assert time.monotonic() < deadline, "libfaketime made no semaphore"
            time.sleep(0.01)
        monkeypatch.setenv("FAKETIME_SHARED", f"/faketime_sem_{pid} /faketime_shm_{pid}")

    def step(self, seconds: float) -> None:
        # Renamed into place: libfaketime reads the file at every reading, and one that
        # caught it truncated by a plain write would see no offset for that reading.
        staged = self.file.with_name(self.file.name + ".new")
        staged.write_text(f"{seconds:+.6f}\n")
        os.replace(staged, self.file)

    def close(self) -> None:
        assert self.keeper.stdin is not None
        self.keeper.stdin.close()
        self.keeper.wait(timeout=30.0)
        pid = self.keeper.pid
        for name in (f"sem.faketime_sem_{pid}", f"faketime_shm_{pid}"):
            Path("/dev/shm", name).unlink(missing_ok=True)


@pytest.fixture
def stepped_clock(tmp_path, monkeypatch) -> Iterator[SteppedClock]:
    clock = SteppedClock(tmp_path, monkeypatch)
    yield clock
    clock.close()


def uptime_line(run: LocalRun, name: str) -> list[tuple[Line, float]]:
    """A file's lines, each with its time on the device's uptime line (as the host puts it)."""
    lines = run.lines(name)
    clocks = [line for line in lines if isinstance(line, ClockLine)]
    assert len(clocks) == 1, f"{name}: the clock started again: {clocks}"
    offset = clocks[0].offset_us
    return [(line, (line.time_us + offset) / 1e6) for line in lines]


def wait_for_measure(run: LocalRun, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not any(
        isinstance(line, PhaseLine) and line.phase == "measure" for line in run.lines("events")
    ):
        assert time.monotonic() < deadline, "the run never began measuring"
        time.sleep(0.02)


def run_through_a_step(
    tmp_path: Path, clock: SteppedClock, shell: str, step_s: float, run: str
) -> tuple[LocalRun, float, float, float]:
    """A local run whose clock steps by ``step_s`` 1 s into its measurement; the run, the
    boot time at its launch and at its end, and the host's seconds from its measurement's
    start to its end."""
    profile = profile_for(make_sysfs(tmp_path / "sys"), tmp_path / "spool", run)
    launched = boottime()
    local = launch_locally(shell, profile, RunOptions(calibrations=3))
    try:
        wait_for_measure(local)
        measuring = time.monotonic()
        time.sleep(1.0)
        clock.step(step_s)
        assert local.wait(timeout=60.0) == "completed"
    finally:
        if local.state() == "running":
            local.control("stop", str(local.run_dir), "10")
    return local, launched, boottime(), time.monotonic() - measuring


def assert_timed_across_a_step(processes: list[ProcessLine]) -> None:
    """Every `sleep 0.05` took its 50 ms but less than a second, except that the one the
    step was noticed in is off by what measuring the step missed: up to two of uptime's
    10 ms ticks on a busy machine (qtop_read_at_tick)."""
    durations = sorted((p.end_us - p.start_us) / 1e6 for p in processes)
    assert durations[0] >= 0.05 - 0.02, durations
    assert durations[1] >= 0.05 and durations[-1] < 1.0, durations


@pytest.mark.parametrize(
    ("shell", "step_s"),
    [
        pytest.param("mksh", 3600.5, id="mksh-forward"),
        pytest.param("dash", -3600.25, id="dash-back"),
        pytest.param("busybox", -3600.25, id="busybox-back", marks=pytest.mark.slow),
        pytest.param("busybox", 3600.5, id="busybox-forward", marks=pytest.mark.slow),
        pytest.param("mksh", -3600.25, id="mksh-back", marks=pytest.mark.slow),
        pytest.param("dash", 3600.5, id="dash-forward", marks=pytest.mark.slow),
    ],
)
def test_a_run_whose_clock_steps_goes_on_as_if_it_had_not(tmp_path, stepped_clock, shell, step_s):
    run, launched, ended, measured_s = run_through_a_step(
        tmp_path,
        stepped_clock,
        agent_shell(shell),
        step_s,
        "{command: 'sleep 0.05', warmup: 2, duration: 2s, timeout: 30s}",
    )
    # Its duration, neither ended at the step nor stretched by it.
    assert measured_s >= 2.0
    timed = uptime_line(run, "events")
    events = [line for line, _t in timed]
    phase_start = {line.phase: t for line, t in timed if isinstance(line, PhaseLine)}
    assert 2.0 <= phase_start["done"] - phase_start["measure"] < 2.0 + measured_s
    # Every time written is on the uptime line, between the launch and the end.
    assert all(launched - 0.01 <= t <= ended + 0.01 for _line, t in timed)
    processes = [line for line in events if isinstance(line, ProcessLine)]
    assert_timed_across_a_step(processes)
    assert not any(p.timed_out or p.exit_status for p in processes)
    # The step is said once, measured to within 50 ms.
    logs = [line.text for line in events if isinstance(line, AgentLogLine)]
    notes = [match for text in logs if (match := STEP_NOTE.search(text))]
    assert len(notes) == 1, logs
    size, direction = float(notes[0].group(1)), notes[0].group(2)
    assert direction == ("forward" if step_s > 0 else "back")
    assert abs(size - abs(step_s)) < 0.05
    # The sampler's ticks too: one clock, none missing for the step, all on the line.
    ticks = [t for line, t in uptime_line(run, "samples") if isinstance(line, SampleLine)]
    assert ticks == sorted(ticks)
    assert all(launched - 0.01 <= t <= ended + 0.01 for t in ticks)
    assert max(b - a for a, b in itertools.pairwise(ticks)) < 1.0


@pytest.mark.slow
def test_a_timeout_is_not_brought_forward_by_a_step(tmp_path, stepped_clock):
    """A 2.5 s command, a 5 s timeout, the clock stepped 3600 s forward 1 s in: the
    watchdog must not take the step for time gone by (busybox: 64-bit arithmetic, so an
    overdue time is seen as overdue)."""
    run, _launched, _ended, _measured = run_through_a_step(
        tmp_path,
        stepped_clock,
        agent_shell("busybox"),
        3600.0,
        "{command: 'sleep 2.5', warmup: 0, iterations: 2, timeout: 5s}",
    )
    processes = [line for line in run.lines("events") if isinstance(line, ProcessLine)]
    assert [p.phase for p in processes].count("measure") == 2
    assert not any(p.timed_out for p in processes)


def test_a_step_shorter_than_the_sampler_notices_on_its_own_is_taken_off_too(
    tmp_path, stepped_clock
):
    """Forward by 0.9 s, sampling every 50 ms: not 18 missed ticks and times 0.9 s ahead
    (the sampler starts its schedule again by itself only after 1000 s)."""
    run, launched, ended, _measured = run_through_a_step(
        tmp_path,
        stepped_clock,
        agent_shell("busybox"),
        0.9,
        "{command: 'sleep 0.05', duration: 2s}",
    )
    ticks = [(line, t) for line, t in uptime_line(run, "samples") if isinstance(line, SampleLine)]
    assert all(launched - 0.01 <= t <= ended + 0.01 for _line, t in ticks)
    slots = [line.slot for line, _t in ticks]
    # A busy machine may lose a tick now and then; the step alone would lose 18.
    assert sum(b - a - 1 for a, b in itertools.pairwise(slots)) < 10


async def test_the_recording_of_a_stepped_run_stays_on_one_timeline(tmp_path, stepped_clock):
    """Through the host, as `qtop run --local` records it: a run stepped 3600.5 s forward
    records its iterations, samples and phases on one timeline, with no gap and the note."""
    source = local_source(
        tmp_path, make_sysfs(tmp_path / "sys"), "{command: 'sleep 0.05', warmup: 0, duration: 3s}"
    )
    recording = asyncio.create_task(record(source, tmp_path / "run.jsonl"))
    deadline = time.monotonic() + 60.0
    while not any(
        "\tmeasure\t" in events.read_text() for events in tmp_path.glob("spool/*/events")
    ):
        assert time.monotonic() < deadline and not recording.done(), "the run never began measuring"
        await asyncio.sleep(0.02)
    started = time.monotonic()
    await asyncio.sleep(1.0)
    stepped_clock.step(3600.5)
    events = await asyncio.wait_for(recording, timeout=60.0)
    elapsed = time.monotonic() - started
    assert events[-1]["reason"] == "completed"
    assert not [e for e in of_kind(events, "link") if e["state"] == "gap"]
    notes = [e["text"] for e in of_kind(events, "log") if STEP_NOTE.search(e["text"])]
    assert len(notes) == 1
    phases = {e["phase"]: e["t"] for e in of_kind(events, "phase")}
    assert 3.0 <= phases["done"] - phases["measure"] < elapsed + 1.0
    iterations = of_kind(events, "iteration")
    assert all(0.04 <= e["latency_s"] < 1.0 for e in iterations)
    ends = [e["end"] for e in iterations]
    assert ends == sorted(ends)
    ticks = [e["t"] for e in of_kind(events, "sample")]
    assert ticks == sorted(ticks)
    assert max(b - a for a, b in itertools.pairwise(ticks)) < 1.0
    assert ticks[-1] - ticks[0] < elapsed + 10.0


def test_a_step_found_as_an_iteration_starts_stays_out_of_its_window(
    tmp_path, stepped_clock, monkeypatch
):
    """dash stamps an iteration's start in the runner, with a forked `date`: a step found
    by that reading is measured (up to two of uptime's 10 ms ticks) and noted after it,
    and must not be timed as part of the command. The runner holds itself (SIGSTOP, a
    test hook) between two measured iterations while the clock steps."""
    monkeypatch.setenv("QTOP_TEST_HOLD", "runner-between")
    profile = profile_for(
        make_sysfs(tmp_path / "sys"),
        tmp_path / "spool",
        "{command: 'sleep 0.05', warmup: 0, iterations: 3}",
    )
    run = launch_locally(agent_shell("dash"), profile, RunOptions(calibrations=3))
    try:
        deadline = time.monotonic() + 60.0
        while Path(f"/proc/{run.pgid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "T":
            assert time.monotonic() < deadline, "the runner never held between iterations"
            time.sleep(0.01)
        stepped_clock.step(3600.5)
        os.kill(run.pgid, signal.SIGCONT)
        assert run.wait(timeout=60.0) == "completed"
    finally:
        if run.state() == "running":
            run.control("stop", str(run.run_dir), "10")
    events = run.lines("events")
    (note,) = [
        line for line in events if isinstance(line, AgentLogLine) and STEP_NOTE.search(line.text)
    ]
    after = [line for line in events if isinstance(line, ProcessLine) and line.seq > note.seq]
    assert [p.index for p in after] == [1, 2]
    # The start is read again after the note: the measuring is not in the window.
    assert after[0].start_us > note.time_us


def test_a_step_between_the_fork_and_the_commands_own_stamp_is_placed(
    tmp_path, stepped_clock, monkeypatch
):
    """With a builtin clock the command's subshell stamps the start itself, after the
    runner's last reading: a step in between is found only by the end's reading, and
    the stamp is put on the side of the step nearer the runner's reading. The second
    command holds itself (SIGSTOP, a test hook) before its stamp while the clock steps."""
    monkeypatch.setenv("QTOP_TEST_HOLD", "command-start")
    profile = profile_for(
        make_sysfs(tmp_path / "sys"),
        tmp_path / "spool",
        "{command: 'sleep 0.05', warmup: 0, iterations: 3}",
    )
    run = launch_locally(agent_shell("mksh"), profile, RunOptions(calibrations=3))
    try:
        deadline = time.monotonic() + 60.0
        while not (held := [pid for pid in group_members(run.pgid) if state_of(pid) == "T"]):
            assert time.monotonic() < deadline, "the command never held before its stamp"
            time.sleep(0.01)
        stepped_clock.step(3600.5)
        os.kill(held[0], signal.SIGCONT)
        assert run.wait(timeout=60.0) == "completed"
    finally:
        if run.state() == "running":
            run.control("stop", str(run.run_dir), "10")
    events = run.lines("events")
    assert [
        line for line in events if isinstance(line, AgentLogLine) and STEP_NOTE.search(line.text)
    ]
    processes = [line for line in events if isinstance(line, ProcessLine)]
    assert len(processes) == 3
    assert_timed_across_a_step(processes)


def state_of(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return ""


def group_members(pgid: int) -> list[int]:
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == pgid:
            members.append(int(stat.parent.name))
    return members

"""Whatever moment anything dies, no process of a run is orphaned and a stop leaves nothing.

Runs with a timeout (a watchdog per iteration) are stopped, left to complete,
or have their runner or sampler killed, each at a random point of the run
(after a random number of iterations, so the moments vary with the load, and
the assertions do not). While the run goes, every process carrying the run's
token must have a parent that carries it too (an orphaned sleep would be
reparented away); at the end none may be left.
"""

import contextlib
import os
import random
import shutil
import signal
import time
from pathlib import Path

import pytest

from qtop.device.plan import RunOptions
from qtop.device.protocol import CalibrationLine, ClockLine, ProcessLine, SamplerEndLine

from .helpers import (
    AGENT_SHELLS,
    LocalRun,
    group_alive,
    launch_locally,
    make_sysfs,
    profile_for,
    shadow_command,
    shell_id,
)

SETSID = shutil.which("setsid")

ACTIONS = ("stop", "complete", "kill-runner", "kill-sampler")


def token_processes(token: str) -> dict[int, tuple[int, str]]:
    """Live processes whose environment carries ``token``: pid -> (ppid, state)."""
    found = {}
    needle = f"QTOP_RUN_TOKEN={token}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if needle not in (entry / "environ").read_bytes().split(b"\0"):
                continue
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] not in ("Z", "X"):
            found[int(entry.name)] = (int(fields[1]), fields[0])
    return found


def orphans(token: str, leader: int) -> list[str]:
    """Processes carrying ``token`` whose parent does not, each described.

    One pass over /proc is not a snapshot: once pids wrap, a child can be read
    before its parent, which may have ended in between after the child did (a
    watchdog is killed once its sleep is dead). A candidate counts once it is
    read again, still alive, with a parent that does not carry the token.
    """
    processes = token_processes(token)
    found = []
    for pid, (parent, _) in processes.items():
        if pid == leader or parent in processes:
            continue
        again = token_processes(token)
        if pid in again and again[pid][0] not in again:
            found.append(describe(pid, again[pid][0]))
    return found


def command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
    except OSError:
        return "(gone)"


def describe(pid: int, parent: int) -> str:
    return f"pid {pid} [{command_line(pid)}], parent {parent} [{command_line(parent)}]"


def left(token: str) -> list[str]:
    return [describe(pid, parent) for pid, (parent, _) in token_processes(token).items()]


def sampler_pid(run) -> int | None:
    wanted = f"{run.run_dir}/sampler.sh".encode()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                arguments = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if wanted in arguments:
                return int(entry.name)
    return None


def wait_until(predicate, what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"hang guard: {what} within {timeout} s")
        time.sleep(0.01)


def trial(shell: str, tmp: Path, rng: random.Random) -> LocalRun:
    action = rng.choice(ACTIONS)
    iterations = 12
    sleep = rng.choice(("0.005", "0.02", "0.05"))
    profile = profile_for(
        make_sysfs(tmp / "sys"),
        tmp / "spool",
        f"{{command: 'sleep {sleep}', warmup: 0, iterations: {iterations}, timeout: 5s}}",
        "sample_interval: 20ms",
    )
    run = launch_locally(shell, profile, RunOptions(calibrations=2))
    token = (run.run_dir / "token").read_text().strip()
    target = rng.randrange(0, iterations)
    checked = False
    done = 0
    try:
        while run.state() == "running":
            done = sum(isinstance(line, ProcessLine) for line in run.lines("events"))
            found = orphans(token, run.pgid)
            assert found == [], f"{action} after {done} iterations: orphaned {found}"
            checked = True
            if done >= target:
                break
            time.sleep(rng.uniform(0, 0.02))
        if action == "stop":
            answer = run.control("stop", str(run.run_dir), "50")
            assert answer.startswith("stopped\t") or run.state() != "running", answer
        elif action == "kill-runner":
            os.kill(run.pgid, signal.SIGKILL)
            answer = run.control("stop", str(run.run_dir), "50")
            assert answer.startswith("stopped\t"), answer
        else:
            if action == "kill-sampler":
                pid = sampler_pid(run)
                # The run may have ended (and its sampler with it) since.
                with contextlib.suppress(ProcessLookupError):
                    if pid is not None:
                        os.kill(pid, signal.SIGKILL)
            wait_until(lambda: run.state() != "running", "the run ending")
        wait_until(lambda: not group_alive(run.pgid), "the group emptying")
        remaining = left(token)
        assert remaining == [], f"{action} after {done} iterations left {remaining}"
        assert checked or run.state() != "running"
    finally:
        if group_alive(run.pgid):
            os.killpg(run.pgid, signal.SIGKILL)
    return run


def trials(shell: str, tmp_path: Path, count: int, seed: int) -> list[LocalRun]:
    rng = random.Random(seed)
    return [trial(shell, tmp_path / str(index), rng) for index in range(count)]


@pytest.mark.parametrize("shell", AGENT_SHELLS, ids=shell_id)
def test_stops_and_deaths_at_random_moments_leave_no_process(tmp_path, shell):
    trials(shell, tmp_path, 4, seed=len(shell))


@pytest.mark.parametrize(
    "shell", [shell for shell in AGENT_SHELLS if shell_id(shell) != "dash"], ids=shell_id
)
def test_with_a_timed_read_but_a_forked_clock_no_process_is_left(tmp_path, shell, monkeypatch):
    """A shell with `read -t` but no `$EPOCHREALTIME` (an older mksh) forks `date` for
    its clock, in the watchdog too: ending the watchdog must end that fork first."""
    monkeypatch.setenv("QTOP_NO_EPOCH", "1")
    # A runner killed at once (a trial's moment may be its start) writes no line at all.
    runs = trials(shell, tmp_path, 3, seed=2000 + len(shell))
    started = [lines for run in runs if (lines := run.lines("events"))]
    assert started, "no trial's runner wrote its clock line: the test checks nothing"
    for lines in started:
        assert isinstance(lines[0], ClockLine)
        assert (lines[0].clock, lines[0].sleep) == ("date", "read")


@pytest.mark.slow
@pytest.mark.parametrize("shell", AGENT_SHELLS, ids=shell_id)
def test_many_stops_and_deaths_at_random_moments_leave_no_process(tmp_path, shell):
    trials(shell, tmp_path, 30, seed=1000 + len(shell))


@pytest.mark.skipif(SETSID is None, reason="needs setsid (util-linux, toybox, busybox)")
@pytest.mark.parametrize("shell", AGENT_SHELLS, ids=shell_id)
def test_a_launcher_outliving_its_parent_is_not_taken_for_a_process_of_the_run(
    tmp_path, shell, monkeypatch
):
    """A setsid that stays alive after starting the run (util-linux's forks and exits,
    and may be the last to be scheduled) is reparented away from the launch: it must
    not carry the run's token, or it would be an orphan of the run."""
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    seen = tmp_path / "launcher.env"
    wrapper = shadow_command(
        monkeypatch,
        tmp_path / "bin",
        "setsid",
        f'#!/bin/sh\nenv >"{seen}"\n"{SETSID}" "$@" &\nread -r _ <"{gate}"\n',
    )
    profile = profile_for(
        make_sysfs(tmp_path / "sys"),
        tmp_path / "spool",
        "{command: 'sleep 0.05', warmup: 0, iterations: 1000, timeout: 5s}",
        "sample_interval: 20ms",
    )
    run = launch_locally(shell, profile)
    token = (run.run_dir / "token").read_text().strip()
    try:
        lingering = [
            pid
            for pid in map(int, filter(str.isdigit, os.listdir("/proc")))
            if command_line(pid).endswith(f"{wrapper} {shell} {run.run_dir}/run.sh {run.run_dir}")
        ]
        assert lingering, "the launcher did not stay alive: the test checks nothing"
        assert orphans(token, run.pgid) == []
        assert "QTOP_RUN_TOKEN" not in seen.read_text()
        assert run.pgid in token_processes(token)
        answer = run.control("stop", str(run.run_dir), "50")
        assert answer.startswith("stopped\t"), answer
        assert left(token) == []
    finally:
        with open(gate, "w"):
            pass
        if group_alive(run.pgid):
            os.killpg(run.pgid, signal.SIGKILL)


def process_state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


def launch_held(
    monkeypatch, hold: str, tmp_path: Path, shell: str, run: str, interval: str, calibrations: int
) -> LocalRun:
    """A run whose agent holds itself (SIGSTOP, QTOP_TEST_HOLD) at the named point;
    ``run`` is the profile's run mapping, with no warm-up."""
    monkeypatch.setenv("QTOP_TEST_HOLD", hold)
    profile = profile_for(
        make_sysfs(tmp_path / "sys"),
        tmp_path / "spool",
        "{warmup: 0, " + run.removeprefix("{"),
        f"sample_interval: {interval}",
    )
    return launch_locally(shell, profile, RunOptions(calibrations=calibrations))


@pytest.mark.parametrize("runner", ("alive", "killed"))
@pytest.mark.parametrize("shell", AGENT_SHELLS, ids=shell_id)
def test_a_stop_just_before_the_samplers_sleep_ends_it_without_a_kill(
    tmp_path, shell, runner, monkeypatch
):
    """The sampler is held (SIGSTOP, a test hook) after its last look at the stop flag
    and before its sleep, which is a 30 s interval: the stop continues it, and its sleep
    (a forked `sleep` under dash) is ended, by the runner or, with the runner killed, by
    the stop itself. The group ends on SIGTERM, the sampler writing its last line."""
    run = launch_held(
        monkeypatch,
        "sampler-sleep",
        tmp_path,
        shell,
        "{command: 'sleep 1000', iterations: 1}",
        "30s",
        1,
    )
    token = (run.run_dir / "token").read_text().strip()
    try:
        wait_until(lambda: sampler_pid(run) is not None, "the sampler starting")
        sampler = sampler_pid(run)
        assert sampler is not None
        wait_until(lambda: process_state(sampler) == "T", "the sampler holding before its sleep")
        if runner == "killed":
            os.kill(run.pgid, signal.SIGKILL)
        answer = run.control("stop", str(run.run_dir), "50")
        assert answer.splitlines()[0].split("\t") == ["stopped", str(run.pgid), "TERM"], answer
        assert isinstance(run.lines("samples")[-1], SamplerEndLine)
        assert left(token) == []
    finally:
        if group_alive(run.pgid):
            os.killpg(run.pgid, signal.SIGKILL)


@pytest.mark.parametrize("shell", AGENT_SHELLS, ids=shell_id)
def test_a_stop_before_the_first_calibration_still_stamps_every_line(tmp_path, shell, monkeypatch):
    """The runner is held (SIGSTOP, a test hook) just before its first calibration; the
    stop continues it with its flag set, so no calibration runs: the calibration line
    has no durations, and a time all the same (it had none, and the host refused it)."""
    run = launch_held(
        monkeypatch,
        "runner-calibrate",
        tmp_path,
        shell,
        "{command: 'true', iterations: 5}",
        "20ms",
        3,
    )
    try:
        wait_until(lambda: process_state(run.pgid) == "T", "the runner holding")
        answer = run.control("stop", str(run.run_dir), "50")
        assert answer.startswith("stopped\t"), answer
        wait_until(lambda: run.state() != "running", "the run ending")
        events = run.lines("events")
        calibration = next(line for line in events if isinstance(line, CalibrationLine))
        assert calibration.durations_us == ()
        assert events[0].time_us <= calibration.time_us <= events[-1].time_us
        assert not any(isinstance(line, ProcessLine) for line in events)
    finally:
        if group_alive(run.pgid):
            os.killpg(run.pgid, signal.SIGKILL)


@pytest.mark.skipif(SETSID is None, reason="needs setsid (util-linux, toybox, busybox)")
@pytest.mark.parametrize("shell", AGENT_SHELLS, ids=shell_id)
def test_a_stop_ends_what_the_command_started_in_a_session_of_its_own(tmp_path, shell):
    """A daemon the command started (setsid) is out of the group's reach; it still
    carries the run's token, and the stop ends it too."""
    profile = profile_for(
        make_sysfs(tmp_path / "sys"),
        tmp_path / "spool",
        "{command: 'setsid sleep 1000 & sleep 1000', warmup: 0, iterations: 1}",
        "sample_interval: 20ms",
    )
    run = launch_locally(shell, profile, RunOptions(calibrations=1))
    token = (run.run_dir / "token").read_text().strip()

    def escaped() -> list[int]:
        found = []
        for pid in token_processes(token):
            with contextlib.suppress(OSError):
                stat = Path(f"/proc/{pid}/stat").read_text()
                if stat.rsplit(")", 1)[1].split()[2] != str(run.pgid):
                    found.append(pid)
        return found

    try:
        wait_until(lambda: escaped() != [], "the command's daemon starting")
        daemon = escaped()
        answer = run.control("stop", str(run.run_dir), "50")
        records = [line.split("\t") for line in answer.splitlines()]
        assert ["stragglers", *map(str, daemon)] in records, answer
        assert [r[:2] for r in records if r[0] == "stopped"] == [["stopped", str(run.pgid)]], answer
        assert left(token) == []
    finally:
        for pid in token_processes(token):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if group_alive(run.pgid):
            os.killpg(run.pgid, signal.SIGKILL)


def process_environment(pid: int) -> bytes:
    """Empty once the process is gone or a zombie."""
    try:
        return Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return b""


@pytest.mark.parametrize("tools", ["all", "no tr or grep"])
def test_status_tells_a_killed_runner_from_a_live_one(tmp_path, tools, monkeypatch):
    """The host ends a quiet run whose runner is gone: a device without `tr` or `grep`
    (which prove the run's token) must still never have a live runner taken for gone."""
    profile = profile_for(
        make_sysfs(tmp_path / "sys"),
        tmp_path / "spool",
        "{command: 'sleep 30', warmup: 0, iterations: 1}",
        "sample_interval: 20ms",
    )
    run = launch_locally("/bin/sh", profile, RunOptions(calibrations=1))
    try:
        if tools != "all":
            bin_dir = tmp_path / "bin"
            bin_dir.mkdir()
            for tool in ("ls", "id", "wc", "cat", "sleep"):
                (bin_dir / tool).symlink_to(shutil.which(tool))
            monkeypatch.setenv("PATH", str(bin_dir))
        wait_until(lambda: run.state() == "running", "the run starting")
        assert run.control("status", str(run.run_dir)) == "status\trunning\talive\n"
        os.kill(run.pgid, signal.SIGKILL)
        wait_until(lambda: not process_environment(run.pgid), "the runner dying")
        assert run.control("status", str(run.run_dir)) == "status\trunning\tgone\n"
    finally:
        if group_alive(run.pgid):
            os.killpg(run.pgid, signal.SIGKILL)

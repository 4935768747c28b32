"""Talking to the device agent over a transport: probe, launch, follow, stop.

Each operation is one command line built by the quoting builder, with the
agent's shell text on stdin (``sh -s``): nothing is installed on the device,
and the run's own copy of the scripts lives in its spool directory. The
agent answers in escaped records (``qtop.device.protocol.split_fields``);
what it says comes from the device and goes through ``plain`` before it is
shown to anyone.
"""

from __future__ import annotations

from dataclasses import dataclass

from qtop.device.plan import DEVICE_VARIABLE, RUN_ID, RunPlan, agent_script, launch_script
from qtop.device.probe import ProbeResult, parse_probe
from qtop.device.protocol import ProtocolError, split_fields
from qtop.errors import RunFailed, UsageError
from qtop.profiles import DeviceProfile
from qtop.textsafe import plain
from qtop.transport.base import Transport
from qtop.transport.command import exports, join, quote

PROBE_TIMEOUT_S = 60.0
CONTROL_TIMEOUT_S = 30.0
STOP_GRACE_S = 5.0
FOLLOWED_FILES = ("events", "samples", "stdout")


@dataclass(frozen=True, slots=True)
class LaunchedRun:
    run_dir: str
    pgid: int
    # How the run was detached (job control and setsid, python3, ...).
    detached_with: str = ""


@dataclass(frozen=True, slots=True)
class LeftoverRun:
    """A run from an earlier session whose processes are still alive."""

    run_id: str
    run_dir: str
    pgid: int
    started: str
    profile: str


@dataclass(frozen=True, slots=True)
class StopOutcome:
    """How a stop went: the signal that ended the group, and the files' final sizes."""

    pgid: int
    signal: str
    sizes: dict[str, int]


def probe_script() -> str:
    """The probe with the shared functions it uses, ready for ``sh -s``."""
    return agent_script("lib.sh") + agent_script("probe.sh")


def check_sysfs_root(root: str) -> str:
    if root.startswith("$") and not DEVICE_VARIABLE.match(root):
        raise UsageError(
            f"device.sysfs_root: {root!r} must be '$NAME' or '$NAME/path' with NAME a "
            "variable of the device's environment",
            "write e.g. '$QTOP_SIM_SYSFS' or an absolute path such as /sys",
        )
    return root


async def probe(transport: Transport, device: DeviceProfile, where: str) -> ProbeResult:
    root = check_sysfs_root(device.sysfs_root)
    meters = [meter.path for meter in device.power_meter]
    script = exports(device.env) + probe_script()
    result = await transport.run(
        join(["sh", "-s", "--", root, device.spool_dir, *meters]),
        stdin=script.encode(),
        timeout=PROBE_TIMEOUT_S,
    )
    return parse_probe(result.text, where)


def _control_command(*args: str) -> str:
    return join(["sh", "-s", "--", *args])


def _control_script() -> bytes:
    return (agent_script("lib.sh") + agent_script("control.sh")).encode()


async def _control(transport: Transport, *args: str) -> str:
    result = await transport.run(
        _control_command(*args), stdin=_control_script(), timeout=CONTROL_TIMEOUT_S
    )
    return result.text


def _records(text: str) -> list[list[str]]:
    """The agent's answer as records; a line that is not one is left out."""
    records = []
    for line in text.splitlines():
        try:
            records.append(split_fields(line))
        except ProtocolError:
            continue
    return records


def _pgid(text: str) -> int | None:
    return int(text) if text.isascii() and text.isdigit() and int(text) > 1 else None


async def launch(transport: Transport, plan: RunPlan) -> LaunchedRun:
    result = await transport.run(
        join(["sh", "-s"]), stdin=launch_script(plan).encode(), timeout=CONTROL_TIMEOUT_S
    )
    for fields in _records(result.text):
        if fields[0] == "launched" and len(fields) == 4 and _pgid(fields[2]) is not None:
            return LaunchedRun(fields[1], int(fields[2]), fields[3])
        if fields[0] == "error":
            raise RunFailed(
                f"the run could not start on the device: {plain(' '.join(fields[1:]))}",
                f"look at {plain(plan.run_dir)}/agent.err on the device",
            )
    detail = result.error_text or result.text.strip() or f"exit status {result.exit_status}"
    raise RunFailed(f"the run could not start on the device: {plain(detail[-500:])}")


async def leftovers(transport: Transport, spool: str) -> list[LeftoverRun]:
    """Runs of this user's qtop in ``spool`` that are still running (checked on the device)."""
    found = []
    for fields in _records(await _control(transport, "leftovers", spool)):
        if fields[0] == "error":
            raise RunFailed(
                f"cannot look for leftover runs: {plain(' '.join(fields[1:]))}",
                "check device.spool_dir",
            )
        if fields[0] != "run" or len(fields) != 5 or not RUN_ID.match(fields[1]):
            continue
        pgid = _pgid(fields[2])
        if pgid is None:
            continue
        run_id = fields[1]
        found.append(
            LeftoverRun(
                run_id, f"{spool.rstrip('/')}/{run_id}", pgid, plain(fields[3]), plain(fields[4])
            )
        )
    return found


def _sizes(records: list[list[str]]) -> dict[str, int]:
    sizes = {}
    for fields in records:
        if fields[0] == "size" and len(fields) == 3 and fields[2].isascii() and fields[2].isdigit():
            sizes[fields[1]] = int(fields[2])
    return sizes


async def stop(transport: Transport, run_dir: str, grace_s: float = STOP_GRACE_S) -> StopOutcome:
    """TERM the run's process group, KILL what is left after ``grace_s``, check none remains."""
    text = await _control(transport, "stop", run_dir, str(max(1, round(grace_s * 10))))
    records = _records(text)
    for fields in records:
        if fields[0] == "stopped" and len(fields) == 3 and _pgid(fields[1]) is not None:
            return StopOutcome(int(fields[1]), plain(fields[2]), _sizes(records))
        if fields[0] == "alive" and len(fields) == 2:
            group = plain(fields[1])
            raise RunFailed(
                f"processes of the run's group {group} are still alive after SIGKILL",
                f"look at them on the device with: ps -eo pid,pgid,stat,args | grep {group}",
            )
        if fields[0] == "error":
            raise RunFailed(
                f"cannot stop the run in {plain(run_dir)}: {plain(' '.join(fields[1:]))}",
                "nothing was signalled; look at the run directory on the device",
            )
    raise RunFailed(f"cannot stop the run in {plain(run_dir)}: no answer from the device")


async def sizes(transport: Transport, run_dir: str) -> dict[str, int]:
    return _sizes(_records(await _control(transport, "sizes", run_dir)))


@dataclass(frozen=True, slots=True)
class RunStatus:
    """What the run's directory says of it, and whether its runner is alive."""

    state: str
    runner_alive: bool

    @property
    def died(self) -> bool:
        """The runner is gone without writing its end: killed from outside qtop."""
        return self.state == "running" and not self.runner_alive


async def status(transport: Transport, run_dir: str) -> RunStatus | None:
    """None when the device cannot say (the directory is gone: following it says so)."""
    for fields in _records(await _control(transport, "status", run_dir)):
        if fields[0] == "status" and len(fields) == 3:
            return RunStatus(plain(fields[1]), fields[2] == "alive")
    return None


async def advance(transport: Transport, run_dir: str, variant: int) -> None:
    await _control(transport, "advance", run_dir, str(variant))


async def remove(transport: Transport, run_dir: str) -> None:
    await _control(transport, "remove", run_dir)


async def kill_followers(transport: Transport, pids: list[int]) -> None:
    """End tail processes of an earlier connection (SSH cannot signal them for root)."""
    pids = [pid for pid in pids if pid > 1]
    if pids:
        await transport.run(
            join(["kill", *map(str, pids)]) + " 2>/dev/null; true", timeout=CONTROL_TIMEOUT_S
        )


def follow_command(path: str, offset: int, tail_sleep: bool) -> str:
    """Print this shell's pid on a line, then become ``tail`` from byte ``offset`` on.

    The pid lets qtop end the tail later; ``gone`` instead means the file is
    not there (the run directory was removed, or the device rebooted).
    """
    sleep = ["-s", "0.1"] if tail_sleep else []
    tail = join(["tail", "-c", f"+{offset + 1}", *sleep, "-f", path])
    return f"[ -r {quote(path)} ] || {{ echo gone; exit 3; }}; echo $$; exec {tail}"

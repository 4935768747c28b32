"""What ``qtop probe`` asks the device beyond the run's probe (inspect.sh).

The shell's own binary, the QNN/Genie tools and qnn-net-run's version, the
hwmon devices a power meter could come from, the processes holding the NPU,
and a short sampling window of chosen files: from the window come how often
each sensor really refreshes and, for a power supply, which sign its
``current_now`` has against its ``status`` right now.
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

from qtop.device.plan import agent_script
from qtop.device.protocol import ProtocolError, split_fields
from qtop.errors import RunFailed
from qtop.transport.base import Transport
from qtop.transport.command import exports, join

INSPECT_TIMEOUT_S = 60.0
# mksh's arithmetic wraps at 32 bits: its microsecond counts go round every 71 minutes.
WRAP = 2**32
TOOLS = ("qnn-net-run", "qnn-profile-viewer", "genie-t2t-run")


@dataclass(frozen=True, slots=True)
class HwmonFound:
    path: str
    name: str
    inputs: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class NpuHolder:
    """A process that holds the NPU: an HTP tool by name, or a FastRPC handle on the CDSP."""

    pid: int
    command: str
    reason: str


@dataclass(frozen=True, slots=True)
class Inspection:
    shell_binary: str = ""
    tools: dict[str, str] = field(default_factory=dict)
    versions: dict[str, tuple[str, ...]] = field(default_factory=dict)
    hwmon: tuple[HwmonFound, ...] = ()
    npu_holders: tuple[NpuHolder, ...] = ()
    processes_scanned: int = 0
    processes_hidden: int = 0
    watched: tuple[str, ...] = ()
    window: tuple[tuple[float, tuple[str, ...]], ...] = ()

    def series(self, path: str) -> list[tuple[float, str]]:
        """(uptime seconds, raw text) of one watched file over the window."""
        if path not in self.watched:
            return []
        index = self.watched.index(path)
        return [(t, values[index]) for t, values in self.window if index < len(values)]

    def last(self, path: str) -> str | None:
        series = self.series(path)
        return series[-1][1] if series else None


@dataclass(frozen=True, slots=True)
class Refresh:
    """How often a watched file changed over the window."""

    changes: int
    window_s: float
    period_s: float | None

    def describe(self) -> str:
        if self.period_s is not None:
            return (
                f"refreshes about every {self.period_s:.2g} s ({self.changes} changes in "
                f"{self.window_s:.1f} s)"
            )
        if self.changes == 0:
            return f"did not change in {self.window_s:.1f} s (a steady value, or a slower sensor)"
        return f"changed once in {self.window_s:.1f} s (refreshes every second or slower)"


def inspect_command(
    root: str, workdir: str, window_s: float, interval_s: float, files: Sequence[str]
) -> str:
    window_ms = max(0, round(window_s * 1000))
    interval_ms = max(10, round(interval_s * 1000))
    return join(["sh", "-s", "--", root, workdir, str(window_ms), str(interval_ms), *files])


async def inspect(
    transport: Transport,
    *,
    root: str,
    workdir: str,
    env: dict[str, str],
    window_s: float,
    interval_s: float,
    files: Sequence[str],
    where: str,
) -> Inspection:
    script = exports(env) + agent_script("lib.sh") + agent_script("inspect.sh")
    result = await transport.run(
        inspect_command(root, workdir, window_s, interval_s, files),
        stdin=script.encode(),
        timeout=INSPECT_TIMEOUT_S + window_s,
    )
    return parse_inspection(result.text, tuple(files), where)


def parse_inspection(text: str, watched: tuple[str, ...], where: str = "the device") -> Inspection:
    shell = ""
    tools: dict[str, str] = {}
    versions: dict[str, list[str]] = {}
    hwmon: list[HwmonFound] = []
    holders: dict[int, NpuHolder] = {}
    scanned = hidden = 0
    window: list[tuple[float, tuple[str, ...]]] = []
    complete = False
    for line in text.splitlines():
        kind, _, rest = line.partition("\t")
        try:
            fields = split_fields(rest) if rest else []
        except ProtocolError:
            continue
        if kind == "end":
            complete = True
        elif kind == "shell":
            shell = _at(fields, 0)
        elif kind == "tool" and fields:
            tools[fields[0]] = _at(fields, 1)
        elif kind == "version" and len(fields) >= 2:
            versions.setdefault(fields[0], []).append("\t".join(fields[1:]))
        elif kind == "hwmon" and fields:
            inputs = tuple(f for f in _at(fields, 2).split(",") if f)
            hwmon.append(HwmonFound(fields[0], _at(fields, 1), inputs))
        elif kind == "npu" and len(fields) >= 3 and fields[0].isdigit():
            pid = int(fields[0])
            if pid not in holders or fields[2] == "fastrpc":
                holders[pid] = NpuHolder(pid, fields[1], fields[2])
        elif kind == "npu_scan" and len(fields) >= 2:
            scanned = _number(fields[0])
            hidden = _number(fields[1])
        elif kind == "w" and fields and fields[0].lstrip("-").isdigit():
            values = tuple(fields[1:]) + ("",) * (len(watched) - len(fields) + 1)
            micros = _unwrapped(int(fields[0]), window[-1][0] * 1e6 if window else None)
            window.append((micros / 1e6, values[: len(watched)]))
    if not complete:
        raise RunFailed(
            f"{where}: the device inspection stopped before its end (the shell or the link failed)",
            "check that 'sh' works on the device and try again",
        )
    return Inspection(
        shell_binary=shell,
        tools=tools,
        versions={name: tuple(lines) for name, lines in versions.items()},
        hwmon=tuple(hwmon),
        npu_holders=tuple(sorted(holders.values(), key=lambda h: h.pid)),
        processes_scanned=scanned,
        processes_hidden=hidden,
        watched=watched,
        window=tuple(window),
    )


def _unwrapped(micros: int, previous: float | None) -> int:
    """A 32-bit shell's (mksh) wrapped microsecond count, put back after the one before it."""
    if previous is None:
        return micros
    while micros < previous - WRAP / 2:
        micros += WRAP
    return micros


def refresh_of(series: Sequence[tuple[float, str]]) -> Refresh | None:
    """The refresh period from when the value changed; ``None`` without a window."""
    if len(series) < 2:
        return None
    window_s = series[-1][0] - series[0][0]
    changes = [t for (_, a), (t, b) in itertools.pairwise(series) if a != b]
    period = None
    if len(changes) >= 2:
        period = statistics.median(b - a for a, b in itertools.pairwise(changes))
    return Refresh(len(changes), window_s, period)


def current_sign(status: str | None, current_raw: str | None) -> str:
    """What the sign of ``current_now`` means on this supply, judged by its status now.

    The kernel ABI says negative while discharging; some drivers (Qualcomm
    fuel gauges among them) report the opposite (formats.md 5b). qtop takes
    the direction from ``status`` either way; this says which convention the
    driver follows, when the status allows telling.
    """
    state = (status or "").strip().lower()
    try:
        amps = int((current_raw or "").strip())
    except ValueError:
        return "unknown (current_now unreadable)"
    if amps == 0 or state not in ("charging", "discharging"):
        return f"cannot tell now (status {status or 'unreadable'}, current_now {amps})"
    negative = amps < 0
    if (state == "discharging") == negative:
        return f"{'negative' if negative else 'positive'} while {state} (the kernel ABI)"
    return (
        f"{'negative' if negative else 'positive'} while {state} (inverted against the kernel "
        "ABI; qtop takes the direction from status)"
    )


def _at(fields: list[str], index: int) -> str:
    return fields[index] if index < len(fields) else ""


def _number(text: str) -> int:
    return int(text) if text.isdigit() else 0

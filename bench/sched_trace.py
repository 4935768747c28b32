"""Why a tick came late, from the kernel's scheduler events (Linux `perf`, as root).

``SchedTrace`` records every CPU's ``sched_waking`` and ``sched_switch`` events
while a bench runs, on the monotonic clock (perf refuses the realtime one),
and moves them to the realtime clock ``$EPOCHREALTIME`` reads, so that the
sampler's own stamps line up with the trace. ``explain`` then looks at
each run of missed ticks: the wake-up that ended it, and what the sampler's
CPU did between that wake-up and the moment the sampler ran:

- ``cpu ran nothing``: woken on time, and its CPU switched to no task at all
  until it ran. Nothing in this machine's scheduler held it back; the virtual
  CPU was not running (the hypervisor) or sat in an interrupt;
- ``queued behind``: its CPU ran other tasks meanwhile (named, with their time);
- ``woken late``: the wake-up itself came late (the timer, or a CPU that was
  not running when it was due), and what it waited for after that;
- ``preempted``: it was not asleep but taken off its CPU while running, and
  waited to get it back (``queued behind`` what ran there meanwhile);
- ``not traced``: neither in the window (the trace lost it).
"""

from __future__ import annotations

import bisect
import re
import shutil
import subprocess
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

# A wake-up is "on time" when it comes within this of when the tick was due.
ON_TIME_US = 2_000
_SWITCH = re.compile(
    r"prev_comm=(.*?) prev_pid=(\d+) .*?prev_state=(\S+) ==> next_comm=(.*?) next_pid=(\d+)"
)
_WAKING = re.compile(r"pid=(\d+) ")


@dataclass
class Event:
    time_us: float
    cpu: int
    kind: str  # "switch" or "waking"
    pid: int  # the task switched to, or the task woken
    prev_pid: int = 0  # a switch: the task that ran until it
    prev_comm: str = ""
    prev_runnable: bool = False  # a switch: that task was preempted, not asleep


@dataclass
class Explanation:
    cause: str
    delay_ms: float  # from the wake-up (or preemption) until it ran
    others: Counter[str] = field(default_factory=Counter)
    woken_late_ms: float = 0.0

    def __str__(self) -> str:
        text = f"{self.cause} for {self.delay_ms:.1f} ms"
        if self.woken_late_ms:
            text = f"woken {self.woken_late_ms:.1f} ms late, then waited {self.delay_ms:.1f} ms"
        if self.others:
            ran = ", ".join(f"{name} {ms:.1f} ms" for name, ms in self.others.most_common(3))
            text += f" ({ran})"
        return text


def available() -> str | None:
    """Why a trace cannot be taken here, or None."""
    if shutil.which("perf") is None:
        return "no `perf` on the PATH"
    probe = subprocess.run(
        ["perf", "record", "-q", "-e", "sched:sched_switch", "-a", "-o", "/dev/null", "true"],
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0:
        return f"perf cannot record scheduler events: {probe.stderr.strip()[:200]}"
    return None


class SchedTrace:
    """``perf record`` of the scheduler events of every CPU, in realtime microseconds."""

    def __init__(self, output: Path) -> None:
        self.output = output
        self._process: subprocess.Popen[bytes] | None = None
        self._offsets: list[float] = []

    @staticmethod
    def _realtime_minus_monotonic() -> float:
        return time.clock_gettime(time.CLOCK_REALTIME) - time.clock_gettime(time.CLOCK_MONOTONIC)

    def __enter__(self) -> SchedTrace:
        self._offsets.append(self._realtime_minus_monotonic())
        self._process = subprocess.Popen(
            [
                "perf", "record", "-q", "-a", "-k", "mono", "-m", "16M",
                "-e", "sched:sched_switch", "-e", "sched:sched_waking", "-o", str(self.output),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        return self

    def __exit__(self, *_: object) -> None:
        if self._process is not None:
            self._process.send_signal(2)
            self._process.wait()
        self._offsets.append(self._realtime_minus_monotonic())

    def events_near(self, windows: list[tuple[float, float]]) -> list[Event]:
        """The events inside any of the windows (realtime us), in time order."""
        if not windows:
            return []
        merged = sorted(windows)
        starts = [start for start, _ in merged]
        script = subprocess.Popen(
            ["perf", "script", "-i", str(self.output), "--ns", "-F", "cpu,time,event,trace"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        # The two clocks drift apart only by NTP's slew over a round: microseconds.
        offset_us = sum(self._offsets) / len(self._offsets) * 1e6
        events = []
        assert script.stdout is not None
        for line in script.stdout:
            head, _, trace = line.partition(": ")
            parts = head.split()
            if len(parts) < 2:
                continue
            time_us = float(parts[1].rstrip(":")) * 1e6 + offset_us
            index = bisect.bisect_right(starts, time_us) - 1
            if index < 0 or time_us > merged[index][1]:
                continue
            cpu = int(parts[0].strip("[]"))
            if "sched_switch" in trace:
                found = _SWITCH.search(trace)
                if found:
                    prev_pid, runnable, next_pid = int(found[2]), found[3] == "R", int(found[5])
                    events.append(
                        Event(time_us, cpu, "switch", next_pid, prev_pid, found[1], runnable)
                    )
            elif "sched_waking" in trace:
                found = _WAKING.search(trace)
                if found:
                    events.append(Event(time_us, cpu, "waking", int(found[1])))
        script.wait()
        return events


def explain(
    events: list[Event], sampler_pid: int, gap: tuple[float, float], due_us: float
) -> Explanation:
    """Why the tick that ended ``gap`` (the sampler's stamps, realtime us) ran late;
    it was due at ``due_us``."""
    start, end = gap
    inside = [event for event in events if start <= event.time_us <= end]
    ran = [e for e in inside if e.kind == "switch" and e.pid == sampler_pid]
    if not ran:
        return Explanation("not traced", (end - due_us) / 1000)
    switched_in = ran[-1]
    woken = [
        e for e in inside
        if e.kind == "waking" and e.pid == sampler_pid and e.time_us <= switched_in.time_us
    ]  # fmt: skip
    preempted = [
        e for e in inside
        if e.kind == "switch" and e.prev_pid == sampler_pid and e.prev_runnable
        and e.time_us < switched_in.time_us
    ]  # fmt: skip
    woken_late_ms = 0.0
    if woken and (not preempted or woken[-1].time_us > preempted[-1].time_us):
        since = woken[-1]
        cause = "queued behind"
        if since.time_us - due_us > ON_TIME_US:
            cause, woken_late_ms = "woken late", (since.time_us - due_us) / 1000
    elif preempted:
        since, cause = preempted[-1], "preempted"
    else:
        return Explanation("not traced", (end - due_us) / 1000)
    delay_ms = (switched_in.time_us - since.time_us) / 1000
    others: Counter[str] = Counter()
    on_cpu = [
        e for e in inside
        if e.kind == "switch" and e.cpu == switched_in.cpu
        and since.time_us < e.time_us < switched_in.time_us
    ]  # fmt: skip
    # Each switch ends the task before it: its share is the time since the last one.
    boundary = since.time_us
    for switch in [*on_cpu, switched_in]:
        if switch.prev_pid not in (0, sampler_pid):
            others[switch.prev_comm] += (switch.time_us - boundary) / 1000
        boundary = switch.time_us
    if not others and cause == "queued behind":
        return Explanation("cpu ran nothing", delay_ms)
    return Explanation(cause, delay_ms, others, woken_late_ms)

"""100 Hz into the recording: python bench/sampler_100hz.py [--minutes 10] [--rounds 3]

A whole live session on this machine (LiveSource over the local transport,
recorded by the Session) with the sampler at 100 Hz on 12 channels (11
thermal zones and the command's memory) and the runner going: it runs a
self-timing C program (tests/link/timed_workload.c, 20 ms of sleep by
default, or `--workload work:N` for N units of arithmetic) back to back for
the whole time. Prints, min / median / max over the rounds: the rate the
sampler ran at, missed ticks (slots the sampler skipped, from the device's
own file, and what the recording's end counts), and tick lateness after the
due time (p50, p99, max); each round as it ends, with the load average and the
time the hypervisor ran other guests while this one had work (steal: no sampler
can be on time then). With --trace (root, Linux `perf`, a sampler on the
realtime clock), why each run of missed ticks, and each tick later than 2 ms,
was late, from the scheduler's events (bench/sched_trace.py). The goal: 0
missed ticks and p99 <= 2 ms with bash.
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import itertools
import os
import tempfile
import threading
import time
from collections import Counter
from contextlib import nullcontext
from pathlib import Path

from agent_setup import make_sysfs, percentile, profile, shells, spread
from latency_accuracy import compile_workload
from sched_trace import SchedTrace, available, explain

from qtop.device.plan import RunOptions
from qtop.device.protocol import ClockLine, SampleLine, parse_line
from qtop.live.source import LiveSource
from qtop.record.writer import RecordingWriter
from qtop.session import Session
from qtop.transport.local import LocalTransport

INTERVAL_US = 10_000
# The goal's p99 lateness: a tick later than this is explained with --trace.
LATE_US = 2_000


async def one_round(
    shell: str, root: Path, command: str, minutes: float, trace: bool
) -> dict[str, float | str]:
    used = profile(root, "10ms", f"{{command: '{command}', warmup: 0, duration: {minutes * 60}s}}")
    source = LiveSource(
        used,
        LocalTransport(),
        agent_shell=shell,
        run_options=RunOptions(),
        remove_when_done=False,
    )
    header = await source.start()
    recording = root / f"round-{source.state.run_id}.jsonl"
    session = Session(source, recorder=RecordingWriter(recording, header))
    session.model.apply(header)
    trace_file = root / f"sched-{source.state.run_id}.data"
    try:
        with StealWatch() as steal, SchedTrace(trace_file) if trace else nullcontext() as sched:
            await session.run()
    finally:
        await source.close()
    end = session.model.end
    run_dir = Path(source.state.run_dir or "")
    lines = list(map(parse_line, (run_dir / "samples").read_text().splitlines()))
    ticks = [line for line in lines if isinstance(line, SampleLine)]
    clock = next(line.clock for line in lines if isinstance(line, ClockLine))
    gaps = [(a, b) for a, b in itertools.pairwise(ticks) if b.slot - a.slot > 1]
    stolen, by_chance = steal.coincidences(
        [(a.time_us, b.time_us) for a, b in gaps], boottime=clock == "uptime"
    )
    start = ticks[0].time_us
    late = [(t.time_us - start - t.slot * INTERVAL_US) / 1000 for t in ticks]
    missed = sum(b.slot - a.slot - 1 for a, b in itertools.pairwise(ticks))
    seconds = (ticks[-1].time_us - start) / 1e6
    causes = ""
    if sched is not None:
        causes = explain_late(sched, run_dir, ticks, start, clock == "epoch")
        trace_file.unlink(missing_ok=True)
    return {
        "rate": (len(ticks) - 1) / seconds,
        "missed": missed,
        "recorded_missed": (end.counts.get("missed_ticks", 0) if end else -1),
        "p50": percentile(late, 0.5),
        "p99": percentile(late, 0.99),
        "max": max(late),
        "iterations": end.counts.get("iterations", 0) / seconds if end else 0,
        "gaps": len(gaps),
        "gaps_with_steal": stolen,
        "gaps_with_steal_by_chance": by_chance,
        "causes": causes,
    }


def explain_late(
    sched: SchedTrace, run_dir: Path, ticks: list[SampleLine], start: int, realtime: bool
) -> str:
    """Each run of missed ticks, and the ticks later than the p99 goal, explained from
    the scheduler's events: a tally of causes, and each run of missed ticks."""
    if not realtime:
        return "  not explained: the sampler's clock is not the realtime clock of the trace"
    sampler_pid = int((run_dir / "sampler.pid").read_text().split()[0])
    # (the tick before, the late tick, when the late one was first due)
    late = [
        (a, b, start + (a.slot + 1) * INTERVAL_US)
        for a, b in itertools.pairwise(ticks)
        if b.slot - a.slot > 1 or b.time_us - start - b.slot * INTERVAL_US > LATE_US
    ]
    margin = 2 * INTERVAL_US
    events = sched.events_near([(a.time_us - margin, b.time_us + margin) for a, b, _ in late])
    gap_causes: Counter[str] = Counter()
    late_causes: Counter[str] = Counter()
    behind: Counter[str] = Counter()
    lines = []
    for a, b, due in late:
        why = explain(events, sampler_pid, (a.time_us, b.time_us), due)
        behind.update(why.others)
        if b.slot - a.slot > 1:
            gap_causes[why.cause] += 1
            lines.append(f"    {b.slot - a.slot - 1} missed after slot {a.slot}: {why}")
        else:
            late_causes[why.cause] += 1

    def tally(causes: Counter[str]) -> str:
        return ", ".join(f"{cause} {count}" for cause, count in causes.most_common()) or "none"

    ran = ", ".join(f"{name} {ms:.0f} ms" for name, ms in behind.most_common(4)) or "nothing"
    return "\n".join(
        [
            f"  why, runs of missed ticks: {tally(gap_causes)}",
            *lines,
            f"  why, ticks later than {LATE_US / 1000:g} ms: {tally(late_causes)}",
            f"  what ran on the sampler's CPU while it waited: {ran}",
        ]
    )


class StealWatch:
    """The moments the host's steal counter grew, polled every 10 ms in a thread, on
    both clocks a sampler may stamp with (realtime for $EPOCHREALTIME, boottime for
    /proc/uptime), in microseconds."""

    # Steal is counted in whole clock ticks, at the tick after it happened, and seen
    # at the next poll: a gap's window reaches this far past its end.
    LAG_US = 30_000

    def __init__(self) -> None:
        self.moments: list[tuple[float, float]] = []
        self._started = 0.0
        self._seconds = 0.0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self) -> StealWatch:
        self._started = time.clock_gettime(time.CLOCK_BOOTTIME)
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._done.set()
        self._thread.join()
        self._seconds = time.clock_gettime(time.CLOCK_BOOTTIME) - self._started

    def _watch(self) -> None:
        last = host_steal_ms()
        while not self._done.wait(0.01):
            now = host_steal_ms()
            if now != last:
                self.moments.append(
                    (
                        time.clock_gettime(time.CLOCK_REALTIME) * 1e6,
                        time.clock_gettime(time.CLOCK_BOOTTIME) * 1e6,
                    )
                )
                last = now

    def coincidences(self, gaps: list[tuple[int, int]], boottime: bool) -> tuple[int, float]:
        """How many gaps (from, to) saw the steal counter grow, and how many would by
        chance if its growths were spread evenly over the round."""
        stamps = sorted(moment[1 if boottime else 0] for moment in self.moments)
        hit = 0
        expected = 0.0
        for start, end in gaps:
            index = bisect.bisect_left(stamps, start)
            hit += index < len(stamps) and stamps[index] <= end + self.LAG_US
            window_s = (end + self.LAG_US - start) / 1e6
            expected += min(1.0, len(stamps) * window_s / max(self._seconds, 1e-9))
        return hit, expected


def host_steal_ms() -> float:
    """CPU time the hypervisor ran something else while this VM had work (all CPUs):
    a tick can be late for that, whatever the sampler does."""
    fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()
    steal_ticks = int(fields[8]) if len(fields) > 8 else 0
    return steal_ticks * 1000 / os.sysconf("SC_CLK_TCK")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--shell", default="bash", help="dash, bash, mksh or busybox")
    parser.add_argument("--workload", default="sleep:20000")
    parser.add_argument("--trace", action="store_true", help="say why each late tick was late")
    args = parser.parse_args()
    if args.trace and (why := available()):
        raise SystemExit(f"--trace: {why}")
    shell = shells()[args.shell]
    mode, amount = args.workload.split(":")
    with tempfile.TemporaryDirectory(prefix="qtop-bench-") as tmp:
        root = Path(tmp)
        make_sysfs(root / "sys")
        binary = compile_workload(root)
        command = f"{binary} {mode} {amount} {root / 'own.log'}"
        rounds = []
        for index in range(args.rounds):
            steal_before = host_steal_ms()
            figures = asyncio.run(one_round(shell, root, command, args.minutes, args.trace))
            rounds.append(figures)
            print(
                f"round {index + 1}: {figures['rate']:.3f} Hz, {figures['missed']} missed, "
                f"lateness p50 {figures['p50']:.2f} / p99 {figures['p99']:.2f} / "
                f"max {figures['max']:.2f} ms, {figures['iterations']:.1f} iterations/s, "
                f"load average (1 min) {os.getloadavg()[0]:.2f}, "
                f"time the hypervisor gave to others {host_steal_ms() - steal_before:.0f} ms; "
                f"runs of missed ticks {figures['gaps']}, with the steal counter growing "
                f"in them {figures['gaps_with_steal']} "
                f"(by chance: {figures['gaps_with_steal_by_chance']:.2f})",
                flush=True,
            )
            if figures["causes"]:
                print(figures["causes"], flush=True)
    print(
        f"{args.shell}: 100 Hz x 12 channels for {args.minutes:g} min into a recording, "
        f"runner going ({args.workload}, {spread([r['iterations'] for r in rounds])} "
        f"iterations/s); {args.rounds} rounds, min / median / max"
    )
    print(f"  sampler rate      {spread([r['rate'] for r in rounds])} Hz")
    print(f"  missed ticks      {spread([r['missed'] for r in rounds])} (device file)")
    print(f"                    {spread([r['recorded_missed'] for r in rounds])} (recording)")
    print(f"  lateness p50      {spread([r['p50'] for r in rounds])} ms")
    print(f"  lateness p99      {spread([r['p99'] for r in rounds])} ms")
    print(f"  lateness max      {spread([r['max'] for r in rounds])} ms")


if __name__ == "__main__":
    main()

"""A sustained run under link faults, against the simulated board over real SSH.

    python bench/soak.py                      # 10 minutes, 20 faults
    python bench/soak.py --minutes 2 --faults 6
    python bench/soak.py --burn               # the same with stress-ng on every core

qtop runs `qnn-net-run` on the simulated EVK for the whole duration (a `duration` run,
samples every 100 ms, keepalives every 0.5 s x 2) and records it, while faults are
injected at even intervals: connections killed (every SSH connection aborted), the
SSH server stopped and started on the same port, and silent drops (a TCP proxy in
front of the server stops forwarding without closing anything). A fault fires only
while the link is up, so each one is a disconnection of its own.

Printed: the faults injected, and from the recording: samples and iterations, how
many were lost (a gap in their sequence numbers) or duplicated (a number seen
twice), the iterations against the simulator's own count of the processes it ran,
and the resume time of every fault (from the fault to qtop's "reconnected", host
monotonic time: the time a user waits; a server restart keeps the server down 1 s
of it), p50 / p95 / max.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from link.proxy import SilentDropProxy

from qtop.device.plan import RunOptions
from qtop.events import Event, Link
from qtop.live.backoff import Backoff
from qtop.live.source import LiveSource
from qtop.profiles import load_profile_text
from qtop.record.reader import open_recording
from qtop.record.writer import RecordingWriter
from qtop.session import Session
from qtop.sim import RunningSim, read_ground_truth, start_sim
from qtop.transport.ssh import SSHTarget, SSHTransport

NETRUN = (
    "qnn-net-run --backend libQnnHtp.so --retrieve_context "
    '"$QTOP_SIM_ROOT/data/local/tmp/prismml/prismml_w8a8_seq64.bin" '
    '--input_list "$QTOP_SIM_ROOT/data/local/tmp/prismml/inputs.txt" --num_inferences 20'
)
# How the faults take turns: mostly kills, a silent drop every third, one server
# restart in the middle.
KILL, SILENT, RESTART = "connection kill", "silent drop", "server restart"


def fault_kinds(count: int) -> list[str]:
    kinds = [SILENT if i % 3 == 2 else KILL for i in range(count)]
    if count:
        kinds[count // 2] = RESTART
    return kinds


@dataclass
class Fault:
    kind: str
    at: float
    resumed_after: float | None = None


@dataclass
class Soak:
    sim: RunningSim
    proxy: SilentDropProxy
    source: LiveSource
    faults: list[Fault] = field(default_factory=list)

    def observe(self, batch: list[Event]) -> None:
        now = time.monotonic()
        for event in batch:
            if isinstance(event, Link) and event.state == "reconnected":
                waiting = [f for f in self.faults if f.resumed_after is None]
                if waiting:
                    waiting[0].resumed_after = now - waiting[0].at

    async def inject(self, kinds: list[str], duration_s: float) -> None:
        started = time.monotonic()
        for number, kind in enumerate(kinds, start=1):
            due = started + duration_s * number / (len(kinds) + 1)
            await asyncio.sleep(max(0.0, due - time.monotonic()))
            # One fault per disconnection: wait until the last one has resumed.
            while self.source.state.link != "connected" or any(
                f.resumed_after is None for f in self.faults
            ):
                await asyncio.sleep(0.05)
            self.faults.append(Fault(kind, time.monotonic()))
            if kind == KILL:
                await self.sim.drop_connections()
            elif kind == RESTART:
                await self.sim.stop_ssh()
                await asyncio.sleep(1.0)
                await self.sim.start_ssh()
            else:
                self.proxy.go_silent()


def profile_for(sim: RunningSim, port: int, known_hosts: Path, duration_s: float):
    o = sim.device_overrides()
    return load_profile_text(
        "name: soak\n"
        f"device: {{host: {o['host']}, port: {port}, user: {o['user']}, "
        f"identity_file: '{o['identity_file']}', known_hosts: '{known_hosts}', "
        f"sysfs_root: $QTOP_SIM_SYSFS, spool_dir: '{o['spool_dir']}', sample_interval: 100ms, "
        "keepalive_interval: 500ms, keepalive_count_max: 2}\n"
        f"run: {{command: '{NETRUN}', warmup: 2, duration: {duration_s:g}s}}\n",
        "soak.yaml",
    )


def sequence_faults(numbers: list[int]) -> tuple[int, int]:
    """(lost, duplicated) in a sequence that should be 0, 1, 2, ... once each."""
    counts = Counter(numbers)
    duplicated = sum(n - 1 for n in counts.values() if n > 1)
    lost = (max(counts) + 1 - len(counts)) if counts else 0
    return lost, duplicated


async def soak(minutes: float, faults: int, time_scale: float, workdir: Path) -> dict:
    duration_s = minutes * 60
    async with start_sim(workdir / "sim", variant="evk", time_scale=time_scale) as sim:
        proxy = SilentDropProxy(sim.host, sim.port)
        port = await proxy.start()
        known = workdir / "known_hosts"
        known.write_text(sim.known_hosts_path.read_text().replace(f"]:{sim.port}", f"]:{port}"))
        profile = profile_for(sim, port, known, duration_s)
        source = LiveSource(
            profile,
            SSHTransport(SSHTarget.from_profile(profile.device)),
            source_kind="sim",
            backoff=Backoff(initial_s=0.2, maximum_s=1.0),
            run_options=RunOptions(),
        )
        path = workdir / "soak.jsonl"
        header = await source.start()
        recorder = RecordingWriter(path, header)
        session = Session(source, recorder=recorder)
        session.model.apply(header)
        state = Soak(sim, proxy, source)
        injector = asyncio.ensure_future(state.inject(fault_kinds(faults), duration_s))
        started = time.monotonic()
        try:
            await session.run(state.observe)
        finally:
            injector.cancel()
            await asyncio.gather(injector, return_exceptions=True)
            await source.close()
            await proxy.close()
        wall_s = time.monotonic() - started
        truth = read_ground_truth(sim.ground_truth_path)
    events = [e.to_dict() for e in open_recording(path).events()]
    processes = [t for t in truth if t["tool"] == "qnn-net-run" and "--version" not in t["argv"]]
    samples = [e["seq"] for e in events if e["kind"] == "sample"]
    iterations = [e["seq"] for e in events if e["kind"] == "iteration"]
    links = Counter(e["state"] for e in events if e["kind"] == "link")
    return {
        "wall_s": wall_s,
        "faults": state.faults,
        "samples": samples,
        "iterations": iterations,
        "processes_run": len(processes),
        "links": links,
        "end": events[-1] if events and events[-1]["kind"] == "end" else None,
    }


def report(result: dict, faults: int) -> int:
    injected = result["faults"]
    resumes = [f.resumed_after for f in injected if f.resumed_after is not None]
    s_lost, s_dup = sequence_faults(result["samples"])
    i_lost, i_dup = sequence_faults(result["iterations"])
    end = result["end"]
    print(f"ran {result['wall_s']:.0f} s, load average {os.getloadavg()[0]:.1f} at the end")
    kinds = Counter(f.kind for f in injected)
    by_kind_text = ", ".join(f"{n} {k}" for k, n in kinds.items())
    print(f"faults injected: {len(injected)} of {faults} ({by_kind_text})")
    print(
        f"link: {result['links']['disconnected']} disconnected, "
        f"{result['links']['reconnected']} reconnected, {result['links']['gap']} gaps"
    )
    print(f"samples: {len(result['samples'])}; lost {s_lost}, duplicated {s_dup}")
    print(
        f"iterations: {len(result['iterations'])} (the simulator ran {result['processes_run']} "
        f"processes); lost {i_lost}, duplicated {i_dup}"
    )
    if end is not None:
        print(f"end: {end['reason']}; counts {end['counts']}")
    if resumes:
        ordered = sorted(resumes)
        p95 = ordered[max(0, round(0.95 * len(ordered)) - 1)]
        print(
            f"resume after a fault (s): p50 {statistics.median(ordered):.2f}, p95 {p95:.2f}, "
            f"max {ordered[-1]:.2f}"
        )
        for kind in kinds:
            by_kind = sorted(
                f.resumed_after for f in injected if f.kind == kind and f.resumed_after
            )
            if by_kind:
                print(f"  {kind}: {', '.join(f'{r:.2f}' for r in by_kind)}")
    unresumed = len(injected) - len(resumes)
    ok = (
        len(injected) == faults
        and unresumed == 0
        and s_lost == s_dup == i_lost == i_dup == 0
        and len(result["iterations"]) == result["processes_run"]
        and end is not None
        and end["reason"] == "completed"
    )
    print("PASS" if ok else f"FAIL ({unresumed} faults never resumed)")
    return 0 if ok else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--faults", type=int, default=20)
    parser.add_argument("--time-scale", type=float, default=10.0, help="the board's thermal speed")
    parser.add_argument("--burn", action="store_true", help="stress-ng --cpu on every core")
    args = parser.parse_args()
    burner = None
    if args.burn:
        if shutil.which("stress-ng") is None:
            print("stress-ng not found; fix: apt-get install stress-ng", file=sys.stderr)
            return 2
        burner = subprocess.Popen(
            ["stress-ng", "--cpu", str(os.cpu_count() or 2), "--timeout", "0"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    print(
        f"soak: {args.minutes:g} min, {args.faults} faults, time_scale {args.time_scale:g}"
        + (", stress-ng on every core" if burner else "")
    )
    try:
        with tempfile.TemporaryDirectory() as tmp:
            result = asyncio.run(soak(args.minutes, args.faults, args.time_scale, Path(tmp)))
    finally:
        if burner is not None:
            burner.terminate()
            burner.wait()
    return report(result, args.faults)


if __name__ == "__main__":
    sys.exit(main())

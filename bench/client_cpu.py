"""The qtop client's CPU at the demo's rates: python bench/client_cpu.py [--window 60] [--runs 3]

Each run starts two processes:

* the simulated board exactly as ``qtop demo`` configures it (time scale 15,
  the warm-enclosure NSP), in a process of its own, so that its SSH server,
  thermal model and simulated tools are never charged to the client;
* a headless live session of the demo's profile (``sim-evk``: qnn-net-run with
  HTP linting, 20 executes per process, the viewer run on the board, the
  profiler hook, the recording), which is what ``qtop demo --headless`` runs.

Once the client prints its measure phase and has run a few seconds more, the
script reads the client process's CPU time (user + system, its own only) at
the start and at the end of a sustained window, and prints it as a share of
one core, with the simulator's share (its process and the tools it ran) next
to it and the rates the session ran at in that window: iterations per second
and lines of device output per second, counted by the client as they arrive.
Then min / median / max over the runs.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import psutil

SETTLE_S = 5.0  # after the measure phase starts: the first reports and warm-ups pass
START_TIMEOUT_S = 120.0


def serve_sim(state_dir: str) -> None:
    """The demo's simulated board until SIGTERM; writes how to reach it to state_dir/sim.json."""
    from qtop.commands.demo import BOARDS, demo_config
    from qtop.sim import start_sim

    async def main() -> None:
        config = demo_config("evk")
        stop = asyncio.Event()
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
        async with start_sim(state_dir, time_scale=BOARDS["evk"].time_scale, config=config) as sim:
            ready = Path(state_dir, "sim.json.tmp")
            ready.write_text(json.dumps(sim.device_overrides()))
            ready.rename(Path(state_dir, "sim.json"))
            await stop.wait()

    asyncio.run(main())


def run_client(state_dir: str, duration_s: float, counts_path: str) -> None:
    """A headless session of the demo's profile against the board in state_dir."""
    from qtop.events import Event, Iteration, Log
    from qtop.live.profiler_hooks import profiler_hook_for
    from qtop.live.runner import LiveOptions, LiveRun
    from qtop.live.source import LiveSource
    from qtop.profiles import load_profile, resolve_profile
    from qtop.transport.ssh import SSHTarget, SSHTransport

    per_second: dict[str, Counter[int]] = {"iterations": Counter(), "log_lines": Counter()}

    class CountingSource(LiveSource):
        """Counts what arrives, per second of the host's monotonic clock (shared by processes)."""

        async def events(self) -> AsyncIterator[Event]:
            async for event in super().events():
                if isinstance(event, Iteration):
                    per_second["iterations"][int(time.monotonic())] += 1
                elif isinstance(event, Log) and event.stream in ("stdout", "stderr"):
                    per_second["log_lines"][int(time.monotonic())] += 1
                yield event

    overrides = json.loads(Path(state_dir, "sim.json").read_text())
    profile = load_profile(resolve_profile("sim-evk"))
    profile = profile.replace_run(iterations=None, duration_s=duration_s)
    profile = profile.replace_device(**overrides)
    transport = SSHTransport(SSHTarget.from_profile(profile.device))
    source = CountingSource(profile, transport, source_kind="sim", hook=profiler_hook_for(profile))
    options = LiveOptions(
        profile_ref="sim-evk", record=str(Path(state_dir, "session.jsonl")), headless=True
    )
    code = asyncio.run(LiveRun(source, options).run(None))
    Path(counts_path).write_text(
        json.dumps({name: dict(counter) for name, counter in per_second.items()})
    )
    sys.exit(code)


def _cpu_s(process: psutil.Process, children: bool) -> float:
    times = process.cpu_times()
    total = times.user + times.system
    if children:
        total += times.children_user + times.children_system
        for child in process.children(recursive=True):
            try:
                child_times = child.cpu_times()
            except psutil.NoSuchProcess:
                continue
            total += child_times.user + child_times.system
    return total


def _wait_for(path: Path, process: subprocess.Popen[bytes], what: str) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while not path.exists():
        if process.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"{what} did not start (exit {process.poll()})")
        time.sleep(0.1)


def _wait_for_line(log: Path, text: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while text not in (log.read_text(errors="replace") if log.exists() else ""):
        if process.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"the client never reached '{text}':\n{log.read_text()[-2000:]}")
        time.sleep(0.1)


def one_run(window_s: float) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="qtop-client-cpu-") as state_dir:
        me = [sys.executable, __file__]
        sim = subprocess.Popen([*me, "--serve-sim", state_dir])
        client: subprocess.Popen[bytes] | None = None
        try:
            _wait_for(Path(state_dir, "sim.json"), sim, "the simulator")
            log = Path(state_dir, "client.out")
            counts_path = Path(state_dir, "counts.json")
            duration = SETTLE_S + window_s + 10.0
            with log.open("wb") as out:
                client = subprocess.Popen(
                    [*me, "--client", state_dir, str(duration), str(counts_path)],
                    stdout=out,
                    stderr=subprocess.STDOUT,
                )
            _wait_for_line(log, "phase measure", client)
            time.sleep(SETTLE_S)
            client_ps, sim_ps = psutil.Process(client.pid), psutil.Process(sim.pid)
            start = time.monotonic()
            client0, sim0 = _cpu_s(client_ps, False), _cpu_s(sim_ps, True)
            time.sleep(window_s)
            client1, sim1 = _cpu_s(client_ps, False), _cpu_s(sim_ps, True)
            end = time.monotonic()
            if client.wait(timeout=duration + START_TIMEOUT_S) != 0:
                raise SystemExit(f"the client failed:\n{log.read_text()[-2000:]}")
            counts = json.loads(counts_path.read_text())
        finally:
            for process in (client, sim):
                if process is not None and process.poll() is None:
                    process.send_signal(signal.SIGTERM)
                    process.wait(timeout=30)
    # Whole seconds strictly inside the window, so partial buckets do not skew the rates.
    seconds = range(int(start) + 1, int(end))

    def rate(name: str) -> float:
        return sum(counts[name].get(str(s), 0) for s in seconds) / max(1, len(seconds))

    elapsed = end - start
    return {
        "client": (client1 - client0) / elapsed * 100,
        "sim": (sim1 - sim0) / elapsed * 100,
        "iterations_per_s": rate("iterations"),
        "log_lines_per_s": rate("log_lines"),
    }


def spread(values: list[float], digits: int = 1) -> str:
    return (
        f"min {min(values):.{digits}f} / median {statistics.median(values):.{digits}f} / "
        f"max {max(values):.{digits}f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--window", type=float, default=60.0, help="measured seconds per run")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--serve-sim", metavar="STATE_DIR", help=argparse.SUPPRESS)
    parser.add_argument("--client", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_sim:
        serve_sim(args.serve_sim)
        return
    if args.client:
        run_client(args.client[0], float(args.client[1]), args.client[2])
        return
    print(f"machine: {os.cpu_count()} cores; window {args.window:.0f} s per run")
    results = []
    for number in range(1, args.runs + 1):
        result = one_run(args.window)
        results.append(result)
        print(
            f"run {number}: client {result['client']:.1f}% of a core, simulator "
            f"{result['sim']:.1f}%, at {result['iterations_per_s']:.0f} iterations/s and "
            f"{result['log_lines_per_s']:.0f} log lines/s",
            flush=True,
        )
    print(f"client CPU, % of one core: {spread([r['client'] for r in results])}")
    print(f"simulator CPU, % of one core: {spread([r['sim'] for r in results])}")
    print(f"iterations/s: {spread([r['iterations_per_s'] for r in results], 0)}")
    print(f"log lines/s: {spread([r['log_lines_per_s'] for r in results], 0)}")


if __name__ == "__main__":
    main()

"""The same session over SSH and over adb, side by side: python bench/transport_compare.py

Against the simulated glasses; over adb through the real adb client and the
simulated adb server. Prints, per transport, min / median / max over the runs
(the transports interleaved, so the machine's load falls on both alike):

- a live session at 10 Hz (the board in a process of its own, ``qtop sim
  --adb``, so this process is qtop's host side and the board's processes are
  the device side): samples delivered per second, the sampler's CPU per tick,
  the device side's share of a core (sampler and the three follow processes),
  qtop's host-side share (this process and the adb client processes it ran),
  and the delay from a sample's device time to its arrival (p50, p99; one
  machine, so one clock);
- silent drops with keepalives every 0.5 s and 2 unanswered (SSH: a proxy
  that stops forwarding; adb: a frozen link whose network comes back once the
  drop is noticed): when it was noticed and when the stream resumed;
- wall latency against the simulator's ground truth (default timer
  calibration, median of 40 iterations of a realistic 30-inference
  qnn-net-run process), next to the tolerance max(1 %, 0.2 ms).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from link.links import sim_link
from sim_process import SimProcess, sim_process

from qtop.device.plan import RunOptions
from qtop.events import Iteration, Link, Sample
from qtop.live.backoff import Backoff
from qtop.live.source import LiveSource
from qtop.profiles import load_profile_text
from qtop.transport.factory import make_transport

KINDS = ("ssh", "adb")
NETRUN = (
    "qnn-net-run --backend libQnnHtp.so --retrieve_context "
    '"$QTOP_SIM_ROOT/data/local/tmp/prismml/prismml_w8a8_seq64.bin" '
    '--input_list "$QTOP_SIM_ROOT/data/local/tmp/prismml/inputs.txt" --num_inferences {n}'
)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def spread(values: list[float], unit: str = "", digits: int = 2) -> str:
    ordered = sorted(values)
    low, middle, high = ordered[0], ordered[len(ordered) // 2], ordered[-1]
    return f"{low:.{digits}f} / {middle:.{digits}f} / {high:.{digits}f}{unit}"


# --- a live session's cost and delay ---------------------------------------------


def device_cpu(sim: SimProcess, ticks: int) -> dict[str, float]:
    """The sampler's CPU per tick, and its share of a core with the follow processes."""
    sampler, share, now = 0.0, 0.0, time.time()
    for process in sim.board_processes():
        try:
            cmdline = " ".join(process.cmdline())
            times = process.cpu_times()
            cpu = times.user + times.system + times.children_user + times.children_system
            age = now - process.create_time()
        except Exception:
            continue
        if "sampler.sh" in cmdline:
            sampler += cpu
            share += cpu / age
        elif cmdline.startswith("tail "):
            share += cpu / age
    return {"sampler_ms": sampler / max(ticks, 1) * 1e3, "device_percent": share * 100}


async def live_session(kind: str, sim: SimProcess, seconds: float) -> dict[str, float]:
    device = ", ".join(
        f"{key}: {value if isinstance(value, int) else repr(value)}"
        for key, value in sim.device(kind).items()
    )
    profile = load_profile_text(
        f"name: cost\ndevice: {{{device}, sample_interval: 100ms}}\n"
        f"run: {{command: 'sleep 0.5', warmup: 0, duration: {seconds}s, min_iterations: 1}}\n"
    )
    source = LiveSource(profile, make_transport(profile), run_options=RunOptions(calibrations=3))
    before = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    started = time.monotonic()
    await source.start()
    boot_to_epoch = time.time() - time.clock_gettime(time.CLOCK_BOOTTIME)
    delays: list[float] = []
    times: list[float] = []
    device: dict[str, float] = {}
    async for event in source.events():
        if isinstance(event, Sample) and event.t is not None and event.host_t is not None:
            times.append(event.t)
            delays.append((event.host_t - (event.t + boot_to_epoch)) * 1e3)
            if not device and time.monotonic() - started > 0.8 * seconds:
                device = device_cpu(sim, len(times))
    await source.close()
    elapsed = time.monotonic() - started
    after = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    host = sum(
        (b.ru_utime - a.ru_utime) + (b.ru_stime - a.ru_stime)
        for a, b in zip(before, after, strict=True)
    )
    return {
        "rate": (len(times) - 1) / (times[-1] - times[0]),
        "host_percent": host / elapsed * 100,
        "p50": statistics.median(delays),
        "p99": percentile(delays, 0.99),
        **device,
    }


# --- silent drops -------------------------------------------------------------


def link_profile(link: Any, run: str, extra: str = ""):
    return load_profile_text(
        f"name: bench\ndevice:\n{link.device_yaml()}  sysfs_root: $QTOP_SIM_SYSFS\n"
        f"  sample_interval: 100ms\n{extra}run: {run}\n"
    )


async def silent_drops(kind: str, drops: int) -> tuple[list[float], list[float]]:
    with tempfile.TemporaryDirectory() as tmp:
        async with sim_link(Path(tmp) / "sim", kind, variant="evk", time_scale=10) as link:
            run = "{command: '" + NETRUN.format(n=5) + "', warmup: 0, iterations: 400}"
            keepalive = "  keepalive_interval: 500ms\n  keepalive_count_max: 2\n"
            used = await link.silent_profile(link_profile(link, run, keepalive), Path(tmp))
            source = LiveSource(used, make_transport(used), backoff=Backoff(0.2, 1.0))
            await source.start()
            detect: list[float] = []
            resume: list[float] = []
            silenced = None
            iterations_since = 0
            async for event in source.events():
                if isinstance(event, Iteration):
                    iterations_since += 1
                    if silenced is None and iterations_since >= 20 and len(detect) < drops:
                        silenced = time.monotonic()
                        link.go_silent()
                if isinstance(event, Link) and event.state == "disconnected" and silenced:
                    detect.append(time.monotonic() - silenced)
                    link.noticed()
                if isinstance(event, Link) and event.state == "reconnected" and silenced:
                    resume.append(time.monotonic() - silenced)
                    silenced, iterations_since = None, 0
                    if len(resume) == drops:
                        await source.stop_run()
            await source.close()
            return detect, resume


# --- latency against the ground truth -----------------------------------------


async def accuracy(kind: str, seed: int) -> tuple[float, float]:
    """(measured median - true median, true median) of one run of 40 iterations."""
    with tempfile.TemporaryDirectory() as tmp:
        async with sim_link(Path(tmp) / "sim", kind, variant="glasses", seed=seed) as link:
            run = "{command: '" + NETRUN.format(n=30) + "', warmup: 2, iterations: 40}"
            used = link_profile(link, run)
            source = LiveSource(used, make_transport(used))
            await source.start()
            measured = [
                e.latency_s
                async for e in source.events()
                if isinstance(e, Iteration) and e.phase == "measure" and e.latency_s is not None
            ]
            await source.close()
            truth = [json.loads(x) for x in link.ground_truth_path.read_text().splitlines()]
    netruns = [t for t in truth if t["tool"] == "qnn-net-run" and "--version" not in t["argv"]]
    true_median = statistics.median(t["wall_s"] for t in netruns[2:])
    return statistics.median(measured) - true_median, true_median


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=15.0, help="per live session")
    parser.add_argument("--drops", type=int, default=3, help="silent drops per run")
    args = parser.parse_args()

    sessions: dict[str, list[dict[str, float]]] = {kind: [] for kind in KINDS}
    with tempfile.TemporaryDirectory() as tmp, sim_process(Path(tmp) / "state") as sim:
        for _ in range(args.runs):
            for kind in KINDS:
                sessions[kind].append(asyncio.run(live_session(kind, sim, args.seconds)))
    print(f"live session, glasses, 10 Hz, {args.seconds:g} s, {args.runs} runs (min/median/max)")
    rows = (
        ("samples delivered per second", "rate", ""),
        ("sampler CPU per tick", "sampler_ms", " ms"),
        ("device side, % of a core", "device_percent", " %"),
        ("host side (qtop + adb clients), % of a core", "host_percent", " %"),
        ("delay device time -> host, p50", "p50", " ms"),
        ("delay device time -> host, p99", "p99", " ms"),
    )
    for label, key, unit in rows:
        cells = [spread([r[key] for r in sessions[kind] if key in r], unit) for kind in KINDS]
        columns = zip(KINDS, cells, strict=True)
        print(f"  {label:<46}" + "".join(f"{kind}: {cell:<28}" for kind, cell in columns))

    print(f"\nsilent drop, keepalive 0.5 s x 2, {args.drops} drops per run")
    noticed: dict[str, list[float]] = {kind: [] for kind in KINDS}
    resumed: dict[str, list[float]] = {kind: [] for kind in KINDS}
    for _ in range(args.runs):
        for kind in KINDS:
            detect, resume = asyncio.run(silent_drops(kind, args.drops))
            noticed[kind] += detect
            resumed[kind] += resume
    for kind in KINDS:
        print(
            f"  {kind}: noticed after {spread(noticed[kind], ' s')}, streaming again after "
            f"{spread(resumed[kind], ' s')} ({len(resumed[kind])} drops)"
        )

    print(f"\nwall latency vs the ground truth, 30 inferences/process, {args.runs} runs")
    for kind in KINDS:
        results = [asyncio.run(accuracy(kind, seed)) for seed in range(args.runs)]
        residuals = [residual * 1e3 for residual, _ in results]
        tolerance = max(0.01 * statistics.median(t for _, t in results), 0.0002) * 1e3
        print(f"  {kind}: residual {spread(residuals, ' ms', 3)}, tolerance {tolerance:.3f} ms")


if __name__ == "__main__":
    main()

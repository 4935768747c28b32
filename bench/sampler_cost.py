"""What the device sampler costs: python bench/sampler_cost.py [--transport ssh|adb|both]

Runs qtop's sampler (qtop/device/agent/sampler.sh) on this machine against a
fake sysfs of 12 files, under dash and under bash, and compares it with the
naive loop that forks `cat` for every read. Prints, per shell:

- CPU per tick (the sampler and every process it forked, from the kernel's
  accounting) and the share of one core at 10 Hz;
- tick jitter at 10 Hz: how late each tick starts after its due time (p50, p99);
- the highest sustained rate with 12 channels and no skipped tick.

With --transport, it also runs whole live sessions against the simulated
glasses (``qtop sim --adb`` in a process of its own) over SSH and over adb
(the real adb client), 3 runs each, and prints per transport: samples
delivered per second, the device side's CPU (the sampler, and the sampler
with the three follow processes), qtop's host-side CPU (this process and
the adb client processes it ran) and the delay from a sample's device time
to its arrival (p50, p99; same machine, so one clock).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


from qtop.device.plan import agent_script
from qtop.transport.command import assignment, quote

CHANNELS = 12
SHELLS = ("/bin/dash", "/bin/bash")


def make_files(root: Path) -> list[Path]:
    files = []
    for index in range(CHANNELS):
        path = root / f"zone{index}" / "temp"
        path.parent.mkdir(parents=True)
        path.write_text(f"{40000 + index * 100}\n")
        files.append(path)
    return files


def sampler_dir(root: Path, files: list[Path], interval_us: int) -> Path:
    run = root / f"run-{interval_us}-{time.monotonic_ns()}"
    run.mkdir()
    for name in ("lib.sh", "fast_bash.sh", "sampler.sh"):
        (run / name).write_text(agent_script(name))
    (run / "plan.sh").write_text(assignment("QTOP_INTERVAL_US", str(interval_us)) + "\n")
    body = "".join(f"\tv=; read -r v <{quote(str(f))}; l=$l$T$v\n" for f in files)
    (run / "tick.sh").write_text("qtop_tick() {\n" + body + "}\n")
    (run / "samples").write_text("")
    return run


def fork_cat_script(files: list[Path], interval_s: float) -> str:
    reads = " ".join(quote(str(f)) for f in files)
    return (
        "seq=0\nwhile :; do\n\tl=\n"
        f'\tfor f in {reads}; do v=$(cat "$f"); l="$l $v"; done\n'
        '\tprintf "%s %s\\n" "$seq" "$l"\n\tseq=$((seq + 1))\n'
        f"\tsleep {interval_s}\ndone\n"
    )


def cpu_of(command: list[str], seconds: float) -> tuple[float, subprocess.CompletedProcess]:
    """CPU seconds of a process and everything it forked, over ``seconds`` of running."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    time.sleep(seconds)
    process.send_signal(signal.SIGTERM)
    out, _ = process.communicate()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, subprocess.CompletedProcess(command, process.returncode, out)


def run_sampler(shell: str, root: Path, files: list[Path], interval_us: int, seconds: float):
    run = sampler_dir(root, files, interval_us)
    cpu, _ = cpu_of([shell, str(run / "sampler.sh"), str(run)], seconds)
    ticks = []
    for line in (run / "samples").read_text().splitlines():
        fields = line.split("\t")
        if fields[0] == "S":
            ticks.append((int(fields[2]), int(fields[3])))
    return cpu, ticks


def lateness_ms(ticks: list[tuple[int, int]], interval_us: int) -> list[float]:
    start = ticks[0][0]
    return [(t - (start + slot * interval_us)) / 1000 for t, slot in ticks]


def skipped(ticks: list[tuple[int, int]]) -> int:
    return sum(b[1] - a[1] - 1 for a, b in itertools.pairwise(ticks))


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def live_session(kind: str, sim, seconds: float) -> dict[str, float]:
    """One session at 10 Hz over ``kind``: what it delivered and what it cost on each side."""
    from qtop.device.plan import RunOptions
    from qtop.events import Sample
    from qtop.live.source import LiveSource
    from qtop.profiles import load_profile_text
    from qtop.transport.factory import make_transport

    device = ", ".join(
        f"{key}: {value if isinstance(value, int) else repr(value)}"
        for key, value in sim.device(kind).items()
    )
    profile = load_profile_text(
        f"name: cost\ndevice: {{{device}, sample_interval: 100ms}}\n"
        f"run: {{command: 'sleep 0.5', warmup: 0, duration: {seconds}s, min_iterations: 1}}\n"
    )
    source = LiveSource(profile, make_transport(profile), run_options=RunOptions(calibrations=3))
    mine, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    started = time.monotonic()
    header = await source.start()
    boot_to_epoch = time.time() - time.clock_gettime(time.CLOCK_BOOTTIME)
    delays, times, device = [], [], {}
    async for event in source.events():
        if not isinstance(event, Sample) or event.t is None or event.host_t is None:
            continue
        times.append(event.t)
        samples = len(times)
        delays.append((event.host_t - (event.t + boot_to_epoch)) * 1e3)
        if not device and time.monotonic() - started > 0.8 * seconds:
            device = device_cpu(sim, samples)
    await source.close()
    elapsed = time.monotonic() - started
    mine_after = resource.getrusage(resource.RUSAGE_SELF)
    children_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    host = sum(
        (b.ru_utime - a.ru_utime) + (b.ru_stime - a.ru_stime)
        for a, b in ((mine, mine_after), (children, children_after))
    )
    print(f"  {kind}: agent shell {header.device.get('shell')}, clock {header.device.get('clock')}")
    return {
        "rate": (len(times) - 1) / (times[-1] - times[0]),
        "host_percent": host / elapsed * 100,
        "p50": statistics.median(delays),
        "p99": percentile(delays, 0.99),
        **device,
    }


def device_cpu(sim, ticks: int) -> dict[str, float]:
    """The sampler's CPU per tick and, with the follow processes, its share of a core."""
    sampler = follow = 0.0
    now = time.time()
    share = 0.0
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
            follow += cpu
            share += cpu / age
    return {"sampler_ms_per_tick": sampler / max(ticks, 1) * 1e3, "device_percent": share * 100}


def spread(results: list[dict[str, float]], key: str, unit: str = "", digits: int = 2) -> str:
    """min/median/max of one figure over the runs."""
    values = sorted(r.get(key, float("nan")) for r in results)
    low, middle, high = values[0], values[len(values) // 2], values[-1]
    return f"{low:.{digits}f}/{middle:.{digits}f}/{high:.{digits}f}{unit}"


def live_sessions(transports: list[str], seconds: float, runs: int) -> None:
    from bench.sim_process import sim_process

    print(
        f"\nlive session against the simulated glasses, 10 Hz, {seconds:g} s, {runs} runs "
        "(min / median / max):"
    )
    print(
        f"{'transport':<10}{'samples/s':>16}{'sampler/tick':>22}{'device % core':>20}"
        f"{'host % core':>20}{'delay p50':>20}{'delay p99':>22}"
    )
    with tempfile.TemporaryDirectory() as tmp, sim_process(Path(tmp) / "state") as sim:
        for kind in transports:
            results = [asyncio.run(live_session(kind, sim, seconds)) for _ in range(runs)]

            cells = [
                (spread(results, "rate", "", 1), 16),
                (spread(results, "sampler_ms_per_tick", "ms"), 22),
                (spread(results, "device_percent", "%"), 20),
                (spread(results, "host_percent", "%"), 20),
                (spread(results, "p50", "ms"), 20),
                (spread(results, "p99", "ms"), 22),
            ]
            print(f"{kind:<10}" + "".join(f"{text:>{width}}" for text, width in cells))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transport", choices=("ssh", "adb", "both"))
    parser.add_argument("--seconds", type=float, default=15.0, help="per live session")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--only-live", action="store_true", help="skip the local sampler figures")
    args = parser.parse_args()
    if not args.only_live:
        local_figures()
    if args.transport:
        kinds = ["ssh", "adb"] if args.transport == "both" else [args.transport]
        live_sessions(kinds, args.seconds, args.runs)


def local_figures() -> None:
    seconds = 10.0
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        files = make_files(root / "sys")
        print(f"{CHANNELS} channels, 10 Hz, {seconds:g} s per measurement")
        print(f"{'sampler':<28}{'CPU/tick':>10}{'% core':>9}{'p50 late':>10}{'p99 late':>10}")
        for shell in SHELLS:
            cpu, ticks = run_sampler(shell, root, files, 100000, seconds)
            late = lateness_ms(ticks, 100000)
            print(
                f"{'qtop ' + os.path.basename(shell):<28}{cpu / len(ticks) * 1e3:>8.3f}ms"
                f"{cpu / seconds * 100:>8.2f}%{statistics.median(late):>8.2f}ms"
                f"{percentile(late, 0.99):>8.2f}ms"
            )
        for shell in SHELLS:
            script = fork_cat_script(files, 0.1)
            cpu, done = cpu_of([shell, "-c", script], seconds)
            count = len(done.stdout.splitlines())
            print(
                f"{'fork cat per read, ' + os.path.basename(shell):<28}"
                f"{cpu / count * 1e3:>8.3f}ms{cpu / seconds * 100:>8.2f}%"
            )
        print("\nhighest sustained rate with no skipped tick (3 s each):")
        for shell in SHELLS:
            best = None
            for rate in (10, 20, 50, 100, 200, 500, 1000, 2000):
                interval = round(1e6 / rate)
                _, ticks = run_sampler(shell, root, files, interval, 3.0)
                if skipped(ticks) or len(ticks) < 0.95 * 3.0 * rate:
                    break
                best = rate
            print(f"  qtop {os.path.basename(shell)}: {best} Hz")


if __name__ == "__main__":
    main()

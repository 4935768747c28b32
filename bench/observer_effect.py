"""The observer effect: python bench/observer_effect.py [--pairs 12] [--rounds 3]

What qtop's sampler (12 channels: 11 thermal zones and the command's memory,
at 10 Hz) costs a benchmark that runs beside it, measured two ways:

- as CPU share: the sampler's own CPU time over the wall time of the runs
  (from /proc/PID/schedstat while it runs);
- as a paired, interleaved A/B: short runs of the agent with the sampler on
  (10 Hz) and effectively off (one tick per 1000 s), alternating in random
  order within each pair, so that load from elsewhere on the machine hits both
  alike. The workload is a fixed amount of arithmetic (about 12 ms, a C
  program timing itself: tests/link/timed_workload.c), which takes longer
  when the sampler takes the CPU; the effect is the median over pairs of
  (median duration on - median duration off), with a bootstrap 95 %
  confidence interval. When that interval holds 0 the effect is below this
  machine's noise and the bench says "not resolvable" instead of a number.

Each round does every pair for every shell; min / median / max are over the
rounds. Prints the rate the workload ran at (iterations per second).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from agent_setup import launch, make_sysfs, plan, profile, shells, spread
from latency_accuracy import compile_workload, wait_for_end

from qtop.device.plan import RunOptions

ITERATIONS = 30
WARMUP = 3
RESAMPLES = 2000
# Fewer pairs than this give no verdict: a bootstrap of so few medians is not a CI.
MIN_PAIRS = 8


def sampler_cpu(run_dir: Path) -> tuple[float, float] | None:
    """(CPU seconds, monotonic time) of the run's sampler now, if it is running.

    Its own time to the nanosecond, and that of the children it has reaped
    (dash's forked sleeps) to the clock tick.
    """
    wanted = f"{run_dir}/sampler.sh".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if wanted in (entry / "cmdline").read_bytes().split(b"\0"):
                ns = int((entry / "schedstat").read_text().split()[0])
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                children = (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")
                return ns / 1e9 + children, time.monotonic()
        except (OSError, ValueError):
            continue
    return None


def one_run(shell: str, root: Path, binary: Path, work: int, interval: str) -> dict:
    log = root / f"own-{time.monotonic_ns()}.log"
    used = profile(
        root,
        interval,
        f"{{command: '{binary} work {work} {log}', warmup: {WARMUP}, iterations: {ITERATIONS}}}",
    )
    built, sensors = plan(shell, used, RunOptions(calibrations=3))
    began = time.monotonic()
    run_dir = launch(shell, built)
    first = last = None
    while not (run_dir / "events").read_text().rstrip("\n").rsplit("\n", 1)[-1].startswith("X"):
        reading = sampler_cpu(run_dir)
        if reading is not None:
            first = first or reading
            last = reading
        time.sleep(0.05)
    wait_for_end(run_dir / "events")
    elapsed = time.monotonic() - began
    own = [
        (int(end) - int(start)) / 1000
        for start, end in (line.split() for line in log.read_text().splitlines())
    ][WARMUP:]
    share = None
    if first and last and last[1] > first[1]:
        share = (last[0] - first[0]) / (last[1] - first[1])
    shutil.rmtree(run_dir, ignore_errors=True)
    return {
        "median_ms": statistics.median(own),
        "share": share,
        "rate": (ITERATIONS + WARMUP) / elapsed,
        "channels": len(sensors.reads),
    }


def bootstrap_ci(values: list[float], rng: random.Random) -> tuple[float, float]:
    medians = sorted(
        statistics.median(rng.choices(values, k=len(values))) for _ in range(RESAMPLES)
    )
    return medians[int(0.025 * RESAMPLES)], medians[int(0.975 * RESAMPLES) - 1]


def calibrate_work(binary: Path, root: Path, target_ms: float = 12.0) -> int:
    log = root / "calibrate.log"
    work = 1_000_000
    for _ in range(3):
        durations = []
        for _ in range(5):
            subprocess.run([str(binary), "work", str(work), str(log)], check=True)
            start, end = map(int, log.read_text().splitlines()[-1].split())
            durations.append((end - start) / 1000)
        work = int(work * target_ms / statistics.median(durations))
    return work


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=12)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    rng = random.Random(7)
    with tempfile.TemporaryDirectory(prefix="qtop-bench-") as tmp:
        root = Path(tmp)
        make_sysfs(root / "sys")
        binary = compile_workload(root)
        work = calibrate_work(binary, root)
        available = shells()
        effects: dict[str, list[tuple[float, float, float]]] = {name: [] for name in available}
        shares: dict[str, list[float]] = {name: [] for name in available}
        rates: list[float] = []
        channels = 0
        for _ in range(args.rounds):
            for name, shell in available.items():
                differences = []
                for _ in range(args.pairs):
                    order = ["100ms", "1000s"]
                    rng.shuffle(order)
                    results = {
                        interval: one_run(shell, root, binary, work, interval) for interval in order
                    }
                    on, off = results["100ms"], results["1000s"]
                    differences.append(on["median_ms"] - off["median_ms"])
                    if on["share"] is not None:
                        shares[name].append(on["share"] * 100)
                    rates.extend([on["rate"], off["rate"]])
                    channels = on["channels"]
                low, high = bootstrap_ci(differences, rng)
                effects[name].append((statistics.median(differences), low, high))
        print(
            f"workload: {work} units of arithmetic (~12 ms here), {ITERATIONS} measured "
            f"iterations per run, {statistics.median(rates):.0f} iterations/s; sampler "
            f"{channels} channels at 10 Hz vs off; {args.pairs} interleaved pairs per round, "
            f"{args.rounds} rounds; min / median / max over rounds"
        )
        for name, rounds in effects.items():
            print(f"{name}:")
            if shares[name]:
                print(f"  sampler CPU share       {spread(shares[name])} % of a core")
            for index, (median, low, high) in enumerate(rounds, start=1):
                if args.pairs < MIN_PAIRS:
                    verdict = f"not resolvable: fewer than {MIN_PAIRS} pairs"
                elif low <= 0 <= high:
                    verdict = "not resolvable: below this machine's noise"
                else:
                    verdict = f"{median:+.3f} ms"
                print(
                    f"  round {index}: effect on the workload: {verdict} "
                    f"(95 % CI of the median difference {low:+.3f} .. {high:+.3f} ms)"
                )


if __name__ == "__main__":
    main()

"""Paced runs against the simulated board: qtop's deadline misses and rate against the truth.

    python bench/pacing_truth.py [--rounds 3] [--keep DIR]

Each round runs three paced profiles over SSH against a simulated EVK whose
qnn-net-run has a fixed latency (tests/live/test_pacing_sim.py): an overloaded
fixed rate (about twice what the device serves, deadline 400 ms), a
sustainable fixed rate (4/s), and a Poisson schedule at 4/s. For each it prints
the misses qtop reported next to the range the simulator's truth implies (a
queue run on the truth's process lifetimes, with no gap between processes and
with a 40 ms one), the achieved rate against the target and against the
truth's service rate, the lateness percentiles and the duty cycle; then
min/median/max over the rounds, and the machine's load while it ran.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from live.sim_runs import PRISMML, custom, netrun, run_profile, truth
from live.test_pacing_sim import SHELL_GAP_S, fixed_latency_config, queue_misses

from qtop.analysis.session import analyze
from qtop.device.arrivals import poisson_gaps_us
from qtop.record.reader import open_recording
from qtop.sim import start_sim

SCENARIOS = {
    "overloaded": (13.5, 0.4, 30, "fixed", 30),
    "sustainable": (4.0, None, 30, "fixed", 10),
    "poisson": (4.0, None, 30, "poisson", 10),
}
SEED = 11


async def one(name: str, directory: Path) -> dict[str, float]:
    rate, deadline, count, schedule, inferences = SCENARIOS[name]
    lines = [
        f"  command: '{netrun(PRISMML, inferences)}'",
        "  warmup: 1",
        f"  iterations: {count}",
        f"  rate: {rate}",
        f"  schedule: {schedule}",
        f"  arrival_seed: {SEED}",
    ]
    if deadline is not None:
        lines.append(f"  deadline: {deadline}")
    async with start_sim(directory / "sim", variant="evk", config=fixed_latency_config()) as sim:
        path = directory / f"{name}.jsonl"
        await run_profile(custom(sim, "\n".join(lines) + "\n"), path)
        services = [r["wall_s"] for r in truth(sim, "qnn-net-run")][1:]
    (variant,) = analyze(open_recording(path).events()).variants
    pacing = variant.pacing
    assert pacing is not None
    if schedule == "poisson":
        gaps = [g / 1e6 for g in poisson_gaps_us(rate, SEED, count - 1)]
        arrivals = [sum(gaps[:k]) for k in range(count)]
    else:
        arrivals = [k / rate for k in range(count)]
    limit = deadline if deadline is not None else 1 / rate
    mean_service = statistics.fmean(services)
    return {
        "missed": pacing.missed,
        "truth_fewest": queue_misses(arrivals, services, limit, 0.0),
        "truth_most": queue_misses(arrivals, services, limit, SHELL_GAP_S),
        "miss_pct": 100 * (pacing.miss_fraction or 0.0),
        "achieved_hz": pacing.achieved_rate_hz or 0.0,
        "target_hz": rate,
        "truth_service_hz": 1 / mean_service,
        "lateness_p50_ms": 1e3 * (pacing.lateness_p50_s or 0.0),
        "lateness_p95_ms": 1e3 * (pacing.lateness_p95_s or 0.0),
        "lateness_max_ms": 1e3 * (pacing.lateness_max_s or 0.0),
        "duty_pct": 100 * (pacing.duty_cycle or 0.0),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--keep", type=Path, default=None, help="keep the recordings here")
    args = parser.parse_args()
    results: dict[str, list[dict[str, float]]] = {name: [] for name in SCENARIOS}
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as scratch:
        for round_number in range(args.rounds):
            for name in SCENARIOS:
                directory = (args.keep or Path(scratch)) / f"round{round_number}" / name
                directory.mkdir(parents=True, exist_ok=True)
                got = asyncio.run(one(name, directory))
                results[name].append(got)
                print(
                    f"round {round_number} {name}: missed {got['missed']:.0f} "
                    f"(truth {got['truth_fewest']:.0f}..{got['truth_most']:.0f}), achieved "
                    f"{got['achieved_hz']:.3f}/s of {got['target_hz']:g}/s (truth serves "
                    f"{got['truth_service_hz']:.3f}/s), lateness P50/P95/max "
                    f"{got['lateness_p50_ms']:.1f}/{got['lateness_p95_ms']:.1f}/"
                    f"{got['lateness_max_ms']:.1f} ms, duty {got['duty_pct']:.0f}%",
                    flush=True,
                )
    print(f"\nload average (1 min): {load_before:.2f} before, {os.getloadavg()[0]:.2f} after")
    for name, rounds in results.items():
        print(f"{name} (min / median / max of {len(rounds)} rounds):")
        for figure in rounds[0]:
            values = [r[figure] for r in rounds]
            print(
                f"  {figure:18s} {min(values):9.3f} {statistics.median(values):9.3f} "
                f"{max(values):9.3f}"
            )


if __name__ == "__main__":
    main()

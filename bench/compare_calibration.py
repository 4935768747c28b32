"""Does compare's gate pass as often as it says? python bench/compare_calibration.py

Rounds of three sustained runs on simulated EVKs with the demo's thermal
settings (tests/live/calibration.py): BASE and SAME of one configuration, SLOW
with every inference 3% slower. For each round it gates (BASE, SAME) and
(BASE, SLOW) with --max-regression p50=1% and prints:

- how often the gate passes two runs of one configuration, and how often it
  fails the real slowdown (the issue's check: at least 18 of 20 each);
- how often the 95% interval of the P50 change holds the truth (0, and the
  slowdown as measured on the simulator's own latencies: the ratio of the two
  runs' P50 with the same thermal story is the scale, 3%);
- the same for the interval compare gave before it knew about autocorrelation
  (iterations resampled one by one), and the Mann-Whitney p-values of the null
  pairs with and without the autocorrelation widening;
- the effective sizes, and the wall and CPU time per round.

Options: --rounds N (default 40), --time-scale, --iterations, --inferences,
--slowdown, --keep DIR (keep the recordings), --reuse DIR (only analyse the
recordings of an earlier --keep).
"""

from __future__ import annotations

import argparse
import asyncio
import math
import random
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from live.calibration import Round, Settings, run_rounds

from qtop.analysis.compare import compare_sessions, parse_gate
from qtop.analysis.session import analyze
from qtop.analysis.variability import change_interval, mann_whitney
from qtop.record.reader import open_recording

GATE = parse_gate("p50=1%")


def iid_p50_draws(values: list[float], resamples: int, rng: random.Random) -> list[float]:
    """The P50 of iterations resampled one by one, drawn exactly (compare's earlier method)."""
    ordered = sorted(values)
    n = len(ordered)
    position = 0.5 * (n - 1)
    k = math.floor(position)
    fraction = position - k
    out = []
    for _ in range(resamples):
        u_low = rng.betavariate(k + 1, n - k)
        low = ordered[min(int(n * u_low), n - 1)]
        remaining = n - k - 1
        if fraction and remaining:
            u_high = u_low + (1 - u_low) * (1 - rng.random() ** (1 / remaining))
            high = ordered[min(int(n * u_high), n - 1)]
            low += (high - low) * fraction
        out.append(low)
    return out


def latencies(analysis) -> list[float]:
    (variant,) = analysis.variants
    return list(variant.latencies_s)


class Tally:
    def __init__(self) -> None:
        self.rows: list[dict] = []

    def add(self, number: int, pair: Round) -> dict:
        analyses = {name: analyze(open_recording(getattr(pair, name)).events())
                    for name in ("base", "same", "slow")}  # fmt: skip
        row: dict = {"round": number}
        series = {name: latencies(a) for name, a in analyses.items()}
        truth = {"same": 0.0, "slow": None}
        for other in ("same", "slow"):
            comparison = compare_sessions(analyses["base"], analyses[other], [GATE])
            (variant,) = comparison.variants
            p50 = variant.delta("p50")
            rng = random.Random(number)
            iid = change_interval(
                iid_p50_draws(series["base"], 2000, rng),
                iid_p50_draws(series[other], 2000, rng),
                0.95,
            )
            row[other] = {
                "change": p50.change,
                "interval": (p50.ci_low, p50.ci_high),
                "failed": comparison.failed,
                "iid_interval": iid,
                "iid_failed": iid[0] > GATE.threshold,
                "truth": truth[other],
                "n": (variant.base_dependence.n, variant.new_dependence.n),
                "n_eff": (variant.base_dependence.n_eff, variant.new_dependence.n_eff),
                "p": variant.mann_whitney.p_value,
                "iid_p": mann_whitney(series["base"], series[other]).p_value,
            }
        self.rows.append(row)
        return row


def show_row(row: dict) -> str:
    parts = [f"round {row['round']:3d}"]
    for other in ("same", "slow"):
        r = row[other]
        low, high = r["interval"]
        il, ih = r["iid_interval"]
        parts.append(
            f"{other}: {r['change']:+.2%} [{low:+.2%}, {high:+.2%}] "
            f"{'FAIL' if r['failed'] else 'pass'} (iid [{il:+.2%}, {ih:+.2%}] "
            f"{'FAIL' if r['iid_failed'] else 'pass'})"
        )
    return "  ".join(parts)


def summary(rows: list[dict], slowdown: float) -> str:
    n = len(rows)
    if n < 2:
        return f"{n} rounds: too few for a summary"

    def count(other: str, key: str) -> int:
        return sum(1 for row in rows if row[other][key])

    def holds(other: str, key: str, truth: float) -> int:
        return sum(1 for row in rows if row[other][key][0] <= truth <= row[other][key][1])

    # The slowdown as it shows in P50: the scale itself (the thermal story is the same).
    true_slow = slowdown - 1
    same_neff = [x for row in rows for x in row["same"]["n_eff"]]
    same_n = [x for row in rows for x in row["same"]["n"]]
    null_changes = [row["same"]["change"] for row in rows]
    lines = [
        f"{n} rounds",
        f"gate p50=1%, block bootstrap (now): passes {n - count('same', 'failed')}/{n} "
        f"runs of one configuration; fails {count('slow', 'failed')}/{n} with the "
        f"{true_slow:.0%} slowdown",
        f"gate p50=1%, iterations one by one (before): passes "
        f"{n - count('same', 'iid_failed')}/{n}; fails {count('slow', 'iid_failed')}/{n}",
        f"95% interval holds the true change, block bootstrap: {holds('same', 'interval', 0)}"
        f"/{n} (null), {holds('slow', 'interval', true_slow)}/{n} (slowdown)",
        f"95% interval holds the true change, one by one: "
        f"{holds('same', 'iid_interval', 0)}/{n} (null), "
        f"{holds('slow', 'iid_interval', true_slow)}/{n} (slowdown)",
        f"Mann-Whitney p < 0.05 on runs of one configuration: "
        f"{sum(row['same']['p'] < 0.05 for row in rows)}/{n} widened for autocorrelation, "
        f"{sum(row['same']['iid_p'] < 0.05 for row in rows)}/{n} as if independent "
        f"(median p {statistics.median(row['same']['p'] for row in rows):.2g} vs "
        f"{statistics.median(row['same']['iid_p'] for row in rows):.2g})",
        f"P50 change between runs of one configuration: sd {statistics.stdev(null_changes):.2%}"
        f", range {min(null_changes):+.2%} to {max(null_changes):+.2%}",
        f"iterations per run: median {statistics.median(same_n):.0f}; effective: median "
        f"{statistics.median(same_neff):.0f} (min {min(same_neff):.0f}, max "
        f"{max(same_neff):.0f})",
    ]
    widths = [row["same"]["interval"][1] - row["same"]["interval"][0] for row in rows]
    iid_widths = [row["same"]["iid_interval"][1] - row["same"]["iid_interval"][0] for row in rows]
    lines.append(
        f"width of the 95% interval of the P50 change: median {statistics.median(widths):.2%} "
        f"(one by one: {statistics.median(iid_widths):.2%})"
    )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    defaults = Settings()
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--time-scale", type=float, default=defaults.time_scale)
    parser.add_argument("--iterations", type=int, default=defaults.iterations)
    parser.add_argument("--inferences", type=int, default=defaults.inferences_per_process)
    parser.add_argument("--slowdown", type=float, default=defaults.slowdown)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--keep", type=Path, help="keep the recordings in this directory")
    parser.add_argument("--reuse", type=Path, help="analyse the recordings of an earlier --keep")
    args = parser.parse_args()
    settings = Settings(
        time_scale=args.time_scale,
        iterations=args.iterations,
        inferences_per_process=args.inferences,
        slowdown=args.slowdown,
    )
    tally = Tally()
    if args.reuse:
        paths = sorted(args.reuse.glob("round*-base.jsonl"))
        for number, base in enumerate(paths):
            pair = Round(base, base.with_name(base.name.replace("-base", "-same")),
                         base.with_name(base.name.replace("-base", "-slow")))  # fmt: skip
            print(show_row(tally.add(number, pair)), flush=True)
        print(summary(tally.rows, settings.slowdown))
        return 0
    print(settings.describe(), flush=True)
    started = time.monotonic()
    cpu = resource.getrusage(resource.RUSAGE_SELF)
    clock = {"t": started}

    def on_round(number: int, pair: Round) -> None:
        now = time.monotonic()
        row = tally.add(number, pair)
        print(f"{show_row(row)}  ({now - clock['t']:.1f} s)", flush=True)
        clock["t"] = time.monotonic()

    with tempfile.TemporaryDirectory(prefix="qtop-calibration-") as scratch:
        directory = args.keep or Path(scratch)
        asyncio.run(run_rounds(directory, args.rounds, settings, args.seed, on_round))
    used = resource.getrusage(resource.RUSAGE_SELF)
    seconds = used.ru_utime + used.ru_stime - cpu.ru_utime - cpu.ru_stime
    print(summary(tally.rows, settings.slowdown))
    print(
        f"{args.rounds} rounds in {time.monotonic() - started:.0f} s wall, "
        f"{seconds:.0f} s CPU of this process (runs, simulators and analysis)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

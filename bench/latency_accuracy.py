"""Wall latency against the command's own clock: python bench/latency_accuracy.py

A C program (tests/link/timed_workload.c) records its own first and last
readings of CLOCK_REALTIME around a sleep; qtop's agent runs it as the
measured command, in every agent shell there is, and its wall latency (the
stamped window less the calibrated overhead, as the host computes it) is set
against the program's own duration, iteration by iteration. Per run: the
median error over the iterations, against the goal max(1 %, 0.5 ms); per
shell and length: how many runs met it, and min / median / max of the
median error and of the calibration's spread (half its IQR, the uncertainty
each iteration carries). Also prints the rate: iterations per second.

    --runs 15 --iterations 40 --lengths 2000,20000,100000 (microseconds)

The parsing is of the raw lines (tag, seq, time, fields), so the same script
measures an older agent from another checkout (PYTHONPATH=that checkout).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from agent_setup import compile_c, launch, make_sysfs, plan, profile, shells, spread

from qtop.device.plan import RunOptions

SOURCE = Path(__file__).resolve().parents[1] / "tests" / "link" / "timed_workload.c"


def compile_workload(directory: Path) -> Path:
    binary = compile_c(SOURCE, directory / "timed_workload")
    if binary is None:
        raise SystemExit("needs a C compiler (gcc) for the self-timing workload")
    return binary


def wait_for_end(events: Path, timeout: float = 600.0) -> list[list[str]]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        lines = [line.split("\t") for line in events.read_text().splitlines()]
        if lines and lines[-1][0] == "X":
            return lines
        time.sleep(0.1)
    raise SystemExit(f"the run in {events.parent} did not end")


def one_run(shell: str, root: Path, binary: Path, length_us: int, iterations: int) -> dict:
    log = root / f"own-{time.monotonic_ns()}.log"
    warmup = 2
    used = profile(
        root,
        "100ms",
        f"{{command: '{binary} sleep {length_us} {log}', warmup: {warmup}, "
        f"iterations: {iterations}}}",
    )
    built, _ = plan(shell, used, RunOptions())
    began = time.monotonic()
    run_dir = launch(shell, built)
    lines = wait_for_end(run_dir / "events")
    elapsed = time.monotonic() - began
    calibration = sorted(
        int(d) for line in lines if line[0] == "C" for d in line[3].split(",") if d
    )
    overhead = statistics.median(calibration)
    quartiles = statistics.quantiles(calibration, n=4)
    windows = [int(line[8]) - int(line[7]) for line in lines if line[0] == "I"]
    own = [
        int(end) - int(start)
        for start, end in (entry.split() for entry in log.read_text().splitlines())
    ]
    errors = [max(0.0, w - overhead) - o for w, o in zip(windows, own, strict=True)][warmup:]
    true_median = statistics.median(own[warmup:])
    error = statistics.median(errors)
    shutil.rmtree(run_dir, ignore_errors=True)
    return {
        "error_ms": error / 1000,
        "ok": abs(error) <= max(0.01 * true_median, 500),
        "spread_ms": (quartiles[2] - quartiles[0]) / 2 / 1000,
        "overhead_ms": overhead / 1000,
        "rate": len(windows) / elapsed,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--iterations", type=int, default=40)
    parser.add_argument("--lengths", default="2000,20000,100000")
    args = parser.parse_args()
    lengths = [int(x) for x in args.lengths.split(",")]
    with tempfile.TemporaryDirectory(prefix="qtop-bench-") as tmp:
        root = Path(tmp)
        make_sysfs(root / "sys")
        binary = compile_workload(root)
        print(
            f"wall latency against the program's own clock: {args.runs} runs of "
            f"{args.iterations} iterations each (after 2 warm-up), default calibration "
            "(21 runs of an external true); goal |median error| <= max(1 %, 0.5 ms)"
        )
        for name, shell in shells().items():
            for length in lengths:
                runs = [
                    one_run(shell, root, binary, length, args.iterations) for _ in range(args.runs)
                ]
                passed = sum(r["ok"] for r in runs)
                print(
                    f"{name:8} sleep {length / 1000:g} ms: {passed}/{len(runs)} runs within; "
                    f"median error {spread([r['error_ms'] for r in runs])} ms; "
                    f"overhead {spread([r['overhead_ms'] for r in runs])} ms "
                    f"+- {spread([r['spread_ms'] for r in runs])} ms; "
                    f"{statistics.median(r['rate'] for r in runs):.0f} iterations/s",
                    flush=True,
                )


if __name__ == "__main__":
    main()

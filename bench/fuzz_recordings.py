"""Fuzz every command that reads a recording: python bench/fuzz_recordings.py --inputs 1000000

Each input is a real recording (tests/fixtures/recordings, format versions 1
and 2) cut to a window of at most 60 lines and damaged
(tests/fixtures/recording_fuzz.py says how), written to a file and given to
each entry point as the command line runs it, in the worker's own process:
report in its four formats, replay --headless, export as csv (samples and
iterations), perfetto and jsonl, seeks to several device times, and compare.
Every input goes through every entry point, so N inputs are N per entry point.
The report's formats and replay --headless share one ``summarize_recording``
of the input (the same function on the same bytes; each renders it as its
command does), and compare runs 100 bootstrap resamples, its minimum.

Workers (--workers, forked once; bench/fuzz_pool.py) run inputs one after the
other. Input ``i`` of seed ``s`` is the same file every time, so a finding is
reproduced with ``--replay s:i`` (which also writes the file with ``--keep
DIR``). Each entry point has a CPU-time limit per input (--cpu-limit, default
2 s, a timer in the worker); one that runs past it is a hang. A worker that
dies on an input, or spends a minute of CPU on one without its timer firing,
is a finding too, and a fresh worker goes on with the next input.

Printed: inputs per second as it goes, then every distinct signature (the
exception and the innermost qtop frame, or the kind of bad output) with how
often it came and the first input that showed it.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fixtures.recording_fuzz import (
    ENTRY_POINTS,
    Damaged,
    RandomChooser,
    check_damaged,
    damaged_recording,
)
from fuzz_pool import Lost, Pool, Totals

REPORT_EVERY_S = 60.0
CHUNK = 20


def damaged_input(seed: int, number: int) -> Damaged:
    return damaged_recording(RandomChooser(random.Random(f"{seed}:{number}")))


def one_input(seed: int, cpu_limit: float, number: int) -> tuple[Counter[str], list[Any]]:
    """In a worker: input ``number`` through every entry point; findings as
    (entry, kind, signature, detail)."""
    try:
        damaged = damaged_input(seed, number)
    except Exception as exc:  # the harness's own damage failed: a finding, not a dead worker
        return Counter(harness=1), [("harness", "harness", repr(exc), "")]
    outcomes = check_damaged(damaged, seed=number, cpu_limit_s=cpu_limit)
    counts = Counter(outcome.kind for outcome in outcomes)
    found = [(o.entry, o.kind, o.signature, o.detail) for o in outcomes if o.failed]
    return counts, found


def run(args: argparse.Namespace) -> int:
    pool = Pool(
        lambda number: one_input(args.seed, args.cpu_limit, number),
        workers=args.workers,
        chunk=CHUNK,
        stuck_cpu_s=max(60.0, 30 * args.cpu_limit),
    )
    totals = Totals()
    began = time.monotonic()
    cpu_began = os.times()
    signatures: dict[tuple[str, str], list[Any]] = {}
    next_report = began + REPORT_EVERY_S
    stop = args.first + args.inputs
    print(
        f"inputs {args.first:,} to {stop - 1:,} of seed {args.seed}, {args.workers} worker(s), "
        f"{args.cpu_limit:g} s of CPU per entry point",
        flush=True,
    )
    deadline = began + 60 * args.minutes if args.minutes else float("inf")
    for item in pool.run(args.first, stop, totals, deadline):
        if isinstance(item, Lost):
            kind = "hang" if item.kind == "stuck" else "crash"
            found: tuple[int, tuple[str, ...]] | None = (
                item.number,
                ("worker", kind, f"worker {item.kind}", item.what),
            )
        else:
            found = item
        if found is not None:
            number, (entry, kind, signature, detail) = found
            key = (kind, signature)
            if key not in signatures:
                signatures[key] = [0, f"{args.seed}:{number}", entry, detail]
                print(
                    f"NEW {kind}: {signature} (input {args.seed}:{number}, {entry})\n{detail}",
                    flush=True,
                )
            signatures[key][0] += 1
        if time.monotonic() >= next_report:
            next_report += REPORT_EVERY_S
            elapsed = time.monotonic() - began
            print(
                f"{totals.inputs:,} inputs in {elapsed:.0f} s ({totals.inputs / elapsed:.1f}/s); "
                f"findings: {len(signatures)} signature(s); {dict(totals.outcomes)}",
                flush=True,
            )
    elapsed = time.monotonic() - began
    ended = os.times()
    cpu = (ended.children_user + ended.children_system) - (
        cpu_began.children_user + cpu_began.children_system
    )
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"\n{totals.inputs:,} inputs ({args.first:,} to {args.first + totals.inputs - 1:,} "
        f"of seed {args.seed}), each through {len(ENTRY_POINTS)} entry points "
        f"({', '.join(ENTRY_POINTS)})"
    )
    print(
        f"{elapsed:.0f} s wall, {cpu:.0f} s CPU in {args.workers} worker(s): "
        f"{totals.inputs / elapsed:.1f} inputs/s ({totals.inputs / max(cpu, 1e-9):.1f} per CPU "
        f"second); load average {load}"
    )
    print(f"outcomes per entry point and input: {dict(totals.outcomes)}")
    if not signatures:
        print("no crash, hang, escape or invalid output")
        return 0
    print(f"{len(signatures)} distinct finding(s):")
    for (kind, signature), (count, where, entry, _detail) in sorted(
        signatures.items(), key=lambda item: -item[1][0]
    ):
        print(f"  {count:6d} x {kind}: {signature} (first: input {where}, {entry})")
    return 1


def replay(args: argparse.Namespace) -> int:
    seed, number = (int(part) for part in args.replay.split(":"))
    damaged = damaged_input(seed, number)
    if args.keep:
        path = damaged.write(Path(args.keep), f"fuzz-{seed}-{number}")
        print(f"wrote {path} (from {damaged.source})")
    for outcome in check_damaged(damaged, seed=number, cpu_limit_s=args.cpu_limit):
        print(f"{outcome.entry}: {outcome.kind} {outcome.signature}")
        if outcome.detail:
            print(outcome.detail)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", type=int, default=10_000, help="inputs (per entry point)")
    parser.add_argument("--first", type=int, default=0, help="the first input's number")
    parser.add_argument(
        "--minutes", type=float, help="start no input after this long (those begun finish)"
    )
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cpu-limit", type=float, default=2.0, help="CPU seconds per entry point")
    parser.add_argument("--replay", metavar="SEED:N", help="run one input again and show it")
    parser.add_argument("--keep", metavar="DIR", help="with --replay: write the input here")
    args = parser.parse_args()
    return replay(args) if args.replay else run(args)


if __name__ == "__main__":
    raise SystemExit(main())

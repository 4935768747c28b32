"""Fuzz every command that reads a recording: python bench/fuzz_recordings.py --inputs 1000000

Each input is a real recording (tests/fixtures/recordings, format versions 1
and 2) cut to a window of lines and damaged (tests/fixtures/recording_fuzz.py
says how), written to a file and given to each entry point: report in its four
formats, replay --headless, export as csv (samples and iterations), perfetto
and jsonl, seeks to several device times, and compare. Every input goes
through every entry point, so N inputs are N per entry point.

Workers (one process each, --workers) draw inputs from seeded generators: input
``i`` of seed ``s`` is the same file every time, so a finding is reproduced
with ``--replay s:i`` (which also writes the file with ``--keep DIR``). Each
entry point has a CPU-time limit per input (--cpu-limit, default 2 s); one that
runs past it is a hang.

Printed: inputs per second as it goes, then every distinct signature (the
exception and the innermost qtop frame, or the kind of bad output) with how
often it came and the first input that showed it.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fixtures.recording_fuzz import (
    ENTRY_POINTS,
    RandomChooser,
    check_damaged,
    damaged_recording,
)

REPORT_EVERY = 2000


def damaged_input(seed: int, number: int):  # type: ignore[no-untyped-def]
    return damaged_recording(RandomChooser(random.Random(f"{seed}:{number}")))


def worker(
    seed: int, first: int, count: int, cpu_limit: float, results: multiprocessing.Queue
) -> None:
    # A worker's own failures must not stop the others; each input is independent.
    counts: Counter[str] = Counter()
    for number in range(first, first + count):
        try:
            damaged = damaged_input(seed, number)
        except Exception as exc:  # the harness's own damage failed: report it, go on
            results.put(("finding", f"{seed}:{number}", "harness", "harness", repr(exc), ""))
            continue
        outcomes = check_damaged(damaged, seed=number, cpu_limit_s=cpu_limit)
        for outcome in outcomes:
            counts[outcome.kind] += 1
            if outcome.failed:
                results.put(
                    (
                        "finding",
                        f"{seed}:{number}",
                        outcome.entry,
                        outcome.kind,
                        outcome.signature,
                        outcome.detail,
                    )
                )
        if (number - first + 1) % 50 == 0:
            results.put(("progress", 50, dict(counts)))
            counts.clear()
    results.put(("progress", (count % 50), dict(counts)))
    results.put(("done",))


def run(args: argparse.Namespace) -> int:
    workers = args.workers
    per_worker = -(-args.inputs // workers)
    queue: multiprocessing.Queue = multiprocessing.Queue()
    processes = [
        multiprocessing.Process(
            target=worker,
            args=(
                args.seed,
                k * per_worker,
                min(per_worker, args.inputs - k * per_worker),
                args.cpu_limit,
                queue,
            ),
            daemon=True,
        )
        for k in range(workers)
        if k * per_worker < args.inputs
    ]
    began = time.monotonic()
    cpu_began = os.times()
    for process in processes:
        process.start()
    done = 0
    inputs = 0
    kinds: Counter[str] = Counter()
    signatures: dict[tuple[str, str], list] = {}
    next_report = REPORT_EVERY
    while done < len(processes):
        message = queue.get()
        if message[0] == "done":
            done += 1
        elif message[0] == "progress":
            inputs += message[1]
            kinds.update(message[2])
            if inputs >= next_report:
                next_report += REPORT_EVERY
                elapsed = time.monotonic() - began
                print(
                    f"{inputs:,} inputs in {elapsed:.0f} s ({inputs / elapsed:.1f}/s); "
                    f"findings: {len(signatures)} signature(s); {dict(kinds)}",
                    flush=True,
                )
        else:
            _, where, entry, kind, signature, detail = message
            key = (kind, signature)
            if key not in signatures:
                signatures[key] = [0, where, entry, detail]
                print(f"NEW {kind}: {signature} (input {where}, {entry})\n{detail}", flush=True)
            signatures[key][0] += 1
    for process in processes:
        process.join()
    elapsed = time.monotonic() - began
    ended = os.times()
    cpu = (ended.children_user + ended.children_system) - (
        cpu_began.children_user + cpu_began.children_system
    )
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"\n{inputs:,} inputs, each through {len(ENTRY_POINTS)} entry points "
        f"({', '.join(ENTRY_POINTS)})"
    )
    print(
        f"{elapsed:.0f} s wall, {cpu:.0f} s CPU in {len(processes)} workers: "
        f"{inputs / elapsed:.1f} inputs/s ({inputs / max(cpu, 1e-9):.1f} per CPU second); "
        f"load average {load}"
    )
    print(f"outcomes per entry point and input: {dict(kinds)}")
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
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cpu-limit", type=float, default=2.0, help="CPU seconds per entry point")
    parser.add_argument("--replay", metavar="SEED:N", help="run one input again and show it")
    parser.add_argument("--keep", metavar="DIR", help="with --replay: write the input here")
    args = parser.parse_args()
    return replay(args) if args.replay else run(args)


if __name__ == "__main__":
    raise SystemExit(main())

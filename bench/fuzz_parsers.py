"""The long fuzz run of the profiler parsers: python bench/fuzz_parsers.py [--inputs N] [--jobs J]

Mutates the real fixtures (tests/fixtures/profiler, tests/sim/golden) with
byte flips, cuts, duplicated and hostile lines, numbers beyond 64 bits and
beyond a float, NaN and Infinity, unhashable JSON values, deep nesting and
invalid UTF-8, and feeds each input to every target in
tests/parsers/fuzz_support.py: each parser (and everything that reads its
result), ``qtop ops``, and the live profiler hooks.

Inputs are numbered and rebuilt from (seed, target, number), so any finding
can be replayed: ``--replay TARGET NUMBER``. Workers (--jobs, forked once per
target; bench/fuzz_pool.py) run the inputs one after the other in their own
process. Each input gets ``--time-limit`` seconds of CPU time (a profiling
timer in the worker, so a busy machine does not turn slow inputs into hangs);
an input that runs out of time is a hang. A worker that dies on an input, or
spends a minute of CPU (or 15 minutes) on one where the timer cannot interrupt
it, is killed by the parent: that input is a finding, and a fresh worker goes
on with the next. Each distinct crash (exception type and innermost qtop
frame) is written once to ``--findings`` with its input and traceback. Prints,
per target, the inputs run, inputs/s (wall and per CPU second of the
workers), crashes (distinct and total) and hangs.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import os
import random
import signal
import sys
import time
import traceback
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "parsers"))

import fuzz_support  # noqa: E402
from fuzz_pool import Lost, Pool, Totals  # noqa: E402

REPORT_EVERY_S = 60.0
CHUNK = 200


class Hang(BaseException):
    """Raised by the timer: the input ran past its CPU time limit (a BaseException, so
    no ``except Exception`` in the code under test can swallow it)."""


def build_input(seed: int, target: str, number: int) -> bytes:
    rng = random.Random(f"{seed}:{target}:{number}")
    return fuzz_support.mutate(rng, fuzz_support.target_seeds(target))


def signature(exc: BaseException) -> str:
    """Exception type and the innermost frame in qtop (else the innermost frame)."""
    frames = traceback.extract_tb(exc.__traceback__)
    inner = [frame for frame in frames if "/qtop/" in frame.filename] or frames
    where = f"{Path(inner[-1].filename).name}:{inner[-1].lineno}" if inner else "?"
    return f"{type(exc).__name__} at {where}"


def _on_alarm(signum: int, frame: Any) -> None:
    raise Hang


def one_input(
    target: str, seed: int, time_limit: float, number: int
) -> tuple[Counter[str], list[Any]]:
    """In a worker: input ``number`` through ``target`` under a CPU timer; a finding is
    (kind, what, traceback, input)."""
    data = build_input(seed, target, number)
    signal.signal(signal.SIGPROF, _on_alarm)
    signal.setitimer(signal.ITIMER_PROF, time_limit)
    try:
        fuzz_support.TARGETS[target](data)
    except Hang:
        return Counter(hang=1), [("hang", f"over {time_limit:g} s of CPU", "", data)]
    except (Exception, RecursionError) as exc:
        return Counter(crash=1), [("crash", signature(exc), traceback.format_exc(), data)]
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
    return Counter(ok=1), []


class Findings:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.crashes: dict[str, dict[str, int]] = {}
        self.hangs: dict[str, int] = {}
        self.examples: set[str] = set()

    def crash(self, target: str, number: int, where: str, trace: str, data: bytes) -> None:
        per_target = self.crashes.setdefault(target, {})
        per_target[where] = per_target.get(where, 0) + 1
        key = f"{target}|{where}"
        if key not in self.examples:
            self.examples.add(key)
            self._save(target, number, where, trace, data)
            print(f"  crash in {target}: {where} (input {number})", flush=True)

    def hang(self, target: str, number: int, what: str, data: bytes) -> None:
        self.hangs[target] = self.hangs.get(target, 0) + 1
        self._save(target, number, f"hang {what}", "", data)
        print(f"  hang in {target}: input {number} ({what})", flush=True)

    def _save(self, target: str, number: int, what: str, trace: str, data: bytes) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        name = hashlib.sha1(f"{target}|{what}|{number}".encode()).hexdigest()[:12]
        stem = f"{target.replace(':', '-')}-{name}"
        (self.directory / f"{stem}.input").write_bytes(data)
        (self.directory / f"{stem}.txt").write_text(
            f"target: {target}\ninput: {number}\n{what}\n\n{trace}"
        )


def run_target(target: str, args: argparse.Namespace, findings: Findings) -> dict[str, float]:
    pool = Pool(
        functools.partial(one_input, target, args.seed, args.time_limit),
        workers=args.jobs,
        chunk=CHUNK,
        stuck_cpu_s=max(30 * args.time_limit, 60.0),
    )
    totals = Totals()
    started = time.monotonic()
    cpu_started = _children_cpu()
    next_report = started + REPORT_EVERY_S
    for item in pool.run(args.first, args.first + args.inputs, totals):
        if isinstance(item, Lost):
            data = build_input(args.seed, target, item.number)
            if item.kind == "stuck":
                findings.hang(target, item.number, item.what, data)
            else:
                findings.crash(target, item.number, item.what, "", data)
        elif item is not None:
            number, (kind, what, trace, data) = item
            if kind == "hang":
                findings.hang(target, number, what, data)
            else:
                findings.crash(target, number, what, trace, data)
        now = time.monotonic()
        if now >= next_report:
            next_report += REPORT_EVERY_S
            rate = totals.inputs / (now - started)
            print(f"  {target}: {totals.inputs:,} inputs, {rate:,.0f}/s", flush=True)
    return {
        "inputs": totals.inputs,
        "seconds": time.monotonic() - started,
        "cpu": _children_cpu() - cpu_started,
    }


def _children_cpu() -> float:
    times = os.times()
    return times.children_user + times.children_system


def replay(args: argparse.Namespace) -> None:
    target, number = args.replay[0], int(args.replay[1])
    data = build_input(args.seed, target, number)
    if args.save:
        Path(args.save).write_bytes(data)
    print(f"{target} input {number}: {len(data)} bytes")
    started = time.perf_counter()
    fuzz_support.TARGETS[target](data)
    print(f"no crash ({time.perf_counter() - started:.3f} s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", type=int, default=100_000, help="inputs per target")
    parser.add_argument("--first", type=int, default=0, help="the first input's number")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument(
        "--time-limit", type=float, default=2.0, help="CPU seconds per input (default 2)"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--target", action="append", help="only these targets (repeatable)")
    parser.add_argument("--findings", default="fuzz-findings", help="where findings are written")
    parser.add_argument("--replay", nargs=2, metavar=("TARGET", "NUMBER"))
    parser.add_argument("--save", metavar="FILE", help="with --replay: write the input here")
    args = parser.parse_args()
    if args.replay:
        replay(args)
        return
    targets = args.target or list(fuzz_support.TARGETS)
    unknown = set(targets) - set(fuzz_support.TARGETS)
    if unknown:
        parser.error(f"unknown target(s) {sorted(unknown)}; known: {list(fuzz_support.TARGETS)}")
    findings = Findings(Path(args.findings))
    print(
        f"{len(targets)} target(s), {args.inputs:,} inputs each, {args.jobs} worker(s), "
        f"{args.time_limit:g} s per input, seed {args.seed}",
        flush=True,
    )
    totals = []
    for target in targets:
        result = run_target(target, args, findings)
        crashes = findings.crashes.get(target, {})
        hangs = findings.hangs.get(target, 0)
        rate = result["inputs"] / result["seconds"] if result["seconds"] else 0.0
        cpu_rate = result["inputs"] / result["cpu"] if result["cpu"] else 0.0
        print(
            f"{target}: {result['inputs']:,} inputs in {result['seconds']:.0f} s "
            f"({rate:,.0f}/s; {cpu_rate:,.0f} per CPU second of the workers): "
            f"{len(crashes)} distinct crash(es) "
            f"({sum(crashes.values())} inputs), {hangs} hang(s)",
            flush=True,
        )
        totals.append((target, result["inputs"], len(crashes), hangs))
    print("\nsummary (target, inputs, distinct crashes, hangs):")
    for target, inputs, crashes, hangs in totals:
        print(f"  {target:28} {inputs:>10,} {crashes:>4} {hangs:>4}")


if __name__ == "__main__":
    main()

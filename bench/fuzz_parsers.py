"""The long fuzz run of the profiler parsers: python bench/fuzz_parsers.py [--inputs N] [--jobs J]

Mutates the real fixtures (tests/fixtures/profiler, tests/sim/golden) with
byte flips, cuts, duplicated and hostile lines, numbers beyond 64 bits and
beyond a float, NaN and Infinity, unhashable JSON values, deep nesting and
invalid UTF-8, and feeds each input to every target in
tests/parsers/fuzz_support.py: each parser (and everything that reads its
result), ``qtop ops``, and the live profiler hooks.

Inputs are numbered and rebuilt from (seed, target, number), so any finding
can be replayed: ``--replay TARGET NUMBER``. Each input gets ``--time-limit``
seconds of CPU time (a profiling timer in the worker, so a busy machine does
not turn slow inputs into hangs; a worker that spends a minute of CPU on one
input, stuck where the timer cannot interrupt it, is killed by the parent);
an input that runs out of time is a hang. Measured in CPU time, a run can be
paused (SIGSTOP / SIGCONT) without inventing hangs. Each distinct
crash (exception type and innermost qtop frame) is written once to
``--findings`` with its input and traceback. Prints, per target, the inputs
run, inputs/s, crashes (distinct and total) and hangs.
"""

from __future__ import annotations

import argparse
import hashlib
import multiprocessing
import os
import queue
import random
import signal
import sys
import time
import traceback
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "parsers"))

import fuzz_support  # noqa: E402
import psutil  # noqa: E402

REPORT_EVERY_S = 30.0


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


def worker(
    target: str,
    seed: int,
    first: int,
    step: int,
    count: int,
    time_limit: float,
    current: Any,
    results: Any,
) -> None:
    signal.signal(signal.SIGPROF, _on_alarm)
    check = fuzz_support.TARGETS[target]
    done = 0
    for number in range(first, count, step):
        data = build_input(seed, target, number)
        current.value = number
        signal.setitimer(signal.ITIMER_PROF, time_limit)
        try:
            check(data)
        except Hang:
            results.put(("hang", target, number, f"over {time_limit:g} s of CPU", "", data))
        except (Exception, RecursionError) as exc:
            results.put(("crash", target, number, signature(exc), traceback.format_exc(), data))
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
        done += 1
        if done % 200 == 0:
            results.put(("progress", target, done, "", "", b""))
            done = 0
    results.put(("progress", target, done, "", "", b""))
    current.value = -1


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
    context = multiprocessing.get_context("fork")
    results = context.Queue()
    hard_limit = max(30 * args.time_limit, 60.0)
    slots: list[dict[str, Any]] = []

    def start(first: int, step: int) -> dict[str, Any]:
        current = context.Value("q", -1)
        process = context.Process(
            target=worker,
            args=(target, args.seed, first, step, args.inputs, args.time_limit, current, results),
            daemon=True,
        )
        process.start()
        return {
            "process": process,
            "cpu": psutil.Process(process.pid),
            "current": current,
            "step": step,
            "last": -1,
            "since": 0.0,
        }

    for first in range(args.jobs):
        slots.append(start(first, args.jobs))
    done = 0
    started = time.monotonic()
    last_report = started
    while any(slot["process"].is_alive() for slot in slots) or not results.empty():
        try:
            kind, _, number, what, trace, data = results.get(timeout=0.5)
        except queue.Empty:
            kind = ""
        if kind == "progress":
            done += number
        elif kind == "crash":
            findings.crash(target, number, what, trace, data)
        elif kind == "hang":
            findings.hang(target, number, what, data)
        now = time.monotonic()
        for index, slot in enumerate(slots):
            number = slot["current"].value
            if number < 0 or not slot["process"].is_alive():
                continue
            try:
                cpu = sum(slot["cpu"].cpu_times()[:2])
            except psutil.Error:
                continue
            if number != slot["last"]:
                slot["last"], slot["since"] = number, cpu
            elif cpu - slot["since"] > hard_limit:
                # Stuck where the alarm cannot interrupt it (inside C code).
                slot["process"].kill()
                slot["process"].join()
                data = build_input(args.seed, target, number)
                findings.hang(target, number, f"{hard_limit:g} s of CPU on one input", data)
                done += 1
                step = slot["step"]
                if number + step < args.inputs:
                    slots[index] = start(number + step, step)
        if now - last_report > REPORT_EVERY_S:
            last_report = now
            rate = done / (now - started)
            print(f"  {target}: {done:,} inputs, {rate:,.0f}/s", flush=True)
    elapsed = time.monotonic() - started
    return {"inputs": done, "seconds": elapsed}


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
        print(
            f"{target}: {result['inputs']:,} inputs in {result['seconds']:.0f} s "
            f"({rate:,.0f}/s): {len(crashes)} distinct crash(es) "
            f"({sum(crashes.values())} inputs), {hangs} hang(s)",
            flush=True,
        )
        totals.append((target, result["inputs"], len(crashes), hangs))
    print("\nsummary (target, inputs, distinct crashes, hangs):")
    for target, inputs, crashes, hangs in totals:
        print(f"  {target:28} {inputs:>10,} {crashes:>4} {hangs:>4}")


if __name__ == "__main__":
    main()

"""Recordings of a demo hour: size, decode, report, open and seek. python bench/recording_hour.py

Writes the demo hour (bench/demo_hour.py: the rates a 60 s `qtop demo --headless`
measured, printed below) the way a live session does, then measures, 3 runs
each (min / median / max):

* size: the file, and what each kind of line takes of it;
* decode: events per second turned from the file into event objects
  (``Recording.events``, every event one by one, keyframes skipped), on this
  file and on the same events one per line (``qtop export --format jsonl``,
  the version 1 layout);
* report: ``qtop report`` on the file as a separate process: wall time, CPU
  time and peak resident memory;
* open: ``open_recording``, its index and the model at the first event;
* seek: the model at 40 random device times each run (``Seeker.model_at``:
  the nearest keyframe, its patch chain, the events after it), without a UI;
  the p95 and the median of each run.

Each figure is wall-clock time and, in brackets, the CPU time the measurement
itself used: on the shared machine the wall time includes waiting for a core
(the load average is printed), the CPU time does not.

``--hour FILE`` reuses a recording written before (``bench/demo_hour.py --out``).
"""

from __future__ import annotations

import argparse
import collections
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from demo_hour import describe_rates, write_demo_hour

from qtop.record.reader import open_recording
from qtop.record.seek import Seeker

RUNS = 3
SEEKS = 40


def spread(values: list[float], unit: str, scale: float = 1.0, digits: int = 2) -> str:
    figures = (min(values), statistics.median(values), max(values))
    return " / ".join(f"{value * scale:.{digits}f}" for value in figures) + f" {unit}"


def size_breakdown(path: Path) -> str:
    sizes: collections.Counter[str] = collections.Counter()
    with path.open("rb") as stream:
        for line in stream:
            sizes[line[9 : line.index(b'"', 9)].decode()] += len(line)
    total = sum(sizes.values())
    parts = ", ".join(f"{kind} {size / 1e6:.1f}" for kind, size in sizes.most_common(6))
    return f"{total / 1e6:.1f} MB ({parts} MB)"


class Clock:
    """Wall and CPU time of one measurement."""

    def __init__(self) -> None:
        self.wall = time.perf_counter()
        self.cpu = time.process_time()

    def stop(self) -> tuple[float, float]:
        return time.perf_counter() - self.wall, time.process_time() - self.cpu


def decode_rate(path: Path) -> tuple[float, float]:
    clock = Clock()
    count = sum(1 for _ in open_recording(path).events(keyframes=False))
    wall, cpu = clock.stop()
    return count / wall, count / cpu


def report_run(path: Path) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds and peak RSS (MB) of `qtop report` in a process of its own."""
    began = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "qtop", "report", str(path)], stdout=subprocess.DEVNULL
    )
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - began
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit("qtop report failed")
    return elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def open_time(path: Path) -> tuple[float, float]:
    clock = Clock()
    recording = open_recording(path)
    index = recording.index()
    assert index.t_start is not None
    Seeker(recording).model_at(index.t_start)
    times = clock.stop()
    recording.close()
    return times


def seek_times(path: Path, seed: int) -> list[tuple[float, float]]:
    """Each seek on a recording opened afresh: nothing of an earlier seek is reused."""
    with open_recording(path) as first:
        index = first.index()
    assert index.t_start is not None and index.t_end is not None
    rng = random.Random(seed)
    out = []
    for _ in range(SEEKS):
        target = rng.uniform(index.t_start, index.t_end)
        with open_recording(path) as recording:
            recording.index()
            clock = Clock()
            model = Seeker(recording).model_at(target)
            out.append(clock.stop())
        assert model.t_last is not None and model.t_last <= target
    return out


def both(pairs: list[tuple[float, float]], unit: str, scale: float, digits: int) -> str:
    wall = spread([p[0] for p in pairs], unit, scale, digits)
    cpu = spread([p[1] for p in pairs], unit, scale, digits)
    return f"{wall} [CPU {cpu}]"


def runs(action: Callable[[], tuple[float, float]]) -> list[tuple[float, float]]:
    return [action() for _ in range(RUNS)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hour", type=Path, help="a demo hour written before")
    args = parser.parse_args()
    print(f"load average at start: {', '.join(f'{x:.1f}' for x in os.getloadavg())} (2 cores)")
    with tempfile.TemporaryDirectory() as folder:
        path = args.hour
        if path is None:
            path = Path(folder) / "demo-hour.jsonl"
            began = time.monotonic()
            rates = write_demo_hour(path)
            print(f"demo hour written in {time.monotonic() - began:.0f} s: {describe_rates(rates)}")
        print(f"size: {size_breakdown(path)}")
        flat = Path(folder) / "flat.jsonl"
        subprocess.run(
            [sys.executable, "-m", "qtop", "export", str(path), "--format", "jsonl", "-o",
             str(flat)],
            check=True, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        events = sum(1 for _ in open_recording(path).events(keyframes=False))
        print(f"decode, {events:,} events (min / median / max of {RUNS}):")
        print(f"  this file ({path.stat().st_size / 1e6:.0f} MB): "
              f"{both(runs(lambda: decode_rate(path)), 'events/s', 1, 0)}")  # fmt: skip
        print(f"  one event per line ({flat.stat().st_size / 1e6:.0f} MB, version 1 layout): "
              f"{both(runs(lambda: decode_rate(flat)), 'events/s', 1, 0)}")  # fmt: skip
        flat.unlink()
        reports = [report_run(path) for _ in range(RUNS)]
        print(f"qtop report: {both([r[:2] for r in reports], 's', 1, 2)}, "
              f"peak RSS {spread([r[2] for r in reports], 'MB', digits=0)}")  # fmt: skip
        print(f"open (index, model at the first event): "
              f"{both(runs(lambda: open_time(path)), 'ms', 1000, 1)}")  # fmt: skip
        seeks = [seek_times(path, seed) for seed in range(RUNS)]
        for name, pick in (("wall", 0), ("CPU", 1)):
            p95 = [sorted(t[pick] for t in run)[int(0.95 * SEEKS) - 1] for run in seeks]
            medians = [statistics.median([t[pick] for t in run]) for run in seeks]
            print(
                f"seek to the model at a random time, {SEEKS} per run, {name}: p95 "
                f"{spread(p95, 'ms', 1000, 0)}, median {spread(medians, 'ms', 1000, 0)}"
            )
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(f"load average at end: {', '.join(f'{x:.1f}' for x in os.getloadavg())}; "
          f"this process peaked at {usage.ru_maxrss / 1024:.0f} MB")  # fmt: skip


if __name__ == "__main__":
    main()

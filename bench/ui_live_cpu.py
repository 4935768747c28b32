"""UI CPU of a live session at the demo's rates: python bench/ui_live_cpu.py [--seconds 30]

A synthetic board (bench/ui_synthetic.py, ``DEMO`` rates: 10 Hz sampling of 24
channels, about 250 inferences and 350 lines of command output a second, a
profiler report every 15 s) is paced in real time into a Session, in chunks the
way a live link delivers them. In a real terminal (tmux, 160x48) the script
measures the CPU time of the process running the full dashboard with every
pane, and of the same session with no UI at all; the difference is what the UI
costs. Each is run three times; min, median and max are printed as a
percentage of one core, with the event rates the runs really delivered.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ui_synthetic import DEMO, header, session_events

from qtop.events import Event
from qtop.session import Session

WARM_UP_S = 5.0
RUNS = 3
# A live link hands over whatever arrived since the last read; pacing every event
# alone would cost the benchmark more CPU than the session it measures.
CHUNK_S = 0.02


class PacedSource:
    """The synthetic session delivered at the speed of device time, like a live board."""

    description = "synthetic board at the demo's rates"

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.counts: Counter[str] = Counter()
        self.first_t: float | None = None
        self.last_t: float | None = None

    async def events(self) -> AsyncIterator[Event]:
        yield header()
        start = time.monotonic()
        for event in session_events(self.seconds, DEMO):
            if event.t is not None:
                self.first_t = event.t if self.first_t is None else self.first_t
                self.last_t = event.t
                delay = start + (event.t - self.first_t) - time.monotonic()
                if delay > CHUNK_S:
                    await asyncio.sleep(delay)
            self.counts[event.kind] += 1
            yield event

    def rates(self) -> dict[str, float]:
        span = (self.last_t or 0.0) - (self.first_t or 0.0)
        return {kind: count / span for kind, count in self.counts.items()} if span > 0 else {}

    async def close(self) -> None:
        return None


def child(mode: str, seconds: float, report: Path) -> None:
    source = PacedSource(seconds + 5)
    session = Session(source)
    if mode == "none":

        async def consume() -> None:
            task = asyncio.create_task(session.run())
            await asyncio.sleep(seconds)
            task.cancel()

        asyncio.run(consume())
    else:
        from qtop.ui.app import QtopApp

        app = QtopApp(session)
        app.call_later(lambda: app.set_timer(seconds, app.exit))
        app.run()
    report.write_text(
        json.dumps({"rates": source.rates(), "channels": len(session.model.channels)})
    )


def measure(mode: str, seconds: float) -> tuple[float, dict[str, object]]:
    """Percent of one core used by the child between warm-up and the end, and its rates."""
    import psutil

    workdir = Path(tempfile.mkdtemp())
    socket, report = str(workdir / "tmux.sock"), workdir / "rates.json"
    command = (
        f"{sys.executable} {Path(__file__).resolve()} --child {mode} --seconds {seconds} "
        f"--report {report}"
    )
    subprocess.run(["tmux", "-S", socket, "new-session", "-d", "-s", "bench", "-x", "160",
                    "-y", "48", command], check=True)  # fmt: skip
    try:
        pid = int(subprocess.run(
            ["tmux", "-S", socket, "list-panes", "-t", "bench", "-F", "#{pane_pid}"],
            capture_output=True, text=True, check=True,
        ).stdout.split()[0])  # fmt: skip
        process = psutil.Process(pid)
        time.sleep(WARM_UP_S)
        before = process.cpu_times()
        wall = time.monotonic()
        time.sleep(seconds - WARM_UP_S - 1)
        after = process.cpu_times()
        elapsed = time.monotonic() - wall
        used = (after.user + after.system) - (before.user + before.system)
        deadline = time.monotonic() + 30
        while not report.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        details = json.loads(report.read_text()) if report.exists() else {}
        return 100 * used / elapsed, details
    finally:
        subprocess.run(["tmux", "-S", socket, "kill-server"], check=False, capture_output=True)


def spread(values: list[float]) -> str:
    return f"{min(values):5.1f} / {statistics.median(values):5.1f} / {max(values):5.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--child", choices=("ui", "none"))
    parser.add_argument("--report", type=Path)
    parser.add_argument("--runs", type=int, default=RUNS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.seconds, args.report)
        return
    if shutil.which("tmux") is None:
        sys.exit("needs tmux (apt-get install tmux)")
    with_ui: list[float] = []
    without: list[float] = []
    details: dict[str, object] = {}
    for _ in range(args.runs):
        used, details = measure("ui", args.seconds)
        with_ui.append(used)
        without.append(measure("none", args.seconds)[0])
    rates = details.get("rates", {})
    assert isinstance(rates, dict)
    shown = ", ".join(
        f"{kind} {rate:.1f}/s" for kind, rate in sorted(rates.items()) if rate >= 0.05
    )
    print(f"live session, {args.seconds:.0f} s x {args.runs} runs, 160x48 terminal")
    print(f"  delivered: {shown}; {details.get('channels')} channels")
    print("  % of one core, min / median / max")
    print(f"  session with the full UI : {spread(with_ui)}")
    print(f"  session without a UI     : {spread(without)}")
    costs = [a - b for a, b in zip(with_ui, without, strict=True)]
    print(f"  the UI's own cost        : {spread(costs)}")


if __name__ == "__main__":
    main()

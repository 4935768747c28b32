"""UI CPU per second of a live session: python bench/ui_live_cpu.py [--seconds 30]

A synthetic board (bench/ui_synthetic.py: 10 Hz sampling of 12 channels, 20
inferences a second, a profiler report) is paced in real time into a Session.
The script measures, in a real terminal (tmux, 160x48), the CPU time of the
process running the full dashboard with every pane, and of the same session
with no UI at all; the difference is what the UI costs. Both are printed as a
percentage of one core.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ui_synthetic import header, session_events

from qtop.events import Event
from qtop.session import Session

WARM_UP_S = 5.0


class PacedSource:
    """The synthetic session delivered at the speed of device time, like a live board."""

    description = "synthetic board (10 Hz x 12 channels, 20 it/s)"

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    async def events(self) -> AsyncIterator[Event]:
        yield header()
        start = time.monotonic()
        t0: float | None = None
        for event in session_events(self.seconds):
            if event.t is not None:
                t0 = event.t if t0 is None else t0
                delay = start + (event.t - t0) - time.monotonic()
                if delay > 0:
                    await asyncio.sleep(delay)
            yield event

    async def close(self) -> None:
        return None


def child(mode: str, seconds: float) -> None:
    session = Session(PacedSource(seconds + 5))
    if mode == "none":

        async def consume() -> None:
            task = asyncio.create_task(session.run())
            await asyncio.sleep(seconds)
            task.cancel()

        asyncio.run(consume())
        return
    from qtop.ui.app import QtopApp

    app = QtopApp(session)
    app.call_later(lambda: app.set_timer(seconds, app.exit))
    app.run()


def measure(mode: str, seconds: float) -> float:
    """Percent of one core used by the child between warm-up and the end."""
    import psutil

    socket = str(Path(tempfile.mkdtemp()) / "tmux.sock")
    command = f"{sys.executable} {Path(__file__).resolve()} --child {mode} --seconds {seconds}"
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
        return 100 * used / elapsed
    finally:
        subprocess.run(["tmux", "-S", socket, "kill-server"], check=False, capture_output=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--child", choices=("ui", "none"))
    args = parser.parse_args()
    if args.child:
        child(args.child, args.seconds)
        return
    if shutil.which("tmux") is None:
        sys.exit("needs tmux (apt-get install tmux)")
    with_ui = measure("ui", args.seconds)
    without = measure("none", args.seconds)
    print(f"live session at 10 Hz x 12 channels, 20 it/s, {args.seconds:.0f} s, 160x48 terminal")
    print(f"  session with the full UI : {with_ui:5.1f} % of one core")
    print(f"  session without a UI     : {without:5.1f} % of one core")
    print(f"  the UI's own cost        : {with_ui - without:5.1f} % of one core")


if __name__ == "__main__":
    main()

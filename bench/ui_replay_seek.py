"""Open and seek a one-hour recording in the dashboard: python bench/ui_replay_seek.py

Writes the synthetic hour (bench/ui_synthetic.py) to a recording the way a live
session does (Session with a RecordingWriter, so with keyframes), then times,
in the full app: opening it (index scan, first events, first drawing of every
pane), seeks to 50%, 90% and back to 10% (until the model is at the target and
the panes are redrawn), and the background analysis that finds the throttling
onset for the seek marks.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ui_synthetic import header, session_events

from qtop.record.replay import ReplaySource
from qtop.record.writer import RecordingWriter
from qtop.session import Session
from qtop.ui.app import QtopApp

HOUR_S = 3600.0


def write_hour(path: Path) -> None:
    head = header()
    writer = RecordingWriter(path, head)
    session = Session(source=None, recorder=writer)  # type: ignore[arg-type]
    session.model.apply(head)
    for event in session_events(HOUR_S):
        session.consume(event)
    writer.close()


async def wait_for(pilot, condition, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("the app did not get there")
        await pilot.pause(0.01)


async def measure(path: Path) -> None:
    started = time.monotonic()
    source = ReplaySource(path, paused=True)
    app = QtopApp(Session(source))
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_for(pilot, lambda: app.session.model.header is not None and app.refreshes > 0)
        opened = time.monotonic() - started
        t_start, t_end = source.t_start, source.t_end
        assert t_start is not None and t_end is not None
        print(f"  open (index, first events, first drawing): {opened * 1000:7.0f} ms")
        for fraction in (0.5, 0.9, 0.1):
            target = t_start + fraction * (t_end - t_start)
            begun = time.monotonic()
            source.seek(target)
            await wait_for(
                pilot,
                lambda target=target: (
                    source.position_t is not None
                    and abs(source.position_t - target) < 0.2
                    and app.session.model.t_last == source.position_t
                ),
            )
            app.refresh_analysis(force=True)
            app.refresh_panes(force=True)
            await pilot.pause()
            print(f"  seek to {fraction:4.0%}: {(time.monotonic() - begun) * 1000:7.0f} ms")
        await wait_for(pilot, lambda: app.onsets_searched)
        print(
            f"  throttling onset found in the background after {time.monotonic() - started:5.1f} s"
        )


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "hour.jsonl"
        began = time.monotonic()
        write_hour(path)
        size = path.stat().st_size / 1e6
        keyframes = path.read_bytes().count(b'{"kind":"keyframe"')
        print(f"one-hour recording: {size:.1f} MB, {keyframes} keyframes "
              f"(written in {time.monotonic() - began:.0f} s)")  # fmt: skip
        asyncio.run(measure(path))


if __name__ == "__main__":
    main()

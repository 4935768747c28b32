"""Drive QtopApp from fixture recordings (and a small live-like source) in tests."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

from textual.pilot import Pilot

from qtop.events import Event
from qtop.record.replay import ReplaySource
from qtop.session import Session
from qtop.ui.app import QtopApp

RECORDINGS = Path(__file__).resolve().parents[1] / "fixtures" / "recordings"
SIMPLE = RECORDINGS / "simple.jsonl"
SUSTAINED = RECORDINGS / "sustained.jsonl"
GLASSES = RECORDINGS / "glasses.jsonl"
SIZE = (160, 48)


async def settle(pilot: Pilot, app: QtopApp) -> None:
    """Recompute and redraw everything from the current model now, and let it render."""
    app.refresh_analysis(force=True)
    app.refresh_panes(force=True)
    await pilot.pause()


async def until(pilot: Pilot, condition, timeout: float = 15.0) -> None:
    waited = 0.0
    while not condition():
        if waited >= timeout:
            raise AssertionError("timed out waiting for the app")
        await pilot.pause(0.05)
        waited += 0.05


@contextlib.asynccontextmanager
async def replayed(
    path: Path, size: tuple[int, int] = SIZE, *, to_end: bool = True, onsets: bool = True
) -> AsyncIterator[tuple[QtopApp, Pilot, ReplaySource]]:
    """An app replaying ``path`` as fast as possible (or paused at the start)."""
    source = ReplaySource(path, speed=float("inf"), paused=not to_end)
    app = QtopApp(Session(source), analyze_recording=onsets)
    async with app.run_test(size=size) as pilot:
        if to_end:
            await until(pilot, lambda: source.finished)
            if onsets:
                await until(pilot, lambda: app.onsets_searched)
            await settle(pilot, app)
        yield app, pilot, source


class ScriptedSource:
    """A live-like source: yields events with real delays, can be stopped like a device run."""

    description = "scripted live source"

    def __init__(self, events: Sequence[Event], delay_s: float = 0.0) -> None:
        self._events = list(events)
        self.delay_s = delay_s
        self.stopped = False
        self.closed = False
        self.release = asyncio.Event()
        self.release.set()

    async def events(self) -> AsyncIterator[Event]:
        for event in self._events:
            await self.release.wait()
            if self.stopped or self.closed:
                return
            if self.delay_s:
                await asyncio.sleep(self.delay_s)
            yield event

    async def stop_run(self) -> None:
        self.stopped = True

    async def close(self) -> None:
        self.closed = True

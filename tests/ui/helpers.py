"""Drive QtopApp from fixture recordings and fed live-like sources, waiting on its messages.

Nothing here waits for the clock: ``until`` re-checks its condition each time
the app has handled a message (the session's ``ModelChanged``, an analysis
result, a worker's state change, a key), so a test goes exactly as fast as the
app does, on an idle machine or a loaded one. The timeout is only a guard
against a hang, never part of what a test asserts.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path

from pytest_textual_snapshot import SVGImageExtension
from syrupy import SnapshotAssertion
from textual.message import Message
from textual.pilot import Pilot
from textual.widgets import Static

from qtop.events import Event
from qtop.record.replay import ReplaySource
from qtop.session import Session
from qtop.ui.app import QtopApp

RECORDINGS = Path(__file__).resolve().parents[1] / "fixtures" / "recordings"
SIMPLE = RECORDINGS / "simple.jsonl"
SUSTAINED = RECORDINGS / "sustained.jsonl"
GLASSES = RECORDINGS / "glasses.jsonl"
SIZE = (160, 48)
# The terminal sizes the screen is checked at: the smallest usable, the smallest with every
# pane, and the one it is designed for.
SCREEN_SIZES = ((160, 48), (100, 30), (80, 24))
HANG_GUARD_S = 60.0
# Tests refresh the display (charts too) often and analyse after every change: fewer steps
# to wait for.
TEST_DISPLAY_HZ = 20.0


def make_app(session: Session, **options: object) -> QtopApp:
    """The app as the tests run it: quick refreshes, an analysis after every change."""
    settings: dict[str, object] = {
        "display_hz": TEST_DISPLAY_HZ,
        "chart_period_s": 0.0,
        "analysis_period_s": 0.0,
    }
    settings.update(options)
    return QtopApp(session, **settings)  # type: ignore[arg-type]


async def next_message(app: QtopApp, timeout: float = HANG_GUARD_S) -> Message:
    """The next message the app handles."""
    seen: asyncio.Future[Message] = asyncio.get_running_loop().create_future()

    def handled(message: Message) -> None:
        if not seen.done():
            seen.set_result(message)

    app.message_signal.subscribe(app, handled, immediate=True)
    try:
        return await asyncio.wait_for(seen, timeout)
    except TimeoutError:
        raise AssertionError(f"the app handled no message for {timeout:g} s (hung?)") from None
    finally:
        app.message_signal.unsubscribe(app)


async def until(pilot: Pilot, condition: Callable[[], object]) -> None:
    """Wait, one handled message at a time, until ``condition()`` is true."""
    app = pilot.app
    assert isinstance(app, QtopApp)
    while not condition():
        await next_message(app)


async def until_drawn(pilot: Pilot, condition: Callable[[], object]) -> None:
    """Until ``condition()``, for what widgets do on their own (a resize restyles the screen).

    Such work sends the app no message; ``pilot.pause()`` returns once the process has
    gone idle, however long that takes on a busy machine.
    """
    for _ in range(int(HANG_GUARD_S * 10)):
        if condition():
            return
        await pilot.pause()
    raise AssertionError("the screen never got there (hung?)")


async def resized(pilot: Pilot, width: int, height: int) -> None:
    """Resize the terminal and wait until every pane has redrawn at the new size."""
    app = pilot.app
    assert isinstance(app, QtopApp)
    await pilot.resize_terminal(width, height)
    await until_drawn(pilot, lambda: app.screen.size == (width, height))
    # The panes redraw after the layout that resized them, on their own: let them finish.
    await pilot.pause()
    await pilot.pause()
    await settled(pilot)


async def assert_screens(pilot: Pilot, snapshot: SnapshotAssertion, name: str) -> None:
    """The whole screen at each of SCREEN_SIZES against its stored SVG (ending at the last).

    pytest-textual-snapshot's SVG format, one file per size under __snapshots__; after a
    deliberate change, ``pytest tests/ui --snapshot-update`` rewrites them (look at them,
    e.g. ``rsvg-convert FILE.svg -o FILE.png``, before committing).
    """
    app = pilot.app
    svg = snapshot.use_extension(SVGImageExtension)
    app.clear_notifications()
    for width, height in SCREEN_SIZES:
        await resized(pilot, width, height)
        assert svg(name=f"{name}-{width}x{height}") == app.export_screenshot(title="qtop")


async def settled(pilot: Pilot) -> None:
    """Until everything the model holds is drawn and analysed."""
    app = pilot.app
    assert isinstance(app, QtopApp)
    await until(pilot, lambda: app.settled)


def plain(app: QtopApp, selector: str) -> str:
    widget = app.query_one(selector, Static)
    return widget.render().plain  # type: ignore[union-attr]


@contextlib.asynccontextmanager
async def replayed(
    path: Path, size: tuple[int, int] = SIZE, *, to_end: bool = True, onsets: bool = False
) -> AsyncIterator[tuple[QtopApp, Pilot, ReplaySource]]:
    """An app replaying ``path`` as fast as possible (or paused at the start).

    ``onsets``: also analyse the whole file for its throttling onsets (in a process of its
    own, as the app does), and wait for them.
    """
    source = ReplaySource(path, speed=float("inf"), paused=not to_end)
    app = make_app(Session(source), analyze_recording=onsets)
    async with app.run_test(size=size) as pilot:
        if to_end:
            await until(pilot, lambda: source.finished and app.settled)
            if onsets:
                await until(pilot, lambda: app.onsets_searched)
        yield app, pilot, source


class FedSource:
    """A live-like source the test feeds: events go out only as the test releases them.

    ``release(n)`` lets the next ``n`` events through (all of them by default);
    the stream ends after the last one, or when the run is stopped or closed.
    """

    description = "fed live source"

    def __init__(self, events: Sequence[Event]) -> None:
        self._events = list(events)
        self._released = 0
        self._wake = asyncio.Event()
        self.delivered = 0
        self.stopped = False
        self.closed = False

    def release(self, count: int | None = None) -> None:
        self._released = len(self._events) if count is None else self._released + count
        self._wake.set()

    @property
    def drained(self) -> bool:
        """Every released event has been handed to the session."""
        return self.delivered >= min(self._released, len(self._events))

    async def events(self) -> AsyncIterator[Event]:
        while self.delivered < len(self._events) and not (self.stopped or self.closed):
            if self.delivered >= self._released:
                self._wake.clear()
                await self._wake.wait()
                continue
            event = self._events[self.delivered]
            self.delivered += 1
            yield event
            if self.delivered % 256 == 0:
                # A burst must leave the event loop room, as a real link does.
                await asyncio.sleep(0)

    async def stop_run(self) -> None:
        self.stopped = True
        self._wake.set()

    async def close(self) -> None:
        self.closed = True
        self._wake.set()

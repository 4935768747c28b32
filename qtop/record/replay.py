"""ReplaySource: a recording as a source of events, paced by device time.

It yields exactly the events of the file, so the UI and the model cannot tell
it from a live session. Pause, single steps, speed (0.5x to 16x, or as fast as
possible) and seeks are requests the front end makes; a seek starts from the
nearest keyframe before the target (``qtop.record.seek``: a ``Keyframe`` event
restores the model) and fast-forwards to the target without pacing.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

from qtop.events import End, Event
from qtop.record.reader import Mark, Recording, open_recording
from qtop.record.seek import Seeker

SPEEDS: tuple[float, ...] = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0, math.inf)


class ReplaySource:
    """Replays one recording; optionally keeps following it while it grows."""

    def __init__(
        self,
        path: str | Path,
        *,
        speed: float = 1.0,
        follow: bool = False,
        paused: bool = False,
    ) -> None:
        self.recording: Recording = open_recording(path)
        self.seeker = Seeker(self.recording)
        self.description = f"replay of {self.recording.path.name}"
        self.follow = follow and not self.recording.compressed
        self.speed = speed
        self.paused = paused
        self.position_t: float | None = None
        self.finished = False
        self._wake = asyncio.Event()
        self._steps = 0
        self._seek_to: float | None = None
        self._anchor: tuple[float, float] | None = None
        self._closed = False

    # --- controls (called by the front end) ---------------------------------

    @property
    def t_start(self) -> float | None:
        return self.recording.index().t_start

    @property
    def t_end(self) -> float | None:
        index = self.recording.index()
        if self.follow and self.position_t is not None and index.t_end is not None:
            return max(index.t_end, self.position_t)
        return index.t_end

    @property
    def marks(self) -> list[Mark]:
        return self.recording.index().marks

    def set_paused(self, paused: bool) -> None:
        self.paused = paused
        self._anchor = None
        self._wake.set()

    def toggle_pause(self) -> None:
        self.set_paused(not self.paused)

    def step(self, count: int = 1) -> None:
        """While paused, let ``count`` more timed events through."""
        self._steps += count
        self._wake.set()

    def set_speed(self, speed: float) -> None:
        if not speed > 0:
            raise ValueError("replay speed must be > 0")
        self.speed = speed
        self._anchor = None
        self._wake.set()

    def faster(self) -> float:
        self.set_speed(next((s for s in SPEEDS if s > self.speed), SPEEDS[-1]))
        return self.speed

    def slower(self) -> float:
        self.set_speed(next((s for s in reversed(SPEEDS) if s < self.speed), SPEEDS[0]))
        return self.speed

    def seek(self, t: float) -> None:
        """Jump to device time ``t`` (clamped to the recording)."""
        start, end = self.t_start, self.t_end
        if start is not None:
            t = max(t, start)
        if end is not None:
            t = min(t, end)
        self._seek_to = t
        self._wake.set()

    def seek_by(self, delta_s: float) -> None:
        base = self.position_t if self.position_t is not None else (self.t_start or 0.0)
        self.seek(base + delta_s)

    def next_mark(self, kinds: tuple[str, ...] = ("phase", "marker", "link")) -> Mark | None:
        here = self.position_t if self.position_t is not None else -math.inf
        for mark in self.marks:
            if mark.kind in kinds and mark.t > here + 1e-9:
                self.seek(mark.t)
                return mark
        return None

    def previous_mark(self, kinds: tuple[str, ...] = ("phase", "marker", "link")) -> Mark | None:
        # Half a second of slack so that pressing the key twice keeps going back.
        here = self.position_t if self.position_t is not None else math.inf
        for mark in reversed(self.marks):
            if mark.kind in kinds and mark.t < here - 0.5:
                self.seek(mark.t)
                return mark
        return None

    async def close(self) -> None:
        self._closed = True
        self._wake.set()
        self.recording.close()

    # --- the stream ---------------------------------------------------------

    async def events(self) -> AsyncIterator[Event]:
        offset = 0
        while not self._closed:
            target, self._seek_to = self._seek_to, None
            if target is not None:
                keyframe, offset = self.seeker.start(target)
                yield keyframe
            restarted = False
            async for line_offset, event in self._read_from(offset):
                if self._closed:
                    return
                if target is not None:
                    if event.t is None or event.t <= target:
                        if event.t is not None:
                            self.position_t = event.t
                        yield event
                        continue
                    target = None
                    self._anchor = None
                if event.t is not None:
                    await self._wait_turn(event.t)
                    if self._closed:
                        return
                    if self._seek_to is not None:
                        offset = line_offset
                        restarted = True
                        break
                    self.position_t = event.t
                yield event
                if isinstance(event, End) and not self.follow:
                    break
            if restarted:
                continue
            self.finished = True
            # At the end a replay stays open so the user can seek back.
            while self._seek_to is None and not self._closed:
                self._wake.clear()
                await self._wake.wait()
            self.finished = False

    async def _read_from(self, offset: int) -> AsyncIterator[tuple[int, Event]]:
        # Keyframes in the stream would only restore the state the model already has
        # (a seek yields its own): reading on, they are skipped unread.
        if self.follow:
            async for item in self.recording.follow(offset, keyframes=False):
                yield item
            return
        lines: Iterator[tuple[int, Event]] = self.recording.events_with_offsets(
            offset, keyframes=False
        )
        for count, item in enumerate(lines):
            yield item
            if count % 512 == 511:
                # Fast-forwarding must not starve the UI's event loop.
                await asyncio.sleep(0)

    async def _wait_turn(self, t: float) -> None:
        """Sleep until device time ``t`` is due at the current speed, or a control changes."""
        while not self._closed and self._seek_to is None:
            if self.paused:
                if self._steps > 0:
                    self._steps -= 1
                    self._anchor = None
                    return
                self._wake.clear()
                await self._wake.wait()
                continue
            if math.isinf(self.speed):
                return
            now = time.monotonic()
            if self._anchor is None:
                self._anchor = (now, t)
                return
            wall0, t0 = self._anchor
            delay = wall0 + (t - t0) / self.speed - now
            if delay <= 0:
                return
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout=min(delay, 0.5))

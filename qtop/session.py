"""Sources of events and the one loop that consumes them.

A ``Source`` yields events: ``LiveSource`` from a device (qtop.live), a replay
from a recording (qtop.record.replay). ``Session`` is the single consumer: it
folds every event into the ``SessionModel``, tees it to the recorder, writes
keyframes, and tells an observer (the UI, the headless progress line) that
something changed. Nobody else reads a source, so live and replay share this
code path and a recording holds exactly what the model saw.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence
from typing import Protocol, runtime_checkable

from qtop.analysis.collect import Collector
from qtop.events import End, Event, Keyframe
from qtop.record.writer import RecordingError, RecordingWriter
from qtop.stats.model import SessionModel

SYNC_INTERVAL_S = 0.25


@runtime_checkable
class Source(Protocol):
    """Anything that yields the session's events in order."""

    description: str

    def events(self) -> AsyncIterator[Event]: ...

    async def close(self) -> None: ...


class Observer(Protocol):
    def __call__(self, batch: Sequence[Event]) -> None: ...


class Session:
    """Feeds one source into the model and the recorder."""

    def __init__(
        self,
        source: Source,
        model: SessionModel | None = None,
        recorder: RecordingWriter | None = None,
        collector: Collector | None = None,
    ) -> None:
        self.source = source
        self.model = model or SessionModel()
        self.recorder = recorder
        # What the summary's analysis reads, gathered as the events pass (headless runs).
        self.collector = collector
        self.recording_error: RecordingError | None = None
        self.recording_paused = False

    async def run(self, observer: Observer | None = None, batch_window_s: float = 0.05) -> None:
        """Consume the source to its end, calling ``observer`` with batches of events.

        Batching keeps a busy stream from waking the observer per event: events
        are delivered at most every ``batch_window_s``, and a batch left when the
        source goes quiet is delivered by a timer rather than held back.
        """
        pending: list[Event] = []

        def deliver() -> None:
            nonlocal pending
            if observer is not None and pending:
                batch, pending = pending, []
                observer(batch)

        async def deliver_periodically() -> None:
            while True:
                await asyncio.sleep(batch_window_s)
                deliver()

        helpers = [asyncio.create_task(deliver_periodically())]
        if self.recorder is not None:
            helpers.append(asyncio.create_task(self._sync_periodically()))
        try:
            async for event in self.source.events():
                self.consume(event)
                if observer is not None:
                    pending.append(event)
            deliver()
        finally:
            for task in helpers:
                task.cancel()
            for task in helpers:
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    def consume(self, event: Event) -> None:
        """Apply one event to the model, the collector and the recording."""
        self.model.apply(event)
        if self.collector is not None and not isinstance(event, Keyframe):
            self.collector.add(event)
        if self.recorder is None or self.recorder.closed or self.recording_paused:
            return
        if isinstance(event, Keyframe):
            return
        try:
            if isinstance(event, End):
                self.recorder.close(event)
                return
            self.recorder.write(event)
            if self.recorder.keyframe_due(self.model.t_last):
                self.recorder.write_keyframe(self.model)
        except RecordingError as exc:
            self._recording_failed(exc)

    def _recording_failed(self, exc: RecordingError) -> None:
        # The run on the device matters more than the file: keep the model
        # going, stop writing, and let the front end say why.
        self.recording_error = exc
        if self.recorder is not None:
            with contextlib.suppress(RecordingError, OSError):
                self.recorder.abandon()

    async def _sync_periodically(self) -> None:
        while True:
            await asyncio.sleep(SYNC_INTERVAL_S)
            if self.recorder is not None and not self.recorder.closed:
                try:
                    self.recorder.flush_if_due()
                    self.recorder.sync_if_due()
                except RecordingError as exc:
                    self._recording_failed(exc)

    def close_recording(self, end: End) -> None:
        """Finish the recording with ``end`` unless the source already delivered one."""
        if self.recorder is not None and not self.recorder.closed:
            self.consume(end)

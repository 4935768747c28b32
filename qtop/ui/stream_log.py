"""What the UI remembers about the stream beyond the model: when it last spoke.

The header wants to know how long ago the device last said anything, and the
redraw logic wants to know when a seek restarted the stream. The observer of
``Session.run`` feeds every batch here.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from qtop.events import Event, Keyframe


class StreamLog:
    """Host time of the last batch, and how many batches and keyframes went by."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self.last_arrival: float | None = None
        self.batches = 0
        self.keyframes = 0

    def observe(self, batch: Sequence[Event]) -> None:
        """Take in one batch from ``Session.run``."""
        self.batches += 1
        self.last_arrival = self._clock()
        self.keyframes += sum(1 for event in batch if isinstance(event, Keyframe))

    def silent_for(self) -> float | None:
        """Host seconds since the last batch arrived (None before the first)."""
        return None if self.last_arrival is None else self._clock() - self.last_arrival

"""Several recordings replayed together, aligned on each one's own start.

Devices' clocks have nothing in common (each counts from its own boot), so the
recordings of one side-by-side run are lined up by their starts: second 30 of
one plays with second 30 of the other. Pause, speed and seeks go to every
replay at once, and a seek moves all of them to the same offset from their start.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from qtop.record.replay import SPEEDS, ReplaySource

ALIGNMENT_NOTE = "aligned on each recording's own start (the devices' clocks differ)"


class ReplaySet:
    """The replays of a set of recordings, driven as one."""

    def __init__(self, sources: Sequence[ReplaySource]) -> None:
        if not sources:
            raise ValueError("a replay set needs at least one recording")
        self.sources = list(sources)

    @property
    def paused(self) -> bool:
        return all(source.paused for source in self.sources)

    @property
    def speed(self) -> float:
        return self.sources[0].speed

    @property
    def finished(self) -> bool:
        return all(source.finished for source in self.sources)

    def toggle_pause(self) -> bool:
        paused = not self.paused
        for source in self.sources:
            source.set_paused(paused)
        return paused

    def set_speed(self, speed: float) -> float:
        for source in self.sources:
            source.set_speed(speed)
        return speed

    def faster(self) -> float:
        return self.set_speed(next((s for s in SPEEDS if s > self.speed), SPEEDS[-1]))

    def slower(self) -> float:
        return self.set_speed(next((s for s in reversed(SPEEDS) if s < self.speed), SPEEDS[0]))

    def toggle_max_speed(self) -> float:
        return self.set_speed(1.0 if math.isinf(self.speed) else math.inf)

    def offset_s(self) -> float:
        """How far into the set the replay is: the furthest recording's offset from its start."""
        offsets = [
            source.position_t - start
            for source in self.sources
            if source.position_t is not None and (start := source.t_start) is not None
        ]
        return max(offsets, default=0.0)

    def length_s(self) -> float | None:
        """The longest recording's span, start to end (None before any is indexed)."""
        spans = [
            end - start
            for source in self.sources
            if (start := source.t_start) is not None and (end := source.t_end) is not None
        ]
        return max(spans, default=None)

    def seek_offset(self, offset_s: float) -> None:
        """Every replay to ``offset_s`` after its own start (each clamped to its recording)."""
        for source in self.sources:
            start = source.t_start
            if start is not None:
                source.seek(start + max(0.0, offset_s))

    def seek_by(self, delta_s: float) -> None:
        self.seek_offset(self.offset_s() + delta_s)

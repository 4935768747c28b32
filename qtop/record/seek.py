"""The model at any device time of a recording, without reading what comes before.

``Seeker.start(t)`` finds the last keyframe at or before ``t`` in the index,
turns it (and the patches before it) back into a model state, and returns
that state with the events that follow it; ``model_at(t)`` folds those events
up to ``t``. A keyframe that cannot be read is skipped for the one before it,
down to the start of the file, so a damaged keyframe costs time, never a
wrong model.
"""

from __future__ import annotations

from collections.abc import Iterator

from qtop.events import Event, IterationRun, Keyframe, LogRun
from qtop.record.keyframes import KeyframeError
from qtop.record.lines import LineError
from qtop.record.reader import Recording
from qtop.stats.model import SessionModel


class Seeker:
    """Seeks within one recording (see the module doc)."""

    def __init__(self, recording: Recording) -> None:
        self.recording = recording

    def start(self, t: float) -> tuple[Keyframe, int]:
        """The state to start from for device time ``t`` and the offset its events follow at.

        Without a usable keyframe before ``t`` that is an empty state (a fresh
        model) and offset 0 (the header on).
        """
        keyframe, offset, _ = self._start(t)
        return keyframe, offset

    def _start(self, t: float) -> tuple[Keyframe, int, SessionModel]:
        """``start``, and a model restored from the keyframe (which is how it is checked)."""
        recording = self.recording
        keyframes = recording.index().keyframes
        position = _last_at_or_before(keyframes, t)
        while position >= 0:
            offset = keyframes[position][1]
            model = SessionModel()
            try:
                data = recording.read_line_at(offset)
                keyframe = recording.keyframe_at(offset, data)
                model.apply(keyframe)
            except (LineError, KeyframeError, OSError, KeyError, TypeError, ValueError, IndexError):
                # ValueError covers EventDecodeError: a state whose values do not decode.
                position -= 1
                continue
            return keyframe, offset + len(data) + 1, model
        return Keyframe(state={}), 0, SessionModel()

    def events_from(self, t: float) -> Iterator[tuple[int, Event]]:
        """The restoring keyframe, then every event after it (with its line's offset)."""
        keyframe, offset = self.start(t)
        yield offset, keyframe
        yield from self.recording.events_with_offsets(offset)

    def model_at(self, t: float, model: SessionModel | None = None) -> SessionModel:
        """The model as it was once every event up to device time ``t`` was applied.

        Packed runs that end before ``t`` are applied whole (``apply_run``
        gives the same state as their events one by one).
        """
        keyframe, offset, restored = self._start(t)
        if model is None:
            model = restored
        else:
            model.apply(keyframe)
        for item in self.recording.items(offset):
            if isinstance(item, LogRun):
                model.apply_run(item)
            elif isinstance(item, IterationRun):
                ends = item.ends
                if max(ends) <= t:
                    model.apply_run(item)
                    continue
                for k in range(item.n):
                    if ends[k] > t:
                        return model
                    model.apply(item.event(k))
            elif item.t is not None and item.t > t:
                break
            else:
                model.apply(item)
        return model


def _last_at_or_before(keyframes: list[tuple[float, int]], t: float) -> int:
    low, high = 0, len(keyframes)
    while low < high:
        middle = (low + high) // 2
        if keyframes[middle][0] <= t:
            low = middle + 1
        else:
            high = middle
    return low - 1

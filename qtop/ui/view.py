"""The one object every pane draws from: the model plus what the app knows about it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from qtop.analysis.live import LiveAnalysis
from qtop.stats.model import SessionModel
from qtop.ui.playback import Playback


@dataclass(frozen=True, slots=True, eq=False)
class View:
    """What a pane needs to draw itself; a new one per display refresh.

    ``model`` is the live object, read while the refresh runs. ``charts`` says
    whether the costly parts (charts, sparklines) redraw this time too, or only
    the figures. ``restarts`` counts how often the stream started over from a
    keyframe (a seek), which panes that accumulate (the log) take as "redraw
    from scratch".
    """

    model: SessionModel
    generation: int
    charts: bool
    restarts: int
    variant: str
    variant_pinned: bool
    analysis: LiveAnalysis | None
    playback: Playback
    recording: Path | None
    recording_paused: bool
    recording_error: str | None
    session_error: str | None

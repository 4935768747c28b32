"""The one object every pane reads on a refresh: the model plus what the app knows."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from qtop.stats.model import SessionModel
from qtop.ui.derive import LiveAnalysis
from qtop.ui.playback import Playback
from qtop.ui.stream_log import StreamLog


@dataclass(frozen=True, slots=True)
class View:
    """What a pane needs to draw itself; built once per refresh."""

    model: SessionModel
    variant: str
    variant_pinned: bool
    analysis: LiveAnalysis | None
    playback: Playback
    stream: StreamLog
    recording: Path | None
    recording_paused: bool
    recording_error: str | None
    session_error: str | None

"""Replay bar: play state, speed, position among the marks, elapsed of total."""

from __future__ import annotations

from textual.app import ComposeResult

from qtop.ui.panes.base import Pane
from qtop.ui.playback import Playback
from qtop.ui.view import View
from qtop.ui.widgets.timeline_bar import Progress, TimelineBar


def progress_of(playback: Playback) -> Progress:
    elapsed, total = playback.elapsed_total()
    replay = playback.replay
    marks: tuple[tuple[float, str], ...] = ()
    if replay is not None and replay.t_start is not None and total:
        start = replay.t_start
        marks = tuple((
            (mark.t - start) / total, mark.kind) for mark in playback.marks() if mark.kind != "end"
        )  # fmt: skip
    return Progress(playback.status(), elapsed, total, marks, playback.upcoming())


class ReplayBar(Pane, can_focus=False):
    """One line under the panes while replaying."""

    ALLOW_MAXIMIZE = False
    DEFAULT_CSS = """
    ReplayBar {
        height: 1;
        border: none;
        padding: 0;
        background: $panel;
    }
    """

    def compose(self) -> ComposeResult:
        yield TimelineBar(id="timeline")

    def draw(self, view: View) -> None:
        self.query_one(TimelineBar).progress = progress_of(view.playback)

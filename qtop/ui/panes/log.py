"""Device log: the tail of the command's stdout/stderr and qtop's notes, following by default."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Log

from qtop.events import Log as LogEvent
from qtop.stats.model import SessionModel
from qtop.ui.format import clock
from qtop.ui.panes.base import Pane
from qtop.ui.view import View

STREAM_TAGS = {"stdout": "out", "stderr": "ERR", "agent": "agt", "qtop": "qtp"}
LINES_KEPT = 1000


def log_line(event: LogEvent, origin: float | None) -> str:
    """``+1:05 ERR text``: when, which stream, what."""
    when = clock(event.t - origin) if event.t is not None and origin is not None else "    "
    tag = STREAM_TAGS.get(event.stream, event.stream[:3])
    if event.level in ("warning", "error") and event.stream != "stderr":
        tag = event.level[:4].upper()
    return f"{when:>6} {tag} {event.text}"


class LogPane(Pane):
    """The last lines the device printed; scrolling up stops following, ``f`` resumes."""

    TITLE = "device log"
    DEFAULT_CSS = """
    LogPane Log { height: 1fr; scrollbar-size-vertical: 1; }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._seen = 0

    def compose(self) -> ComposeResult:
        yield Log(max_lines=LINES_KEPT, id="log-lines")

    def on_mount(self) -> None:
        self.watch(self.query_one(Log), "scroll_y", self._show_follow_state, init=False)

    @property
    def following(self) -> bool:
        log = self.query_one(Log)
        return log.auto_scroll and (log.is_vertical_scroll_end or log.max_scroll_y == 0)

    def toggle_follow(self) -> bool:
        """Follow the tail (scrolling to it), or stop following if already following."""
        log = self.query_one(Log)
        if self.following:
            log.auto_scroll = False
        else:
            log.auto_scroll = True
            log.scroll_end(animate=False)
        self._show_follow_state()
        return log.auto_scroll

    def _show_follow_state(self) -> None:
        self.set_subtitle("following" if self.following else "paused · f follows")

    def update_view(self, view: View) -> None:
        model: SessionModel = view.model
        log = self.query_one(Log)
        new = model.log_count - self._seen
        if new < 0 or new > len(model.logs):
            # A seek went back (or far ahead): redraw from what the model holds.
            log.clear()
            new = len(model.logs)
        if new:
            origin = model.t_first
            recent = list(model.logs)[-new:]
            log.write_lines([log_line(event, origin) for event in recent])
        self._seen = model.log_count
        self._show_follow_state()

"""Device log: the tail of the command's stdout/stderr and qtop's notes, following by default."""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType

from qtop.events import Log as LogEvent
from qtop.stats.model import LOG_LINES_KEPT, SessionModel
from qtop.textsafe import clean
from qtop.ui.format import clock
from qtop.ui.panes.base import Pane
from qtop.ui.view import View
from qtop.ui.widgets.device_log import DeviceLog, LogLine

STREAM_TAGS = {"stdout": "out", "stderr": "ERR", "agent": "agt", "qtop": "qtp"}


def device_time_offset(model: SessionModel, lines: Iterable[LogEvent]) -> float | None:
    """Host time minus device time, from the first event that carries both.

    The command's output has no device time of its own (the device writes it to a
    file as the command prints it). Its lines are placed on the device's clock by
    their arrival: the host receives a line and the events around it over the same
    link, so an event stamped on both clocks tells how far apart the clocks are.
    """
    for event in lines:
        if event.t is not None and event.host_t is not None:
            return event.host_t - event.t
    last = model.last_iteration
    if last is not None and last.t is not None and last.host_t is not None:
        return last.host_t - last.t
    return None


def log_line(event: LogEvent, origin: float | None, offset: float | None) -> LogLine:
    """``+1:05 ERR text``: when into the session, which stream, what (made plain)."""
    t = event.t
    if t is None and event.host_t is not None and offset is not None:
        t = event.host_t - offset
    when = clock(t - origin) if t is not None and origin is not None else ""
    tag = STREAM_TAGS.get(event.stream, clean(event.stream[:3]))
    loud = event.stream == "stderr" or event.level in ("warning", "error")
    if event.level in ("warning", "error") and event.stream != "stderr":
        tag = event.level[:4].upper()
    return LogLine(when, tag, clean(event.text), loud)


class LogPane(Pane):
    """The last lines the device printed; scrolling up stops following, ``f`` resumes."""

    TITLE = "device log"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f", "toggle_follow", "Follow", tooltip="follow new lines (again: stop)"),
    ]

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._seen = 0
        self._restarts = -1
        self._offset: float | None = None

    def compose(self) -> ComposeResult:
        yield DeviceLog(LOG_LINES_KEPT, id="log-lines")

    def on_mount(self) -> None:
        self.watch(self.query_one(DeviceLog), "follow", self._show_state, init=True)

    @property
    def following(self) -> bool:
        return self.query_one(DeviceLog).follow

    def action_toggle_follow(self) -> None:
        log = self.query_one(DeviceLog)
        log.follow = not log.follow
        self.notify("log: following" if log.follow else "log: not following", timeout=2)

    def _show_state(self) -> None:
        # The edge says only what changes rarely: redrawing it repaints the whole pane.
        self.subtitle("following" if self.following else "paused · f follows")

    def draw(self, view: View) -> None:
        model = view.model
        log = self.query_one(DeviceLog)
        kept = list(model.logs)
        new = model.log_count - self._seen
        restarted = view.restarts != self._restarts
        if restarted or new < 0 or new > len(kept):
            # A seek started the stream over (or more arrived than is kept): show what the
            # model holds, as of where the session now is.
            self._offset = device_time_offset(model, kept)
            log.replace(log_line(e, model.t_first, self._offset) for e in kept)
        elif new:
            recent = kept[-new:]
            if self._offset is None:
                self._offset = device_time_offset(model, recent)
            log.append(log_line(e, model.t_first, self._offset) for e in recent)
        self._seen = model.log_count
        self._restarts = view.restarts

"""Pane: a titled, focusable box that redraws itself from a ``View``."""

from __future__ import annotations

import time
from typing import ClassVar

from textual.containers import Vertical
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Static

from qtop.ui.view import View


class Pane(Vertical, can_focus=True):
    """Base of the dashboard's panes.

    ``update_view`` runs on every refresh the app makes (about 12 Hz, only when
    something changed). Costly parts (charts, tables) guard themselves with
    ``due``, which lets them redraw at most every ``SLOW_PERIOD_S``: numbers
    move at the refresh rate, curves twice a second, which the eye cannot
    tell apart on a ten-minute chart and which costs a fifth as much.
    """

    ALLOW_MAXIMIZE = True
    TITLE: ClassVar[str] = ""
    SLOW_PERIOD_S: ClassVar[float] = 0.5

    DEFAULT_CSS = """
    Pane {
        border: round $foreground 30%;
        border-title-color: $text;
        border-title-style: bold;
        border-subtitle-color: $text-muted;
        padding: 0 1;
        height: 1fr;
    }
    Pane:focus-within, Pane:focus {
        border: round $accent;
    }
    /* A figure line that does not fit is cut with an ellipsis; wrapping would push the
       chart under it around on every refresh. */
    Pane Static {
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    Pane Static.-wrap {
        text-wrap: wrap;
    }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.border_title = self.TITLE
        self._slow_at = 0.0
        self.stale = False
        self._shown: dict[str, object] = {}
        self._lines: dict[str, int] = {}
        self._subtitle = ""

    def expire(self) -> None:
        """Let the slow parts redraw on the next update, whenever the last one was."""
        self._slow_at = 0.0

    def due(self, force: bool = False) -> bool:
        """Whether the slow parts may redraw now (and note that they do).

        A pane told "not yet" is ``stale``: the app calls it again on a later
        tick even if nothing changes, so the last state always gets drawn.
        """
        now = time.monotonic()
        if force or now - self._slow_at >= self.SLOW_PERIOD_S:
            self._slow_at = now
            self.stale = False
            return True
        self.stale = True
        return False

    def show(self, selector: str, key: object, content: Content | str) -> None:
        """Update a Static only when what it shows changed (``key``), so nothing repaints idly.

        A new layout (the costliest step of a redraw: every widget is placed and
        painted again) is asked for only when the number of lines changes.
        """
        if self._shown.get(selector) == key:
            return
        self._shown[selector] = key
        lines = (content.plain if isinstance(content, Content) else content).count("\n") + 1
        widget = self.query_one(selector, Static)
        # A wrapping Static's height depends on the text, not only on its newlines.
        layout = self._lines.get(selector) != lines or widget.has_class("-wrap")
        self._lines[selector] = lines
        widget.update(content, layout=layout)

    def set_subtitle(self, text: str) -> None:
        if self._subtitle != text:
            self._subtitle = text
            self.border_subtitle = text

    @staticmethod
    def set_display(widget: Widget, shown: bool) -> None:
        if widget.display != shown:
            widget.display = shown

    def update_view(self, view: View) -> None:
        raise NotImplementedError

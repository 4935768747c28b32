"""Pane: a titled, focusable box that draws itself from the ``View`` it is given."""

from __future__ import annotations

from dataclasses import replace
from typing import ClassVar

from textual.containers import Vertical
from textual.content import Content
from textual.reactive import var
from textual.widgets import Static

from qtop.ui.view import View


class Pane(Vertical, can_focus=True):
    """Base of the dashboard's panes.

    The app sets ``view`` once per display refresh (a few times a second, only
    when the model changed); ``draw`` then updates the pane's widgets from it.
    A pane that is not displayed (behind a tab on a small terminal) draws when
    it is shown again.
    """

    ALLOW_MAXIMIZE = True
    TITLE: ClassVar[str] = ""

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

    view: var[View | None] = var(None, init=False, always_update=True)
    """The session as of the latest display refresh (a pane repaints only what it changes)."""

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.border_title = self.TITLE
        self._undrawn = False

    def watch_view(self, view: View | None) -> None:
        if view is None:
            return
        if not self.display:
            self._undrawn = True
            return
        self._undrawn = False
        self.draw(view)

    def on_show(self) -> None:
        if self._undrawn and self.view is not None:
            self._undrawn = False
            self.draw(replace(self.view, charts=True))

    def redraw(self) -> None:
        """Draw the latest view again, charts included (after a resize, a user's choice)."""
        if self.view is not None and self.display:
            self.draw(replace(self.view, charts=True))

    def draw(self, view: View) -> None:
        raise NotImplementedError

    # --- helpers for the panes' own widgets ------------------------------------

    def put(self, selector: str, content: Content) -> None:
        """Show ``content`` in a Static (always as Content: device text is never markup).

        Nothing is repainted when it did not change, and a new layout (the costly
        part of a refresh) is asked for only when the number of lines did.
        """
        widget = self.query_one(selector, Static)
        shown = widget.content
        if isinstance(shown, Content) and (shown.plain, shown.spans) == (
            content.plain,
            content.spans,
        ):
            return
        lines = content.plain.count("\n")
        before = shown.plain.count("\n") if isinstance(shown, Content) else -1
        widget.update(content, layout=lines != before or widget.has_class("-wrap"))

    def subtitle(self, text: str | Content) -> None:
        content = text if isinstance(text, Content) else Content(text)
        if self.border_subtitle != content.markup:
            self.border_subtitle = content

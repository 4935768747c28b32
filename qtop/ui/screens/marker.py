"""The ``m`` screen: type a note for a marker at the current time."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, Static


class MarkerScreen(ModalScreen[str | None]):
    """Returns the note (possibly empty) on enter, ``None`` on escape."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel", show=False)]
    DEFAULT_CSS = """
    MarkerScreen {
        align: center middle;
    }
    MarkerScreen > Vertical {
        width: 70;
        max-width: 100%;
        height: auto;
        border: round $accent;
        background: $surface;
        padding: 0 1;
    }
    MarkerScreen #marker-where { color: $text-muted; height: auto; }
    """

    def __init__(self, where: str, kept: str) -> None:
        super().__init__()
        self._where = where
        self._kept = kept

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = Content(f"marker at {self._where}")
            yield Input(placeholder="what happened? (enter saves, escape cancels)", id="note")
            yield Static(Content(self._kept), id="marker-where")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip())

    def action_cancel(self) -> None:
        self.dismiss(None)

"""Quitting while the device is still running: stop the run, leave it, or stay."""

from __future__ import annotations

from typing import ClassVar, Literal

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label

QuitChoice = Literal["stop", "leave", "stay"]


class QuitScreen(ModalScreen[QuitChoice]):
    """``s`` stops the device run and quits, ``l`` leaves it running, escape stays."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("s", "choose('stop')", "Stop", show=False),
        Binding("l", "choose('leave')", "Leave", show=False),
        Binding("escape,c", "choose('stay')", "Cancel", show=False),
    ]
    DEFAULT_CSS = """
    QuitScreen {
        align: center middle;
    }
    QuitScreen > Vertical {
        width: 76;
        max-width: 95%;
        height: auto;
        border: round $warning;
        background: $surface;
        padding: 0 1;
    }
    QuitScreen Horizontal { height: auto; align-horizontal: right; }
    QuitScreen Button { margin-left: 2; }
    """

    def __init__(self, run_id: str = "") -> None:
        super().__init__()
        self._run_id = run_id

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = "The run is still going on the device"
            name = f"Run {self._run_id}" if self._run_id else "The run"
            yield Label(
                f"{name} keeps the NPU busy until it ends. Stop it now (its whole process "
                "group; what was measured is kept), or leave it running and stop it later "
                "with 'qtop run PROFILE --stop-leftover'."
            )
            with Horizontal():
                yield Button("Cancel (esc)", id="stay")
                yield Button("Leave it running (l)", id="leave", variant="warning")
                yield Button("Stop it and quit (s)", id="stop", variant="error")

    def on_mount(self) -> None:
        self.query_one("#stay", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id)  # type: ignore[arg-type]

    def action_choose(self, choice: QuitChoice) -> None:
        self.dismiss(choice)

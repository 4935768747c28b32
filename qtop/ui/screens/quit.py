"""Quitting while the device is still running: stop the run, leave it, or stay."""

from __future__ import annotations

from typing import ClassVar, Literal

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from qtop.textsafe import clean

QuitChoice = Literal["stop", "leave", "stay"]


def quit_text(run_id: str, profile: str, can_leave: bool) -> str:
    """What quitting now does to the device run, and what each choice means."""
    name = f"Run {clean(run_id)}" if run_id else "The run"
    if not can_leave:
        return (
            f"{name} is on the simulated board, which goes away when qtop exits: quitting "
            "stops the run. What was measured so far is kept in the recording."
        )
    return (
        f"{name} keeps the NPU busy until it ends. Stop it now (its whole process group; "
        "what was measured is kept), or leave it running and stop it later with "
        f"'qtop run {clean(profile) or 'PROFILE'} --stop-leftover'."
    )


class QuitScreen(ModalScreen[QuitChoice]):
    """``s`` stops the device run and quits, ``l`` leaves it running (when it can), escape stays."""

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
        max-width: 100%;
        height: auto;
        border: round $warning;
        background: $surface;
        padding: 0 1;
    }
    QuitScreen #quit-text { width: 1fr; height: auto; margin-bottom: 1; }
    QuitScreen Horizontal { height: auto; align-horizontal: right; }
    QuitScreen Button { margin-left: 1; }
    """

    def __init__(
        self, run_id: str, profile: str, *, can_leave: bool, text: str | None = None
    ) -> None:
        super().__init__()
        # ``text`` replaces the single run's explanation (several devices at once).
        self._text = text
        self._run_id = run_id
        self._profile = profile
        self._can_leave = can_leave

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = "The run is still going on the device"
            yield Static(
                Content(self._text or quit_text(self._run_id, self._profile, self._can_leave)),
                id="quit-text",
            )
            with Horizontal():
                yield Button("Cancel (esc)", id="stay")
                if self._can_leave:
                    yield Button("Leave it running (l)", id="leave", variant="warning")
                yield Button("Stop it and quit (s)", id="stop", variant="error")

    def on_mount(self) -> None:
        self.query_one("#stay", Button).focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return not (action == "choose" and parameters == ("leave",) and not self._can_leave)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id)  # type: ignore[arg-type]

    def action_choose(self, choice: QuitChoice) -> None:
        self.dismiss(choice)

"""The ``?`` screen: every key binding, grouped, with what it does and when it applies."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from qtop.ui.actions import ACTIONS, GROUP_TITLES, ActionSpec, key_text, keys_text

PaneKeys = tuple[str, Sequence[Binding]]
"""A pane's title and its own bindings (they act on that pane when it has the focus)."""

NEEDS_TEXT = {
    "replay": "replay only",
    "live": "live only",
    "recorder": "when recording",
    "stoppable": "live runs only",
}


def help_text(available: Callable[[ActionSpec], bool], panes: Sequence[PaneKeys] = ()) -> Content:
    """All bindings as aligned lines; unavailable ones are dimmed and say why."""
    width = max(len(key_text(spec)) for spec in ACTIONS) + 2
    lines: list[Content] = []
    for group, title in GROUP_TITLES.items():
        lines.append(Content.styled(title, "bold $accent"))
        for spec in (s for s in ACTIONS if s.group == group):
            note = "" if available(spec) else f"  ({NEEDS_TEXT.get(spec.needs, 'not now')})"
            style = "" if available(spec) else "$text-muted"
            lines.append(
                Content.assemble(
                    ("  " + key_text(spec).ljust(width), style or "bold"),
                    (spec.help, style),
                    (note, "$text-muted italic"),
                )
            )
        lines.append(Content(""))
    for title, bindings in panes:
        name, _, when = title.partition(" (")
        lines.append(
            Content.assemble((name, "bold $accent"), (f"  ({when}" if when else "", "$text-muted"))
        )
        for binding in bindings:
            lines.append(
                Content.assemble(
                    ("  " + keys_text(binding.key, binding.key_display).ljust(width), "bold"),
                    binding.tooltip or binding.description,
                )
            )
        lines.append(Content(""))
    lines.append(Content.styled("ctrl+p opens the command palette: every action above by name.",
                                "$text-muted"))  # fmt: skip
    lines.append(Content.styled("Mouse: click a pane to focus it, a column title to sort the ops.",
                                "$text-muted"))  # fmt: skip
    return Content("\n").join(lines)


class HelpScreen(ModalScreen[None]):
    """Every binding; any of escape, ? or q closes it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,question_mark,q", "dismiss", "Close", show=False),
    ]
    DEFAULT_CSS = """
    HelpScreen {
        align: center middle;
    }
    HelpScreen > VerticalScroll {
        width: 96;
        max-width: 100%;
        height: auto;
        max-height: 100%;
        border: round $accent;
        border-title-color: $accent;
        background: $surface;
        padding: 0 1;
    }
    """

    def __init__(
        self, available: Callable[[ActionSpec], bool], panes: Sequence[PaneKeys] = ()
    ) -> None:
        super().__init__()
        self._available = available
        self._panes = panes

    def compose(self) -> ComposeResult:
        with VerticalScroll() as scroll:
            scroll.border_title = "qtop keys"
            scroll.border_subtitle = "escape closes"
            yield Static(help_text(self._available, self._panes), id="help-text")

    async def action_dismiss(self, result: None = None) -> None:
        self.dismiss(result)

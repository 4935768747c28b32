"""Section: one part of a device's column, drawn from the ``DeviceView`` it is given."""

from __future__ import annotations

from textual.containers import Vertical
from textual.content import Content
from textual.reactive import var
from textual.widgets import Static

from qtop.ui.devices.view import DeviceView


class Section(Vertical):
    """Base of the column's parts: set ``device`` and the section redraws from it."""

    DEFAULT_CSS = """
    Section { height: auto; }
    Section Static { text-wrap: nowrap; text-overflow: ellipsis; }
    """

    device: var[DeviceView | None] = var(None, init=False, always_update=True)

    def watch_device(self, view: DeviceView | None) -> None:
        if view is not None:
            self.draw(view)

    def draw(self, view: DeviceView) -> None:
        raise NotImplementedError

    def put(self, selector: str, content: Content) -> None:
        """Show ``content`` (always Content: device text is never markup), if it changed.

        A view may still arrive while the app closes and the section's parts are gone:
        then there is nothing to show it in.
        """
        for widget in self.query(selector).results(Static):
            shown = widget.content
            if not isinstance(shown, Content) or (shown.plain, shown.spans) != (
                content.plain,
                content.spans,
            ):
                widget.update(content)

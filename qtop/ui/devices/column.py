"""One device's column: status, latency, power and thermal, under the device's name."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content

from qtop.textsafe import clean
from qtop.ui.devices.latency import LatencySection
from qtop.ui.devices.power import PowerSection
from qtop.ui.devices.section import Section
from qtop.ui.devices.status import StatusSection
from qtop.ui.devices.thermal import ThermalSection
from qtop.ui.devices.view import DeviceView


class DeviceColumn(Vertical, can_focus=True):
    """A bordered column; the app gives it a new ``DeviceView`` per refresh."""

    DEFAULT_CSS = """
    DeviceColumn {
        border: round $foreground 30%;
        border-title-color: $text;
        border-title-style: bold;
        border-subtitle-color: $text-muted;
        padding: 0 1;
        width: 1fr;
        height: 1fr;
    }
    DeviceColumn:focus { border: round $accent; }
    """

    def __init__(self, name: str, description: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        # Content, never a str: a str title is parsed as markup, and these are device text.
        self.border_title = Content(clean(name))
        self.border_subtitle = Content(clean(description))

    def compose(self) -> ComposeResult:
        yield StatusSection()
        yield LatencySection()
        yield PowerSection()
        yield ThermalSection()

    def show(self, view: DeviceView) -> None:
        for section in self.query(Section):
            section.device = view

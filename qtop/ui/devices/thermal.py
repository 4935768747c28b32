"""Thermal: the device's hottest zone and its distance to a trip, and whether it throttles."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.content import Content
from textual.widgets import Static

from qtop.stats.model import SessionModel
from qtop.ui.devices.section import Section
from qtop.ui.devices.view import DeviceView
from qtop.ui.format import clock
from qtop.ui.panes.thermal import LOUD, channel_name, trip_text

MUTED = "$text-muted"


def hottest_line(model: SessionModel) -> Content:
    hottest = model.hottest_zone()
    if hottest is None:
        return Content.styled("no thermal zones in this session", MUTED)
    channel_id, value = hottest
    channel = model.channels[channel_id]
    trip = trip_text(channel, value)
    stats = model.channel_stats.get(channel_id)
    peak = f"  peak {stats.maximum:.1f}" if stats is not None and stats.maximum is not None else ""
    to_trip = f"  {trip.short}" if channel.trips else ""
    return Content.assemble(
        ("hottest ", MUTED),
        (f"{channel_name(channel)} {value:.1f} °C", "bold"),
        (peak, MUTED),
        (to_trip, trip.style),
    )


def throttling_line(view: DeviceView, model: SessionModel) -> Content:
    """Cooling devices above state 0 (the device throttles), and the onset if one was found."""
    active = []
    for channel in model.channels_of_kind("cooling"):
        value = model.last_value(channel.id)
        if value is not None and value > 0:
            limit = f"/{channel.max_state}" if channel.max_state is not None else ""
            active.append(f"{channel_name(channel)} {value:g}{limit}")
    thermal = view.analysis.thermal if view.analysis is not None else None
    onset = ""
    if thermal is not None and thermal.onset_offset_s is not None:
        onset = f"  onset after {clock(thermal.onset_offset_s)}"
    if active:
        return Content.assemble((" THROTTLING ", LOUD), " ", ("  ".join(active), "bold $error"),
                                (onset, MUTED))  # fmt: skip
    if not model.channels_of_kind("cooling"):
        return Content.styled("no cooling devices" + onset, MUTED)
    return Content.assemble(("not throttling", "$success"), (onset, MUTED))


class ThermalSection(Section):
    DEFAULT_CSS = "ThermalSection #device-thermal { height: 2; }"

    def compose(self) -> ComposeResult:
        yield Static(id="device-thermal")

    def draw(self, view: DeviceView) -> None:
        model = view.model
        if model is None:
            self.put("#device-thermal", Content(""))
            return
        lines = [hottest_line(model), throttling_line(view, model)]
        self.put("#device-thermal", Content("\n").join(lines))

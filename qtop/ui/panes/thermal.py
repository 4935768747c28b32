"""Thermal: every zone with its value, history and distance to its trip; cooling devices."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from qtop.events import ChannelInfo
from qtop.stats.model import SessionModel
from qtop.ui.format import MISSING, ellipsize, fmt, sparkline
from qtop.ui.panes.base import Pane
from qtop.ui.view import View

LOUD = "bold reverse $error"
NAME_WIDTH = 20
NOW_WIDTH = 7
PEAK_WIDTH = 6
TRIP_WIDTH = 22
MIN_SPARK = 8


def channel_name(channel: ChannelInfo) -> str:
    return channel.label or channel.id.split("/", 1)[-1]


def trip_text(channel: ChannelInfo, value: float | None) -> tuple[str, str]:
    """Distance to the next trip point above the value, or which trip it is past."""
    if not channel.trips:
        return "no trips", "$text-muted"
    if value is None:
        return MISSING, "$text-muted"
    trips = sorted(channel.trips, key=lambda trip: trip.temp_c)
    above = [trip for trip in trips if trip.temp_c > value]
    if len(above) < len(trips):
        passed = trips[len(trips) - len(above) - 1]
        return f"PAST {passed.type} {passed.temp_c:g}", LOUD
    nearest = above[0]
    margin = nearest.temp_c - value
    style = "bold $warning" if margin < 10 else ""
    return f"{margin:.1f} to {nearest.type} {nearest.temp_c:g}", style


def cooling_line(model: SessionModel) -> Content:
    """Every cooling device's state; any above 0 is throttling and shown loudly."""
    devices = model.channels_of_kind("cooling")
    if not devices:
        return Content.styled("no cooling devices in this session", "$text-muted")
    parts: list[str | tuple[str, str]] = [("cooling ", "bold")]
    throttling = []
    for index, channel in enumerate(devices):
        value = model.last_value(channel.id)
        limit = f"/{channel.max_state}" if channel.max_state is not None else ""
        state = MISSING if value is None else f"{value:g}"
        text = f"{channel_name(channel)} {state}{limit}"
        if index:
            parts.append(("  ", ""))
        if value is not None and value > 0:
            throttling.append(channel_name(channel))
            parts.append((text, "bold $error"))
        else:
            parts.append((text, "$text-muted"))
    if throttling:
        parts.insert(0, (" THROTTLING ", LOUD))
        parts.insert(1, " ")
    return Content.assemble(*parts)


def zone_lines(model: SessionModel, width: int) -> Content:
    """One line per zone: name, now, sparkline of the session, peak, distance to its trip."""
    zones = model.channels_of_kind("temperature")
    if not zones:
        return Content.styled("no thermal zones in this session", "$text-muted")
    hottest = model.hottest_zone()
    rows = []
    for zone in zones:
        stats = model.channel_stats.get(zone.id)
        value = stats.last if stats else None
        rows.append((zone, value, stats.maximum if stats else None, trip_text(zone, value)))
    name_width = min(NAME_WIDTH, max(len(channel_name(z)) for z in zones))
    trip_width = min(TRIP_WIDTH, max(len(trip[0]) for *_, trip in rows))
    spark_width = width - name_width - NOW_WIDTH - PEAK_WIDTH - trip_width - 4
    show_peak = spark_width >= MIN_SPARK
    if not show_peak:
        spark_width += PEAK_WIDTH + 1
    spark_width = max(0, spark_width)
    head = [f"{'zone'.ljust(name_width)} {'now'.rjust(NOW_WIDTH)} {'history'.ljust(spark_width)}"]
    if show_peak:
        head.append("peak".rjust(PEAK_WIDTH))
    head.append("to trip")
    lines: list[Content] = [Content.styled(ellipsize(" ".join(head), width), "$text-muted")]
    for zone, value, peak, (trip, trip_style) in rows:
        series = model.channel_series.get(zone.id)
        history = sparkline([p.mean for p in series.view()], spark_width) if series else ""
        is_hottest = hottest is not None and hottest[0] == zone.id
        now = f"{fmt(value, 1)} C" if value is not None else "n/a"
        parts: list[str | tuple[str, str]] = [
            (
                ellipsize(channel_name(zone), name_width).ljust(name_width),
                "bold" if is_hottest else "",
            ),
            " ",
            (now.rjust(NOW_WIDTH), "bold $warning" if is_hottest else "bold"),
            " ",
            (history.ljust(spark_width), "$accent"),
        ]
        if show_peak:
            parts += [" ", (fmt(peak, 1).rjust(PEAK_WIDTH), "$text-muted")]
        parts += [" ", (ellipsize(trip, trip_width), trip_style)]
        lines.append(Content.assemble(*parts))
    return Content("\n").join(lines)


class ThermalPane(Pane):
    """Thermal zones and cooling devices."""

    TITLE = "thermal"
    DEFAULT_CSS = """
    ThermalPane #thermal-cooling { height: auto; max-height: 2; }
    ThermalPane #thermal-scroll { height: 1fr; scrollbar-size-vertical: 1; }
    ThermalPane #thermal-zones { width: 100%; }
    """

    def compose(self) -> ComposeResult:
        yield Static(id="thermal-cooling")
        with VerticalScroll(id="thermal-scroll", can_focus=False):
            yield Static(id="thermal-zones")

    def update_view(self, view: View) -> None:
        model = view.model
        cooling = tuple(model.last_value(c.id) for c in model.channels_of_kind("cooling"))
        self.show("#thermal-cooling", (len(model.channels), cooling), cooling_line(model))
        if self.due():
            width = self.query_one("#thermal-scroll").scrollable_content_region.width or 60
            zones = model.channels_of_kind("temperature")
            key = (width, len(model.channels), model.sample_count, model.event_count)
            self.show("#thermal-zones", key, zone_lines(model, width))
            hottest = model.hottest_zone()
            self.set_subtitle(
                f"{len(zones)} zones · hottest {hottest[0].split('/', 1)[-1]} {hottest[1]:.1f} C"
                if hottest
                else f"{len(zones)} zones"
            )

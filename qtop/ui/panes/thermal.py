"""Thermal: every zone with its value, history and distance to its trip; cooling devices."""

from __future__ import annotations

from dataclasses import dataclass

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.widgets import Static

from qtop.events import ChannelInfo
from qtop.stats.model import SessionModel
from qtop.textsafe import clean
from qtop.ui.format import MISSING, ellipsize, fmt, sparkline
from qtop.ui.panes.base import Pane
from qtop.ui.view import View

LOUD = "bold reverse $error"
NAME_WIDTH = 20
NOW_WIDTH = 7
PEAK_WIDTH = 6
MIN_SPARK = 8
# Every zone's sysfs type ends so; in a pane about thermal zones it says nothing.
ZONE_SUFFIX = "-thermal"


def channel_name(channel: ChannelInfo) -> str:
    """A zone or cooling device by its name, made plain, without the redundant suffix."""
    name = clean(channel.label or channel.id.split("/", 1)[-1])
    return name.removesuffix(ZONE_SUFFIX) or name


@dataclass(frozen=True, slots=True)
class TripText:
    """Distance to the next trip point: in full, in short, and the style for either."""

    full: str
    short: str
    style: str


def trip_text(channel: ChannelInfo, value: float | None) -> TripText:
    """Distance to the next trip point above the value, or which trip it is past."""
    if not channel.trips:
        return TripText("no trips", "none", "$text-muted")
    if value is None:
        return TripText(MISSING, MISSING, "$text-muted")
    trips = sorted(channel.trips, key=lambda trip: trip.temp_c)
    above = [trip for trip in trips if trip.temp_c > value]
    if len(above) < len(trips):
        passed = trips[len(trips) - len(above) - 1]
        kind = clean(passed.type)
        return TripText(f"PAST {kind} {passed.temp_c:g}", f"PAST {passed.temp_c:g}", LOUD)
    nearest = above[0]
    margin = nearest.temp_c - value
    style = "bold $warning" if margin < 10 else ""
    kind = clean(nearest.type)
    return TripText(
        f"{margin:.1f} to {kind} {nearest.temp_c:g}", f"{margin:.1f}→{nearest.temp_c:g}", style
    )


def cooling_line(model: SessionModel) -> Content:
    """Every cooling device's state, the throttling ones (above 0) first and loud."""
    devices = model.channels_of_kind("cooling")
    if not devices:
        return Content.styled("no cooling devices in this session", "$text-muted")
    active: list[str] = []
    idle: list[str] = []
    for channel in devices:
        value = model.last_value(channel.id)
        limit = f"/{channel.max_state}" if channel.max_state is not None else ""
        state = MISSING if value is None else f"{value:g}"
        text = f"{channel_name(channel)} {state}{limit}"
        (active if value is not None and value > 0 else idle).append(text)
    parts: list[str | tuple[str, str]] = []
    if active:
        parts += [(" THROTTLING ", LOUD), " "]
        parts += [(text + "  ", "bold $error") for text in active]
    else:
        parts.append(("cooling ", "bold"))
    parts += [(text + "  ", "$text-muted") for text in idle]
    return Content.assemble(*parts).rstrip()


@dataclass(frozen=True, slots=True)
class Columns:
    """How the zone table spends its width."""

    name: int
    spark: int
    peak: bool
    trip: int
    short_trips: bool


def columns_for(width: int, names: list[str], trips: list[TripText]) -> Columns:
    """The widest layout that fits: full trips and a peak column first, then shorter ones."""
    name = min(NAME_WIDTH, max((len(n) for n in names), default=4))
    full = max((len(t.full) for t in trips), default=0)
    short = max((len(t.short) for t in trips), default=0)
    for peak, short_trips in ((True, False), (False, False), (False, True)):
        trip = short if short_trips else full
        spark = width - name - NOW_WIDTH - trip - 3 - ((PEAK_WIDTH + 1) if peak else 0)
        if spark >= MIN_SPARK:
            return Columns(name, spark, peak, trip, short_trips)
    # Narrower still: the history goes, then the names are cut.
    spark = 0
    name = max(4, min(name, width - NOW_WIDTH - short - 2))
    return Columns(name, spark, False, short, True)


def trip_margin(channel: ChannelInfo, value: float | None) -> float:
    """Degrees to the next trip point (negative once past one); infinite without either."""
    if value is None or not channel.trips:
        return float("inf")
    return min(trip.temp_c for trip in channel.trips) - value


def zone_lines(model: SessionModel, width: int) -> Content:
    """One line per zone: name, now, sparkline of the session, peak, distance to its trip.

    The zones closest to (or past) a trip point come first: on a board with many zones
    those are the ones that must not hide below the scroll.
    """
    zones = model.channels_of_kind("temperature")
    if not zones:
        return Content.styled("no thermal zones in this session", "$text-muted")
    hottest = model.hottest_zone()
    rows = []
    for zone in zones:
        stats = model.channel_stats.get(zone.id)
        value = stats.last if stats else None
        rows.append((zone, value, stats.maximum if stats else None, trip_text(zone, value)))
    rows.sort(key=lambda row: (trip_margin(row[0], row[1]), channel_name(row[0])))
    names = [channel_name(zone) for zone, *_ in rows]
    layout = columns_for(width, names, [trip for *_, trip in rows])
    head = [f"{'zone'.ljust(layout.name)} {'now'.rjust(NOW_WIDTH)}"]
    if layout.spark:
        head.append("history".ljust(layout.spark))
    if layout.peak:
        head.append("peak".rjust(PEAK_WIDTH))
    head.append("to trip")
    lines: list[Content] = [Content.styled(ellipsize(" ".join(head), width), "$text-muted")]
    for (zone, value, peak, trip), name in zip(rows, names, strict=True):
        is_hottest = hottest is not None and hottest[0] == zone.id
        now = f"{fmt(value, 1)} C" if value is not None else "n/a"
        parts: list[str | tuple[str, str]] = [
            (ellipsize(name, layout.name).ljust(layout.name), "bold" if is_hottest else ""),
            " ",
            (now.rjust(NOW_WIDTH), "bold $warning" if is_hottest else "bold"),
        ]
        if layout.spark:
            series = model.channel_series.get(zone.id)
            history = sparkline([p.mean for p in series.view()], layout.spark) if series else ""
            parts += [" ", (history.ljust(layout.spark), "$accent")]
        if layout.peak:
            parts += [" ", (fmt(peak, 1).rjust(PEAK_WIDTH), "$text-muted")]
        text = trip.short if layout.short_trips else trip.full
        parts += [" ", (ellipsize(text, layout.trip), trip.style)]
        lines.append(Content.assemble(*parts))
    return Content("\n").join(lines)


def more_zones_hint(above: int, below: int) -> str:
    """What the scroll hides, and how to see it."""
    hidden = []
    if above:
        hidden.append(f"▲ {above} above")
    if below:
        hidden.append(f"▼ {below} more below")
    return " · ".join(hidden) + ": scroll, or z to zoom" if hidden else ""


class ZoneList(VerticalScroll, can_focus=False):
    """The zone table's scroll; says when what it shows moved, so the hint can follow."""

    class Moved(Message):
        """The zones in view changed (scrolled or resized)."""

    def on_resize(self) -> None:
        self.post_message(self.Moved())

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if round(old_value) != round(new_value):
            self.post_message(self.Moved())


class ThermalPane(Pane):
    """Thermal zones and cooling devices."""

    TITLE = "thermal"
    DEFAULT_CSS = """
    ThermalPane #thermal-cooling { height: auto; max-height: 2; }
    ThermalPane #thermal-scroll { height: 1fr; scrollbar-size-vertical: 1; }
    ThermalPane #thermal-zones { width: 100%; }
    ThermalPane #thermal-more { height: 1; color: $warning; display: none; }
    """

    def compose(self) -> ComposeResult:
        yield Static(id="thermal-cooling", classes="-wrap")
        with ZoneList(id="thermal-scroll"):
            yield Static(id="thermal-zones")
        yield Static(id="thermal-more")

    def draw(self, view: View) -> None:
        model = view.model
        self.put("#thermal-cooling", cooling_line(model))
        if not view.charts:
            return
        scroll = self.query_one(ZoneList)
        width = scroll.scrollable_content_region.width or 60
        self.put("#thermal-zones", zone_lines(model, width))
        zones = model.channels_of_kind("temperature")
        hottest = model.hottest_zone()
        # Its temperature is in the table (bold): the edge, costly to redraw, changes seldom.
        name = channel_name(model.channels[hottest[0]]) if hottest else ""
        count = f"{len(zones)} zone{'' if len(zones) == 1 else 's'}"
        self.subtitle(f"{count} · hottest {name}" if hottest else count)
        self._hint()

    def on_zone_list_moved(self) -> None:
        self._hint()

    def on_resize(self) -> None:
        # After the layout that resized the pane: a new layout asked for in the middle of
        # that one would be lost, and the table keep its old height.
        self.call_after_refresh(self.redraw)

    def _hint(self) -> None:
        scroll = self.query_one(ZoneList)
        lines = self.query_one("#thermal-zones", Static).content
        total = lines.plain.count("\n") + 1 if isinstance(lines, Content) else 0
        shown = scroll.scrollable_content_region.height
        above = round(scroll.scroll_y)
        below = max(0, total - above - shown) if shown else 0
        hint = self.query_one("#thermal-more", Static)
        text = more_zones_hint(above, below)
        hint.display = bool(text)
        self.put("#thermal-more", Content(text))

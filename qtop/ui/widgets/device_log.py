"""DeviceLog: the newest lines of a stream of text, each with its time and stream, following.

A line API widget over a bounded list of lines. Lines that do not fit end in an
ellipsis (the log never scrolls sideways). While ``follow`` is on, every new
batch scrolls to the end; scrolling up turns it off and keeps the lines in
view where they are even as old ones are dropped; scrolling back to the end
turns it on again. Text is drawn as given: callers pass it through
``qtop.textsafe.clean`` first.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual.geometry import Size
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

TIME_WIDTH = 7
CUT = "…"


@dataclass(frozen=True, slots=True)
class LogLine:
    """One line as shown: when (``+1:05``, or blank when unknown), which stream, what."""

    when: str
    tag: str
    text: str
    loud: bool = False


class DeviceLog(ScrollView, can_focus=True):
    """The last ``capacity`` lines, newest at the bottom."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "device-log--time",
        "device-log--tag",
        "device-log--loud",
        "device-log--cut",
    }

    DEFAULT_CSS = """
    DeviceLog {
        height: 1fr;
        overflow-x: hidden;
        overflow-y: auto;
        scrollbar-size-vertical: 1;
        background: $surface;
    }
    DeviceLog > .device-log--time { color: $text-muted; }
    DeviceLog > .device-log--tag { color: $text-muted; }
    DeviceLog > .device-log--loud { color: $warning; text-style: bold; }
    DeviceLog > .device-log--cut { color: $text-muted; }
    """

    follow: reactive[bool] = reactive(True, init=False)
    """Keep the newest line in view as lines arrive (scrolling up turns it off, to the end on)."""

    def __init__(
        self,
        capacity: int,
        *,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.capacity = capacity
        self._lines: list[LogLine] = []
        self._scrolling = False
        self._styles: dict[str, Style] | None = None

    @property
    def lines(self) -> tuple[LogLine, ...]:
        return tuple(self._lines)

    @property
    def line_count(self) -> int:
        return len(self._lines)

    # --- content ---------------------------------------------------------------

    def append(self, lines: Iterable[LogLine]) -> None:
        """Add lines at the bottom, dropping the oldest beyond the capacity."""
        self._lines.extend(lines)
        dropped = len(self._lines) - self.capacity
        if dropped > 0:
            del self._lines[:dropped]
        self._changed(max(dropped, 0))

    def replace(self, lines: Iterable[LogLine]) -> None:
        """Show these lines instead (the newest ``capacity`` of them)."""
        self._lines = list(lines)[-self.capacity :]
        self._changed(0)

    def _changed(self, dropped: int) -> None:
        self.virtual_size = Size(self.size.width, len(self._lines))
        if self.follow:
            self._scroll(self.max_scroll_y)
        elif dropped:
            # The lines in view moved up by what was dropped: follow them, not the row.
            self._scroll(max(0, self.scroll_y - dropped))
        self.refresh()

    def _scroll(self, y: float) -> None:
        self._scrolling = True
        try:
            self.scroll_to(y=y, animate=False, immediate=True, force=True)
        finally:
            self._scrolling = False

    # --- following -------------------------------------------------------------

    def watch_follow(self, follow: bool) -> None:
        if follow:
            self._scroll(self.max_scroll_y)

    def action_scroll_end(self) -> None:
        """The end key: to the newest line, and follow from there."""
        self.follow = True

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if not self._scrolling:
            self.follow = new_value >= self.max_scroll_y

    def on_resize(self) -> None:
        self.virtual_size = Size(self.size.width, len(self._lines))
        if self.follow:
            self._scroll(self.max_scroll_y)

    # --- drawing ---------------------------------------------------------------

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles = None

    def _style(self, name: str) -> Style:
        if self._styles is None:
            self._styles = {"": self.rich_style}
            for component in self.COMPONENT_CLASSES:
                key = component.removeprefix("device-log--")
                self._styles[key] = self.get_component_rich_style(component)
        return self._styles[name]

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        index = self.scroll_offset.y + y
        base = self._style("")
        if not 0 <= index < len(self._lines) or width <= 0:
            return Strip.blank(width, base)
        line = self._lines[index]
        text_style = self._style("loud") if line.loud else base
        tag_style = text_style if line.loud else self._style("tag")
        segments = [
            Segment(line.when.rjust(TIME_WIDTH - 1) + " ", self._style("time")),
            Segment(line.tag.ljust(3) + " ", tag_style),
        ]
        used = TIME_WIDTH + max(3, len(line.tag)) + 1
        room = width - used
        if room > 0:
            text = line.text
            if cell_len(text) > room:
                segments.append(Segment(set_cell_size(text, room - 1), text_style))
                segments.append(Segment(CUT, self._style("cut")))
            else:
                segments.append(Segment(text, text_style))
        return Strip(segments).crop(0, width).adjust_cell_length(width, base)

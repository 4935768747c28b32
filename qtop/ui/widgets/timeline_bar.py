"""TimelineBar: one line with the replay state, a progress bar with its marks, and times."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from textual.reactive import reactive
from textual.strip import Strip
from textual.widget import Widget

from qtop.ui.format import clock, ellipsize

MARK_GLYPH = "◆"


@dataclass(frozen=True, slots=True)
class Progress:
    """Where a replay is: state text, elapsed of total, and marks as (fraction, kind)."""

    status: str
    elapsed_s: float | None
    total_s: float | None
    marks: tuple[tuple[float, str], ...] = ()
    note: str = ""

    @property
    def fraction(self) -> float:
        if not self.total_s or self.elapsed_s is None:
            return 0.0
        return min(1.0, max(0.0, self.elapsed_s / self.total_s))


def bar_cells(progress: Progress, width: int) -> list[tuple[str, str]]:
    """The bar as (char, kind) cells: ``done``, ``todo``, or the kind of a mark."""
    if width <= 0:
        return []
    filled = round(progress.fraction * width)
    cells = [("━", "done") if i < filled else ("─", "todo") for i in range(width)]
    for fraction, kind in progress.marks:
        column = min(width - 1, max(0, int(fraction * width)))
        cells[column] = (MARK_GLYPH, kind)
    return cells


class TimelineBar(Widget):
    """The replay's progress: ``status ━━━━◆──── 0:41 / 1:50  note``."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "timeline-bar--status",
        "timeline-bar--done",
        "timeline-bar--todo",
        "timeline-bar--phase",
        "timeline-bar--marker",
        "timeline-bar--link",
        "timeline-bar--onset",
        "timeline-bar--time",
    }

    DEFAULT_CSS = """
    TimelineBar {
        height: 1;
    }
    TimelineBar > .timeline-bar--status { color: $text; text-style: bold; }
    TimelineBar > .timeline-bar--done { color: $accent; }
    TimelineBar > .timeline-bar--todo { color: $text-muted; }
    TimelineBar > .timeline-bar--phase { color: $success; }
    TimelineBar > .timeline-bar--marker { color: $warning; }
    TimelineBar > .timeline-bar--link { color: $error; }
    TimelineBar > .timeline-bar--onset { color: $error; text-style: bold; }
    TimelineBar > .timeline-bar--time { color: $text; }
    """

    progress: reactive[Progress | None] = reactive(None, layout=False)
    """The replay position to show; ``None`` shows an empty line."""

    def _style(self, kind: str) -> Style:
        name = f"timeline-bar--{kind}"
        if name not in self.COMPONENT_CLASSES:
            name = "timeline-bar--marker"
        return self.get_component_rich_style(name)

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        progress = self.progress
        if y != 0 or progress is None:
            return Strip.blank(width, self.rich_style)
        status = f" {progress.status} "
        times = f" {clock(progress.elapsed_s)} / {clock(progress.total_s)} "
        note = f" {progress.note}" if progress.note else ""
        bar_width = width - len(status) - len(times) - len(note)
        if bar_width < 10:
            note = ""
            bar_width = width - len(status) - len(times)
        segments = [Segment(status, self._style("status"))]
        if bar_width > 0:
            for char, kind in bar_cells(progress, bar_width):
                segments.append(Segment(char, self._style(kind)))
            segments.append(Segment(times, self._style("time")))
            if note:
                segments.append(Segment(ellipsize(note, width), self._style("todo")))
        return Strip(segments).crop(0, width).adjust_cell_length(width, self.rich_style)

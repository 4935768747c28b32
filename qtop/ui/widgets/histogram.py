"""Histogram: vertical bars in eighth blocks with a labelled range underneath."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.segment import Segment
from textual.reactive import reactive
from textual.strip import Strip

from qtop.ui.format import ellipsize
from qtop.ui.plot import bars
from qtop.ui.widgets.cached_strips import CachedStrips


@dataclass(frozen=True, slots=True)
class Bins:
    """Counts per bin, the labels of both ends of the range, and a note (e.g. overflow)."""

    counts: tuple[int, ...]
    low_label: str
    high_label: str
    note: str = ""


def spread(counts: tuple[int, ...], width: int) -> list[int]:
    """Each bin as an equal group of columns, with a one-column gap when bins are wide."""
    if not counts or width <= 0:
        return []
    per = max(1, width // len(counts))
    gap = 1 if per >= 3 else 0
    out: list[int] = []
    for count in counts:
        out.extend([count] * (per - gap) + [0] * gap)
    return out[:width]


class Histogram(CachedStrips):
    """A histogram that fills its width with one column per bin."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"histogram--bar", "histogram--axis"}

    DEFAULT_CSS = """
    Histogram {
        height: 1fr;
        min-height: 3;
    }
    Histogram > .histogram--bar { color: $accent; }
    Histogram > .histogram--axis { color: $text-muted; }
    """

    bins: reactive[Bins | None] = reactive(None, layout=False)
    """The counts to draw; ``None`` draws an empty frame."""

    def watch_bins(self) -> None:
        self.invalidate()

    @property
    def columns(self) -> int:
        """How many one-column bins fit: the most bins worth computing."""
        return max(1, self.size.width)

    def build_strips(self) -> list[Strip]:
        width, height = self.size
        base = self.rich_style
        bar_style = self.get_component_rich_style("histogram--bar")
        axis_style = self.get_component_rich_style("histogram--axis")
        data = self.bins
        if data is None or height < 2:
            return [Strip.blank(width, base)] * height
        rows = bars(spread(data.counts, width), height - 1)
        strips = [Strip([Segment(row, bar_style)]).adjust_cell_length(width, base) for row in rows]
        low, high = data.low_label, data.high_label
        middle = ellipsize(data.note, max(0, width - len(low) - len(high) - 2))
        gap = width - len(low) - len(high) - len(middle)
        if gap < 0:
            axis = ellipsize(f"{low}–{high}", width)
        else:
            left = gap // 2
            axis = low + " " * left + middle + " " * (gap - left) + high
        strips.append(Strip([Segment(axis, axis_style)]).adjust_cell_length(width, base))
        return strips

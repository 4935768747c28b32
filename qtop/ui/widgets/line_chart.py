"""LineChart: a braille line plot with axes, units, reference rules and markers.

The drawing is ``qtop.ui.plot.plot`` (pure, tested on its own); this widget
turns its rows into strips, caches them until the figure or the size changes,
and takes its colours from component classes so themes (dark, light, 16
colours) restyle it.
"""

from __future__ import annotations

from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from textual.reactive import reactive
from textual.strip import Strip

from qtop.ui.plot import Figure, plot
from qtop.ui.widgets.cached_strips import CachedStrips

LINE_COLOURS = 4


class LineChart(CachedStrips):
    """A line chart drawn with braille dots; set ``figure`` to redraw it."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "line-chart--axis",
        "line-chart--axis-2",
        "line-chart--mark",
        "line-chart--placeholder",
        *(f"line-chart--line-{i}" for i in range(LINE_COLOURS)),
        *(f"line-chart--rule-{i}" for i in range(LINE_COLOURS)),
    }

    DEFAULT_CSS = """
    LineChart {
        height: 1fr;
        min-height: 3;
    }
    LineChart > .line-chart--axis { color: $text-muted; }
    LineChart > .line-chart--axis-2 { color: $primary-lighten-2; }
    LineChart > .line-chart--mark { color: $error; text-style: bold; }
    LineChart > .line-chart--placeholder { color: $text-muted; text-style: italic; }
    LineChart > .line-chart--line-0 { color: $accent; }
    LineChart > .line-chart--line-1 { color: $primary-lighten-2; }
    LineChart > .line-chart--line-2 { color: $success; }
    LineChart > .line-chart--line-3 { color: $error; }
    LineChart > .line-chart--rule-0 { color: $success; }
    LineChart > .line-chart--rule-1 { color: $warning; }
    LineChart > .line-chart--rule-2 { color: $error; }
    LineChart > .line-chart--rule-3 { color: $text-muted; }
    """

    figure: reactive[Figure | None] = reactive(None, layout=False)
    """What to draw; ``None`` or a figure without points shows the placeholder."""
    placeholder: reactive[str] = reactive("waiting for data")
    """The text shown while there is nothing to draw."""

    def __init__(
        self,
        figure: Figure | None = None,
        *,
        placeholder: str = "waiting for data",
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.set_reactive(LineChart.figure, figure)
        self.set_reactive(LineChart.placeholder, placeholder)
        self._styles: dict[str, Style] = {}

    def watch_figure(self) -> None:
        self.invalidate()

    def watch_placeholder(self) -> None:
        self.invalidate()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles = {}

    def _style(self, name: str) -> Style:
        """A run's style, looked up once per theme (a lookup costs more than a chart row)."""
        style = self._styles.get(name)
        if style is None:
            style = (
                self.rich_style
                if not name
                else self.get_component_rich_style(f"line-chart--{name}")
            )
            self._styles[name] = style
        return style

    def build_strips(self) -> list[Strip]:
        width, height = self.size
        figure = self.figure
        if figure is None or not figure.has_data:
            style = self._style("placeholder")
            text = self.placeholder[:width]
            blank = Strip([Segment(" " * width, self.rich_style)], width)
            strips = [blank] * height
            if height:
                middle = height // 2
                pad = max(0, (width - len(text)) // 2)
                line = [
                    Segment(" " * pad, self.rich_style),
                    Segment(text, style),
                    Segment(" " * (width - pad - len(text)), self.rich_style),
                ]
                strips = [*strips[:middle], Strip(line, width), *strips[middle + 1 :]]
            return strips
        strips = []
        for row in plot(figure, width, height):
            segments = [Segment(text, self._style(name)) for text, name in row]
            strips.append(Strip(segments).adjust_cell_length(width, self._style("")))
        return strips

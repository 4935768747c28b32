"""RatioBar: how a whole splits in two, as a labelled bar (compute against wait)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.segment import Segment
from textual.reactive import reactive
from textual.strip import Strip
from textual.widget import Widget

from qtop.ui.format import ellipsize, percent


@dataclass(frozen=True, slots=True)
class Ratio:
    """The second part's share of the whole (0..1), both parts' names, and a detail line."""

    share: float | None
    first: str = "compute"
    second: str = "wait"
    detail: str = ""


def ratio_text(ratio: Ratio, bar_width: int) -> tuple[str, int, int, str]:
    """(left label, first cells, second cells, right label) for a bar ``bar_width`` wide."""
    share = ratio.share
    if share is None:
        return f"{ratio.first} ?", 0, 0, f"? {ratio.second}"
    second = round(min(1.0, max(0.0, share)) * bar_width)
    return (
        f"{ratio.first} {percent(1 - share)}",
        bar_width - second,
        second,
        f"{percent(share)} {ratio.second}",
    )


class RatioBar(Widget):
    """``compute 11.5% ██░░░░░░░░ 88.5% wait  detail`` on one line."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "ratio-bar--first",
        "ratio-bar--second",
        "ratio-bar--label",
        "ratio-bar--detail",
    }

    DEFAULT_CSS = """
    RatioBar {
        height: 1;
    }
    RatioBar > .ratio-bar--first { color: $success; }
    RatioBar > .ratio-bar--second { color: $warning; }
    RatioBar > .ratio-bar--label { color: $text; text-style: bold; }
    RatioBar > .ratio-bar--detail { color: $text-muted; }
    """

    ratio: reactive[Ratio | None] = reactive(None, layout=False)
    """The split to show; ``None`` shows an empty line."""

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        ratio = self.ratio
        if y != 0 or ratio is None:
            return Strip.blank(width, self.rich_style)
        detail = f"  {ratio.detail}" if ratio.detail else ""
        bar_width = max(10, min(40, width // 3))
        left, first, second, right = ratio_text(ratio, bar_width)
        label = self.get_component_rich_style("ratio-bar--label")
        segments = [
            Segment(left + " ", label),
            Segment("█" * first, self.get_component_rich_style("ratio-bar--first")),
            Segment("█" * second, self.get_component_rich_style("ratio-bar--second")),
        ]
        if first + second == 0:
            segments.append(
                Segment("·" * bar_width, self.get_component_rich_style("ratio-bar--detail"))
            )
        segments.append(Segment(" " + right, label))
        used = len(left) + 1 + bar_width + 1 + len(right)
        if detail and used < width:
            segments.append(
                Segment(
                    ellipsize(detail, width - used),
                    self.get_component_rich_style("ratio-bar--detail"),
                )
            )
        return Strip(segments).crop(0, width).adjust_cell_length(width, self.rich_style)

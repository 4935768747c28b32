"""CachedStrips: a widget drawn once into strips and served from them until it changes.

Charts are costly to draw and a screen asks for every line on each repaint;
building all lines at once and keeping them until the data, the size or the
style changes keeps a redraw of an unchanged chart free.
"""

from __future__ import annotations

from textual.strip import Strip
from textual.widget import Widget


class CachedStrips(Widget):
    """Subclasses implement ``build_strips``; call ``invalidate`` when what they show changes."""

    def __init__(
        self, *, name: str | None = None, id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._strips: list[Strip] | None = None

    def build_strips(self) -> list[Strip]:
        """Every line of the widget at its current size."""
        raise NotImplementedError

    def invalidate(self) -> None:
        """Forget the drawing and repaint."""
        self._strips = None
        self.refresh()

    def on_resize(self) -> None:
        self._strips = None

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._strips = None

    def render_line(self, y: int) -> Strip:
        if self._strips is None or len(self._strips) != self.size.height:
            self._strips = self.build_strips()
        if 0 <= y < len(self._strips):
            return self._strips[y]
        return Strip.blank(self.size.width, self.rich_style)

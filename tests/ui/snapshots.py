"""A small SVG snapshot check: the screen as Textual exports it, against a stored file.

Set QTOP_UPDATE_SNAPSHOTS=1 to (re)write the stored files after a deliberate
change, then look at them (rsvg-convert FILE.svg -o FILE.png) before committing.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

from textual.app import App

SNAPSHOTS = Path(__file__).parent / "snapshots"
UPDATE = os.environ.get("QTOP_UPDATE_SNAPSHOTS") == "1"
_TEXT = re.compile(r"<text[^>]*>([^<]*)</text>")


def screen_text(svg: str) -> str:
    """The characters of an exported screen, for a readable failure message."""
    return "".join(_TEXT.findall(svg)).replace("&#160;", " ")


def assert_snapshot(app: App, name: str) -> None:
    svg = app.export_screenshot(title="qtop")
    path = SNAPSHOTS / f"{name}.svg"
    if UPDATE:
        SNAPSHOTS.mkdir(exist_ok=True)
        path.write_text(svg, encoding="utf-8")
        return
    if not path.exists():
        raise AssertionError(f"no snapshot {path}; run with QTOP_UPDATE_SNAPSHOTS=1 to create it")
    expected = path.read_text(encoding="utf-8")
    if svg != expected:
        actual = Path(tempfile.gettempdir()) / f"qtop-snapshot-{name}.actual.svg"
        actual.write_text(svg, encoding="utf-8")
        what = "styles" if screen_text(svg) == screen_text(expected) else "characters"
        raise AssertionError(f"screen {what} differ from {path}; this run's screen is {actual}")

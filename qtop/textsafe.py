"""Text from a device or a profiler file, made safe to print on a terminal.

Anything a board or a file hands us (an op name, a Genie response, a zone
type) may carry terminal escapes: ESC ] 0 ; ... BEL retitles the window, OSC
52 writes the clipboard, a lone CR overwrites the line before it. ``plain``
turns every C0 and C1 control character, DEL included, into a visible
``\\x1b``-style escape, so the text shows what it holds and the terminal does
nothing with it.
"""

from __future__ import annotations

import re

# C0 (tab and newline too: a field is one line), DEL, and C1 (0x9b is a one-byte CSI).
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


def _visible(match: re.Match[str]) -> str:
    return f"\\x{ord(match.group()):02x}"


def plain(text: str) -> str:
    """``text`` with every control character shown as ``\\xNN`` (one line, no escapes)."""
    return _CONTROL.sub(_visible, text)


def plain_lines(text: str) -> str:
    """Like ``plain``, but the newlines that separate lines are kept."""
    return "\n".join(plain(line) for line in text.split("\n"))

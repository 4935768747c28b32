"""Device text made safe to print: control characters become visible escapes.

Zone names, file names, a benchmark's output and anything else the device
sends are data someone else may control. Printed raw, an ESC starts a
terminal escape sequence (OSC 52 sets the clipboard, others retitle or
rewrite the screen) and a CR overwrites the line it is on. ``plain`` keeps
the text readable and one line long: every C0 and C1 control character, DEL
and the Unicode bidirectional overrides become ``\\n``, ``\\t``, ``\\r`` or
``\\xNN`` / ``\\uNNNN``; a backslash stays a backslash.
"""

from __future__ import annotations

import re

_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}
# C0, DEL, C1, and the bidi embeddings, overrides and isolates that reorder what follows.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _visible(match: re.Match[str]) -> str:
    char = match.group(0)
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def plain(text: str) -> str:
    """``text`` with every control character replaced by a visible escape."""
    if text.isprintable():
        # Nothing to replace (str.isprintable is false for every character the pattern
        # matches), found in C: a report passes every line of its output through here.
        return text
    return _UNSAFE.sub(_visible, text)


def plain_lines(text: str) -> str:
    """Like ``plain``, but the newlines that separate a message's lines are kept."""
    if text.isprintable():
        return text
    return "\n".join(map(plain, text.split("\n")))

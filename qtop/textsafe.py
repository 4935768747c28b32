"""Device text made safe to print or draw: no terminal control sequences, no control characters.

Zone and cooling-device names, file names, profiler op names and the benchmark's
own output come from another machine, where other users may control them. Sent
to a terminal as they are, an escape sequence in them can retitle the window,
set the clipboard (OSC 52) or rewrite what is on screen; a carriage return or a
bidirectional override can make a line read as something else.

Two forms, for two readers:

- ``plain`` is for text a person may copy or a script may parse (headless
  output, reports, CSV headers, ``qtop ops``): every control character becomes
  a visible, unambiguous escape (``\\n``, ``\\x1b``, ``\\u202e``), so nothing is
  lost and nothing acts on the terminal.
- ``clean`` is for the UI, where a screen of escapes would be unreadable:
  complete escape sequences (colours, OSC strings) are removed, since they carry
  no text of their own, and every other control character becomes a visible
  U+FFFD, so tampering shows instead of hiding. Markup is a separate matter:
  the UI draws device text as plain ``Content``, never parsed as markup.
"""

from __future__ import annotations

import re

REPLACEMENT = "\ufffd"
TAB_WIDTH = 8

_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}
# C0, DEL, C1, and the bidi embeddings, overrides and isolates that reorder what follows.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")

# ECMA-48 sequences, 7-bit and 8-bit forms. A string sequence (OSC, DCS, SOS, PM,
# APC) runs to its terminator (BEL or ST) or, when cut off, to the end of the text.
_SEQUENCE = re.compile(
    r"""
    \x1b\[[0-?]*[ -/]*[@-~]                        # CSI: colours, cursor moves
    | \x1b[\]PX^_][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?   # OSC / DCS / SOS / PM / APC
    | \x1b[ -/]*[0-~]                              # two-byte and nF escapes
    | \x9b[0-?]*[ -/]*[@-~]                        # 8-bit CSI
    | [\x90\x98\x9d\x9e\x9f][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?  # 8-bit string controls
    """,
    re.VERBOSE,
)
# C0 (but tab and newline, handled apart), DEL, C1, line and paragraph separators,
# and the bidirectional embeddings, overrides and isolates.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_NEWLINE = re.compile("\r\n|\n")


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


def clean(text: str, *, keep_newlines: bool = False) -> str:
    """``text`` with escape sequences removed and other control characters made visible.

    Tabs become spaces (to the next multiple of eight). Newlines become U+FFFD
    too, so one device string stays one line, unless ``keep_newlines`` (for
    multi-line messages such as an error with its fix).
    """
    if text.isprintable():
        return text
    text = _SEQUENCE.sub("", text)
    if "\t" in text:
        text = text.expandtabs(TAB_WIDTH)
    if keep_newlines:
        return "\n".join(_CONTROL.sub(REPLACEMENT, line) for line in _NEWLINE.split(text))
    return _CONTROL.sub(REPLACEMENT, text.replace("\n", REPLACEMENT))


def plain_lines(text: str) -> str:
    """Like ``plain``, but the newlines that separate lines are kept."""
    return "\n".join(plain(line) for line in text.split("\n"))

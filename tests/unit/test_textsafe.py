"""Device text made plain: escape sequences go, other control characters show, text stays."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from qtop.textsafe import REPLACEMENT, clean

# Escape sequences a terminal acts on, each between two letters that must survive.
SEQUENCES = {
    "OSC 52, set the clipboard": "\x1b]52;c;cXRvcA==\x07",
    "OSC 0, set the title, ended by ST": "\x1b]0;pwned\x1b\\",
    "an OSC cut off at the end": "\x1b]2;never ends",
    "CSI, erase the line": "\x1b[2K",
    "CSI, colour": "\x1b[1;31m",
    "CSI, move the cursor": "\x1b[10;20H",
    "8-bit CSI": "\x9b2J",
    "8-bit OSC": "\x9d52;c;eA==\x9c",
    "DCS": "\x1bP1$tx\x1b\\",
    "a charset switch": "\x1b(B",
}


def test_escape_sequences_are_removed_whole():
    for name, sequence in SEQUENCES.items():
        cut_off = name.endswith("at the end")
        expected = "a" if cut_off else "ab"
        assert clean(f"a{sequence}b" if not cut_off else f"a{sequence}") == expected, name


def test_other_control_characters_become_visible():
    assert clean("50%\rdone") == f"50%{REPLACEMENT}done"
    assert clean("bell\x07") == f"bell{REPLACEMENT}"
    assert clean("lone escape \x1b") == f"lone escape {REPLACEMENT}"
    assert clean("\u202eevil\u2066") == f"{REPLACEMENT}evil{REPLACEMENT}"
    assert clean("nul\x00del\x7f") == f"nul{REPLACEMENT}del{REPLACEMENT}"


def test_newlines_are_kept_only_when_asked_and_tabs_become_spaces():
    assert clean("one\ntwo") == f"one{REPLACEMENT}two"
    assert clean("one\r\ntwo\nthree", keep_newlines=True) == "one\ntwo\nthree"
    assert clean("a\tb") == "a       b"


def test_text_without_controls_is_returned_as_it_is():
    for text in ("cpu[/]", "[@click=app.quit]X[/]", "$accent", "nsp-0-0-0-thermal", "ẞ 温度 ±0.1%"):
        assert clean(text) == text


@given(st.text())
def test_nothing_a_terminal_acts_on_is_left(text):
    out = clean(text)
    assert not any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in out)
    assert not any(0x202A <= ord(c) <= 0x202E or 0x2066 <= ord(c) <= 0x2069 for c in out)
    assert clean(out) == out

"""JSON that may have been cut short: keep every value that is complete.

Profiler JSON is copied off boards while runs are stopped or links drop, so a
file can end in the middle of an event. ``load_json`` returns the document as
``json.loads`` would when it is whole; otherwise it returns the complete part,
with the containers the file ended inside marked as ``PartialDict`` /
``PartialList`` so a parser can drop a half-written event instead of trusting it.

Whole elements are still decoded by the C decoder; only the one element per
nesting level that contains the cut is walked in Python, so a cut 10 MB trace
costs about as much as a whole one.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from qtop.parsers.common import ProfileBuilder, ProfilerParseError, strip_bom

MAX_DEPTH = 64  # real profiler JSON nests under 10 levels; this bounds a hostile file

_DECODER = json.JSONDecoder()
_WHITESPACE = re.compile(r"[ \t\n\r]*")


class PartialDict(dict):
    """An object the file ended (or broke) inside: only its complete members are here."""


class PartialList(list):
    """An array the file ended (or broke) inside: only its complete elements are here."""


class JsonUnreadable(Exception):
    """Not JSON at all, or broken before anything usable."""

    def __init__(self, message: str, line: int | None) -> None:
        super().__init__(message)
        self.line = line


@dataclass(frozen=True, slots=True)
class JsonLoad:
    value: Any
    complete: bool
    stop_line: int | None = None


class _Cut(Exception):
    def __init__(self, position: int) -> None:
        super().__init__(position)
        self.position = position


def line_of(text: str, position: int) -> int:
    return text.count("\n", 0, position) + 1


def load_json(data: str) -> JsonLoad:
    """The document, or its complete prefix; raises ``JsonUnreadable`` when there is none."""
    text = strip_bom(data)
    try:
        return JsonLoad(json.loads(text), complete=True)
    except RecursionError:
        raise JsonUnreadable(f"nested deeper than {MAX_DEPTH} levels", None) from None
    except ValueError:
        pass
    start = _skip(text, 0)
    if start >= len(text) or text[start] not in "{[":
        where = min(start, len(text))
        raise JsonUnreadable("does not start with '{' or '['", line_of(text, where))
    salvager = _Salvager(text)
    try:
        value, end, complete = salvager.value(start, 0)
    except _Cut as cut:
        line = line_of(text, cut.position)
        raise JsonUnreadable("ends or breaks before any value", line) from None
    except RecursionError:
        raise JsonUnreadable(f"nested deeper than {MAX_DEPTH} levels", None) from None
    # A whole document followed by more text (two runs appended to one file) is
    # reported like a cut: what follows the first document is not read.
    stop = _skip(text, end) if complete else salvager.stop
    return JsonLoad(value, complete=False, stop_line=line_of(text, stop))


def _skip(text: str, position: int) -> int:
    match = _WHITESPACE.match(text, position)
    return match.end() if match else position


class _Salvager:
    def __init__(self, text: str) -> None:
        self.text = text
        self.stop = 0

    def _cut(self, position: int) -> _Cut:
        self.stop = max(self.stop, position)
        return _Cut(position)

    def value(self, position: int, depth: int) -> tuple[Any, int, bool]:
        """``(value, end, complete)`` at ``position``; raises ``_Cut`` when nothing is usable."""
        text = self.text
        position = _skip(text, position)
        if position >= len(text):
            raise self._cut(position)
        if depth > MAX_DEPTH:
            raise JsonUnreadable(f"nested deeper than {MAX_DEPTH} levels", line_of(text, position))
        opener = text[position]
        try:
            value, end = _DECODER.raw_decode(text, position)
        except (ValueError, RecursionError):
            if opener == "{":
                return self._object(position, depth)
            if opener == "[":
                return self._array(position, depth)
            raise self._cut(position) from None
        is_number = isinstance(value, int | float) and not isinstance(value, bool)
        if is_number and _skip(text, end) >= len(text):
            # A number followed by nothing may be the first digits of a longer one.
            raise self._cut(position) from None
        return value, end, True

    def _object(self, position: int, depth: int) -> tuple[Any, int, bool]:
        text = self.text
        members = PartialDict()
        position += 1
        while True:
            position = _skip(text, position)
            if position >= len(text):
                self._cut(position)
                return members, position, False
            if text[position] == "}":
                return dict(members), position + 1, True
            if members:
                if text[position] != ",":
                    self._cut(position)
                    return members, position, False
                position = _skip(text, position + 1)
            try:
                key, position = _DECODER.raw_decode(text, position)
            except ValueError:
                self._cut(position)
                return members, position, False
            position = _skip(text, position)
            if not isinstance(key, str) or position >= len(text) or text[position] != ":":
                self._cut(position)
                return members, position, False
            try:
                value, position, complete = self.value(position + 1, depth + 1)
            except _Cut:
                return members, position, False
            members[key] = value
            if not complete:
                return members, position, False

    def _array(self, position: int, depth: int) -> tuple[Any, int, bool]:
        text = self.text
        items = PartialList()
        position += 1
        while True:
            position = _skip(text, position)
            if position >= len(text):
                self._cut(position)
                return items, position, False
            if text[position] == "]":
                return list(items), position + 1, True
            if items:
                if text[position] != ",":
                    self._cut(position)
                    return items, position, False
                position += 1
            try:
                value, position, complete = self.value(position, depth + 1)
            except _Cut:
                return items, position, False
            items.append(value)
            if not complete:
                return items, position, False


def load_document(
    data: str,
    source: str,
    error: type[ProfilerParseError],
    fix: str,
    builder: ProfileBuilder,
) -> Any:
    """The JSON document for a parser: its own error when unreadable, a warning when cut."""
    try:
        loaded = load_json(data)
    except JsonUnreadable as exc:
        raise error(source, f"not readable as JSON: {exc}", fix, exc.line) from None
    if not loaded.complete:
        builder.truncated = True
        builder.warn(
            "truncated",
            f"the JSON is cut short or damaged at line {loaded.stop_line}; "
            "read only what came before it",
            loaded.stop_line,
        )
    return loaded.value


def is_partial(value: object) -> bool:
    return isinstance(value, PartialDict | PartialList)

"""JSON that may have been cut short: keep every value that is complete.

Profiler JSON is copied off boards while runs are stopped or links drop, so a
file can end in the middle of an event. ``load_json`` returns the document as
``json.loads`` would when it is whole; otherwise it returns the complete part,
with the containers the file ended inside marked as ``PartialDict`` /
``PartialList`` so a parser can drop a half-written event instead of trusting it.

The salvage is linear in the file. The failed ``json.loads`` says where the
text stops being JSON; everything before that point is a valid prefix. One
scan of that prefix, which skips strings and plain values at C speed and stops
only at brackets, finds the containers still open there (the chain from the
root to the cut). Every complete value beside that chain is decoded once, by
the C decoder, and the chain itself is built here: no part of the text is
decoded twice, however deep the cut lies.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

from qtop.parsers.common import ProfileBuilder, ProfilerParseError, strip_bom

# Real profiler JSON nests under 10 levels (a QHAS summary: 8); a cut deeper than
# this is refused rather than rebuilt.
MAX_DEPTH = 64

_DECODER = json.JSONDecoder()
_WHITESPACE = re.compile(r"[ \t\n\r]*")
# Everything up to the next bracket, whole strings included (an unterminated string
# stops it at its opening quote). Possessive: a run never backtracks.
_TO_BRACKET = re.compile(r'(?:[^"\[\]{}]++|"(?:[^"\\]++|\\.)*+")*+', re.S)


def _int_or_infinity(digits: str) -> int | float:
    """An integer, or an infinity for one past int()'s digit limit (as 1e999 reads)."""
    try:
        return int(digits)
    except ValueError:
        return -math.inf if digits.startswith("-") else math.inf


# Only after the plain decoder failed on such an integer: a Python call per integer is slow.
_TOLERANT_DECODER = json.JSONDecoder(parse_int=_int_or_infinity)


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


def line_of(text: str, position: int) -> int:
    return text.count("\n", 0, position) + 1


def load_json(data: str) -> JsonLoad:
    """The document, or its complete prefix; raises ``JsonUnreadable`` when there is none."""
    text = strip_bom(data)
    decoder = _DECODER
    try:
        try:
            return JsonLoad(json.loads(text), complete=True)
        except json.JSONDecodeError:
            raise
        except ValueError:
            # An integer past int()'s digit limit, which the decoder cannot place.
            decoder = _TOLERANT_DECODER
            return JsonLoad(decoder.decode(text), complete=True)
    except RecursionError:
        raise JsonUnreadable("nested deeper than the JSON decoder goes", None) from None
    except json.JSONDecodeError as exc:
        broken_at = exc.pos
    start = _skip(text, 0)
    if start >= len(text) or text[start] not in "{[":
        where = min(start, len(text))
        raise JsonUnreadable("does not start with '{' or '['", line_of(text, where))
    chain, broken_at = _open_containers(text, start, broken_at)
    if len(chain) > MAX_DEPTH:
        raise JsonUnreadable(f"nested deeper than {MAX_DEPTH} levels", line_of(text, broken_at))
    if not chain:
        # A whole document and then more (two runs appended to one file): the rest is not read.
        value, end = decoder.raw_decode(text, start)
        return JsonLoad(value, complete=False, stop_line=line_of(text, _skip(text, end)))
    rebuild = _Rebuild(text, chain, broken_at, decoder)
    value = rebuild.build()
    return JsonLoad(value, complete=False, stop_line=line_of(text, rebuild.stop))


def _skip(text: str, position: int) -> int:
    match = _WHITESPACE.match(text, position)
    return match.end() if match else position


def _open_containers(text: str, start: int, broken_at: int) -> tuple[list[int], int]:
    """Where the containers still open at ``broken_at`` begin, outermost first, and where
    the valid text ends: ``broken_at``, or the opening quote of a string the break cut."""
    stack: list[int] = []
    position = start
    while position < broken_at:
        match = _TO_BRACKET.match(text, position, broken_at)
        position = match.end() if match else position
        if position >= broken_at:
            break
        if text[position] == '"':
            return stack, position
        if text[position] in "[{":
            stack.append(position)
        elif stack:
            stack.pop()
        position += 1
    return stack, broken_at


class _Rebuild:
    """The chain of open containers, each with the complete members before the cut.

    Each container's own text (from its bracket to where the next container of
    the chain opens, or to the cut) holds only complete members and what the
    cut left of one more: that tail is trimmed, the bracket closed, and the
    C decoder reads the rest in one call.
    """

    def __init__(
        self, text: str, chain: list[int], broken_at: int, decoder: json.JSONDecoder
    ) -> None:
        self.text = text
        self.chain = chain
        self.broken_at = broken_at
        self.decoder = decoder
        self.stop = broken_at

    def build(self) -> PartialDict | PartialList:
        inner: PartialDict | PartialList | None = None
        for level in reversed(range(len(self.chain))):
            inner = self._level(level, inner)
        assert inner is not None
        return inner

    def _level(
        self, level: int, inner: PartialDict | PartialList | None
    ) -> PartialDict | PartialList:
        text = self.text
        start = self.chain[level]
        is_object = text[start] == "{"
        end = self.chain[level + 1] if inner is not None else self.broken_at
        end, key = self._trim(start, end, is_object, last=inner is None)
        members, _ = self.decoder.raw_decode(text[start:end] + ("}" if is_object else "]"))
        if is_object:
            partial_dict = PartialDict(members)
            if inner is not None and key is not None:
                partial_dict[key] = inner
            return partial_dict
        partial_list = PartialList(members)
        if inner is not None:
            partial_list.append(inner)
        return partial_list

    def _trim(self, start: int, end: int, is_object: bool, last: bool) -> tuple[int, str | None]:
        """Where the complete members end, and the key of the member the chain goes on in."""
        text = self.text
        end = _rstrip(text, start + 1, end)
        key = None
        if last:
            dropped = _trailing_cut_number(text, start + 1, end)
            if dropped != end:
                end, self.stop = _rstrip(text, start + 1, dropped), dropped
        if is_object:
            colon = end - 1 if end > start + 1 and text[end - 1] == ":" else None
            if colon is not None:
                end = _rstrip(text, start + 1, colon)
            if end > start + 1 and text[end - 1] == '"':
                opening = _string_start(text, start + 1, end - 1)
                before = _rstrip(text, start + 1, opening)
                if colon is not None or text[before - 1] in ",{":
                    key = json.loads(text[opening:end])
                    if last:
                        self.stop = opening
                    end = before
        if end > start + 1 and text[end - 1] == ",":
            end = _rstrip(text, start + 1, end - 1)
        return end, key


def _rstrip(text: str, floor: int, end: int) -> int:
    while end > floor and text[end - 1] in " \t\n\r":
        end -= 1
    return end


_NUMBER_CHARS = frozenset("0123456789+-.eE")


def _trailing_cut_number(text: str, floor: int, end: int) -> int:
    """Where a number that runs to the end of the file starts (it may be cut), else ``end``.

    The decoder stops a cut ``48.`` before its dot, so what follows ``end`` counts too.
    """
    after = end
    while after < len(text) and text[after] in _NUMBER_CHARS:
        after += 1
    if end <= floor or _skip(text, after) < len(text):
        return end
    for literal in ("-Infinity", "Infinity", "NaN"):  # Python's json reads these as numbers
        if text.endswith(literal, floor, end):
            return end - len(literal)
    if text[end - 1] not in _NUMBER_CHARS:
        return end
    begin = end
    while begin > floor and text[begin - 1] in _NUMBER_CHARS:
        begin -= 1
    if text[begin] not in "-0123456789":
        return end  # the 'e' of true or false
    return begin


def _string_start(text: str, floor: int, closing: int) -> int:
    """The opening quote of the JSON string whose closing quote is at ``closing``."""
    quote = closing
    while True:
        quote = text.rfind('"', floor, quote)
        slashes = 0
        while quote - slashes - 1 >= floor and text[quote - slashes - 1] == "\\":
            slashes += 1
        if slashes % 2 == 0:
            return quote


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

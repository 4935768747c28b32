"""Where things are in a recording: keyframes, marks, text and channels lines.

A writer that closes cleanly appends the index as the file's last line
(``{"kind":"index",...}``), so opening a recording reads its tail, not the
whole file. Without that line (a crashed session, a file still being written,
a version 1 file) the same index is built by one scan that reads only the
start of each line (``kind`` and ``t`` come first).
"""

from __future__ import annotations

import bisect
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, BinaryIO

import msgspec

from qtop.events import Finite, Int64

# Every line starts with the kind and, when the event has one, the device time:
# the writer emits fields in that order, which lets the scan skip JSON parsing.
LINE_PREFIX = re.compile(rb'^\{"kind":"(?P<kind>[a-z_]+)"(?:,"t":(?P<t>-?[0-9][0-9.eE+-]*))?')
MARK_KINDS = frozenset({"phase", "marker", "link", "end"})
INDEX_VERSION = 1
# The index line is read from the end of the file in blocks of this size.
TAIL_BLOCK = 1 << 16


@dataclass(frozen=True, slots=True)
class Mark:
    """A place worth seeking to: a phase change, a marker, a link event."""

    t: float
    kind: str
    label: str
    offset: int


def mark_label(kind: str, data: dict[str, Any]) -> str:
    """What a mark of this kind is called, from its event's fields."""
    if kind == "phase":
        return f"{data.get('phase', '')} {data.get('variant', '')}".strip()
    if kind == "marker":
        return str(data.get("note") or data.get("label", ""))
    if kind == "link":
        return str(data.get("state", ""))
    return str(data.get("reason", ""))


@dataclass(slots=True)
class RecordingIndex:
    """Offsets of keyframes, marks and the lines decoding depends on, and the time span."""

    keyframes: list[tuple[float, int]] = field(default_factory=list)
    marks: list[Mark] = field(default_factory=list)
    texts: list[int] = field(default_factory=list)
    channels: list[int] = field(default_factory=list)
    t_start: float | None = None
    t_end: float | None = None
    lines: int = 0
    end_offset: int = 0
    from_index_line: bool = False

    def channels_before(self, offset: int) -> int | None:
        """The offset of the last channels line before ``offset``."""
        position = bisect.bisect_left(self.channels, offset) - 1
        return self.channels[position] if position >= 0 else None

    def note_time(self, t: float) -> None:
        if self.t_start is None or t < self.t_start:
            self.t_start = t
        if self.t_end is None or t > self.t_end:
            self.t_end = t

    def to_line(self, offset: int) -> dict[str, Any]:
        """The index as the file's last line, which starts at ``offset``."""
        return {
            "kind": "index",
            "version": INDEX_VERSION,
            "offset": offset,
            "lines": self.lines,
            "t_start": self.t_start,
            "t_end": self.t_end,
            "keyframes": [[t, at] for t, at in self.keyframes],
            "marks": [[m.t, m.kind, m.label, m.offset] for m in self.marks],
            "texts": self.texts,
            "channels": self.channels,
        }


class _IndexLine(msgspec.Struct, kw_only=True):
    # Plain float and int inside tuples: msgspec 0.23 crashed on constrained types there.
    version: Int64
    offset: Int64
    lines: Int64
    t_start: Finite | None = None
    t_end: Finite | None = None
    keyframes: list[tuple[float, int]] = []
    marks: list[tuple[float, str, str, int]] = []
    texts: list[Int64] = []
    channels: list[Int64] = []


_INDEX_DECODER = msgspec.json.Decoder(_IndexLine)


def read_index_line(stream: BinaryIO, size: int) -> RecordingIndex | None:
    """The index from a file's last line, or ``None`` when there is no valid one."""
    if size == 0:
        return None
    tail = b""
    position = size
    while position > 0:
        start = max(0, position - TAIL_BLOCK)
        stream.seek(start)
        tail = stream.read(position - start) + tail
        position = start
        newline = tail.rfind(b"\n", 0, len(tail) - 1)
        if newline >= 0 or position == 0:
            break
    if not tail.endswith(b"\n"):
        return None
    line_start = tail.rfind(b"\n", 0, len(tail) - 1) + 1
    line = tail[line_start:-1]
    if not line.startswith(b'{"kind":"index"'):
        return None
    try:
        found = _INDEX_DECODER.decode(line)
    except (msgspec.ValidationError, msgspec.DecodeError):
        return None
    if found.version != INDEX_VERSION or found.offset != position + line_start:
        return None
    return RecordingIndex(
        keyframes=[(t, at) for t, at in found.keyframes],
        marks=[Mark(t=t, kind=kind, label=label, offset=at) for t, kind, label, at in found.marks],
        texts=list(found.texts),
        channels=list(found.channels),
        t_start=found.t_start,
        t_end=found.t_end,
        lines=found.lines,
        end_offset=found.offset,
        from_index_line=True,
    )


def file_size(stream: BinaryIO) -> int:
    return os.fstat(stream.fileno()).st_size


def scan(lines: Iterable[tuple[int, bytes]]) -> RecordingIndex:
    """Build the index from (offset, line) pairs; reads the JSON only of marks."""
    index = RecordingIndex()
    end_offset = 0
    count = 0
    for offset, data in lines:
        end_offset = offset + len(data) + 1
        match = LINE_PREFIX.match(data)
        if match is None:
            continue
        kind = match["kind"].decode()
        if kind == "index":
            continue
        count += 1
        if kind == "text":
            index.texts.append(offset)
            continue
        if kind == "channels":
            index.channels.append(offset)
        if match["t"] is None:
            continue
        try:
            t = float(match["t"])
        except ValueError:
            continue
        index.note_time(t)
        if kind == "keyframe":
            index.keyframes.append((t, offset))
        elif kind in MARK_KINDS:
            index.marks.append(Mark(t=t, kind=kind, label=_label(kind, data), offset=offset))
    index.keyframes.sort()
    index.lines = count
    index.end_offset = end_offset
    return index


def _label(kind: str, data: bytes) -> str:
    try:
        found = msgspec.json.decode(data)
    except msgspec.DecodeError:
        found = {}
    return mark_label(kind, found if isinstance(found, dict) else {})

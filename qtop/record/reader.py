"""Read recordings: whole, from an offset, or following one still being written.

The reader is forgiving where a crash leaves marks and strict where data would
be misread: a torn last line is dropped and reported, a file with no ``end``
line (a crashed session) still replays, undecodable lines in the middle are
skipped and counted, and a recording from a newer, unknown format version is
refused with a message saying how to read it.
"""

from __future__ import annotations

import asyncio
import bisect
import gzip
import json
import os
import re
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from qtop.errors import UsageError
from qtop.events import (
    RECORDING_FORMAT,
    RECORDING_VERSION,
    End,
    Event,
    EventDecodeError,
    Header,
    event_from_dict,
)
from qtop.record.follow import FileChanged, LineAt, LineFollower

# Every line starts with the kind and, when the event has one, the device time:
# the writer emits fields in that order, which lets the index skip JSON parsing.
_LINE_PREFIX = re.compile(rb'^\{"kind":"(?P<kind>[a-z_]+)"(?:,"t":(?P<t>-?[0-9][0-9.eE+-]*))?')
_TIME_INDEX_EVERY = 256
_MARK_KINDS = frozenset({b"phase", b"marker", b"link", b"end"})


@dataclass(frozen=True, slots=True)
class Mark:
    """A place worth seeking to: a phase change, a marker, a link event."""

    t: float
    kind: str
    label: str
    offset: int


@dataclass(slots=True)
class RecordingIndex:
    """Offsets of keyframes and of a sparse set of timed lines, for fast seeks."""

    keyframes: list[tuple[float, int]] = field(default_factory=list)
    times: list[tuple[float, int]] = field(default_factory=list)
    marks: list[Mark] = field(default_factory=list)
    t_start: float | None = None
    t_end: float | None = None
    lines: int = 0
    end_offset: int = 0

    def keyframe_before(self, t: float) -> tuple[float, int] | None:
        position = bisect.bisect_right(self.keyframes, (t, float("inf"))) - 1
        return self.keyframes[position] if position >= 0 else None

    def offset_before(self, t: float) -> int | None:
        """A line offset at or before device time t (from the sparse time index)."""
        position = bisect.bisect_left(self.times, (t, -1)) - 1
        return self.times[position][1] if position >= 0 else None


@dataclass(slots=True)
class ReadReport:
    """What the reader had to skip or drop, for the user to see."""

    torn_tail_bytes: int = 0
    bad_lines: list[int] = field(default_factory=list)
    bad_line_count: int = 0
    unknown_kinds: dict[str, int] = field(default_factory=dict)

    def messages(self, path: Path) -> list[str]:
        out = []
        if self.torn_tail_bytes:
            out.append(
                f"{path}: the last line was cut off mid-write ({self.torn_tail_bytes} bytes); "
                "dropped it (the session probably crashed or is still being written)"
            )
        if self.bad_line_count:
            shown = ", ".join(str(n) for n in self.bad_lines[:5])
            more = " ..." if self.bad_line_count > 5 else ""
            out.append(
                f"{path}: skipped {self.bad_line_count} undecodable line(s) (line {shown}{more})"
            )
        for kind, count in sorted(self.unknown_kinds.items()):
            out.append(f"{path}: skipped {count} event(s) of unknown kind {kind!r} (newer qtop?)")
        return out


def _open_binary(path: Path) -> BinaryIO:
    if path.suffix == ".gz":
        return gzip.open(path, "rb")  # type: ignore[return-value]
    return open(path, "rb")


class Recording:
    """One recording file: its header, its events, and an index for seeking."""

    def __init__(self, path: Path, header: Header, header_length: int) -> None:
        self.path = path
        self.header = header
        self.header_length = header_length
        self.report = ReadReport()
        self._index: RecordingIndex | None = None

    @property
    def compressed(self) -> bool:
        return self.path.suffix == ".gz"

    def _decode(self, line: LineAt, line_number: int) -> Event | None:
        try:
            data = json.loads(line.data)
        except ValueError:
            self._count_bad(line_number)
            return None
        try:
            return event_from_dict(data)
        except EventDecodeError:
            kind = data.get("kind") if isinstance(data, dict) else None
            if isinstance(kind, str) and kind not in _KNOWN_KINDS:
                # Kinds added by a newer qtop of the same format version are additive.
                self.report.unknown_kinds[kind] = self.report.unknown_kinds.get(kind, 0) + 1
            else:
                self._count_bad(line_number)
            return None

    def _count_bad(self, line_number: int) -> None:
        self.report.bad_line_count += 1
        if len(self.report.bad_lines) < 20:
            self.report.bad_lines.append(line_number)

    def _lines(self, offset: int) -> Iterator[LineAt]:
        with _open_binary(self.path) as stream:
            stream.seek(offset)
            position = offset
            for raw in stream:
                if raw.endswith(b"\n"):
                    yield LineAt(position, raw[:-1])
                    position += len(raw)
                    continue
                # A last line that lacks only its newline is complete JSON and
                # still counts; anything shorter is a write cut off by a crash.
                try:
                    json.loads(raw)
                except ValueError:
                    self.report.torn_tail_bytes = len(raw)
                else:
                    yield LineAt(position, raw)

    def events(self, offset: int = 0) -> Iterator[Event]:
        """Events from a line offset (0: from the header on), to the end of the file."""
        for _, event in self.events_with_offsets(offset):
            yield event

    def events_with_offsets(self, offset: int = 0) -> Iterator[tuple[int, Event]]:
        """Like ``events`` but with the byte offset of each event's line."""
        for line_number, line in enumerate(self._lines(offset), start=1):
            event = self._decode(line, line_number)
            if event is not None:
                yield line.offset, event

    async def follow(
        self, offset: int = 0, poll_s: float = 0.1, stop_at_end: bool = True
    ) -> AsyncIterator[tuple[int, Event]]:
        """Events of a recording that is still being written, as they arrive.

        Stops after the ``end`` event when ``stop_at_end``; a torn last line is
        held back until its writer finishes it.
        """
        if self.compressed:
            raise UsageError(f"{self.path}: a compressed recording cannot be followed")
        line_number = 0
        with LineFollower(self.path, offset) as follower:
            while True:
                try:
                    lines = list(follower.read_lines())
                except FileChanged as exc:
                    raise UsageError(
                        f"{exc}; stopped following it",
                        "replay the new file from its start",
                    ) from None
                for line in lines:
                    line_number += 1
                    event = self._decode(line, line_number)
                    if event is None:
                        continue
                    yield line.offset, event
                    if stop_at_end and isinstance(event, End):
                        return
                await asyncio.sleep(poll_s)

    def index(self) -> RecordingIndex:
        """Scan once for keyframes, marks and a sparse time index (cached)."""
        if self._index is None:
            self._index = self._build_index()
        return self._index

    def _build_index(self) -> RecordingIndex:
        index = RecordingIndex()
        end_offset = 0
        for number, line in enumerate(self._lines(0)):
            end_offset = line.offset + len(line.data) + 1
            match = _LINE_PREFIX.match(line.data)
            if match is None or match["t"] is None:
                continue
            try:
                t = float(match["t"])
            except ValueError:
                continue
            if index.t_start is None or t < index.t_start:
                index.t_start = t
            if index.t_end is None or t > index.t_end:
                index.t_end = t
            kind = match["kind"]
            if kind == b"keyframe":
                index.keyframes.append((t, line.offset))
            elif kind in _MARK_KINDS:
                index.marks.append(self._mark(line, t, kind.decode()))
            if number % _TIME_INDEX_EVERY == 0:
                index.times.append((t, line.offset))
            index.lines = number + 1
        index.keyframes.sort()
        index.times.sort()
        index.end_offset = end_offset
        return index

    @staticmethod
    def _mark(line: LineAt, t: float, kind: str) -> Mark:
        try:
            data = json.loads(line.data)
        except ValueError:
            data = {}
        label = {
            "phase": lambda: f"{data.get('phase', '')} {data.get('variant', '')}".strip(),
            "marker": lambda: data.get("note") or data.get("label", ""),
            "link": lambda: data.get("state", ""),
            "end": lambda: data.get("reason", ""),
        }[kind]()
        return Mark(t=t, kind=kind, label=str(label), offset=line.offset)

    def warnings(self) -> list[str]:
        return self.report.messages(self.path)


_KNOWN_KINDS = frozenset(
    {"header", "channels", "sample", "iteration", "phase", "profile_report", "log", "marker",
     "link", "keyframe", "end"}
)  # fmt: skip


def open_recording(path: str | os.PathLike[str]) -> Recording:
    """Open a recording and check its header; raises UsageError for anything unusable."""
    path = Path(path)
    try:
        with _open_binary(path) as stream:
            first = stream.readline()
    except FileNotFoundError:
        raise UsageError(
            f"{path}: no such recording", "check the path (recordings end in .jsonl)"
        ) from None
    except IsADirectoryError:
        raise UsageError(f"{path}: is a directory, not a recording") from None
    except (OSError, EOFError) as exc:
        raise UsageError(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    if not first:
        raise UsageError(f"{path}: the recording is empty", "the session ended before it started")
    if not first.endswith(b"\n"):
        raise UsageError(
            f"{path}: the recording's header line is incomplete",
            "the session was cut off before it wrote anything usable",
        )
    try:
        data = json.loads(first)
    except ValueError:
        raise UsageError(
            f"{path}: not a qtop recording (the first line is not JSON)",
            "pass a .jsonl file written by 'qtop run' or 'qtop demo'",
        ) from None
    if not isinstance(data, dict) or data.get("format") != RECORDING_FORMAT:
        raise UsageError(
            f'{path}: not a qtop recording (no \'"format": "{RECORDING_FORMAT}"\' header)',
            "pass a .jsonl file written by 'qtop run' or 'qtop demo'",
        )
    version = data.get("version")
    if not isinstance(version, int) or version < 1:
        raise UsageError(f"{path}: the header has no valid format version ({version!r})")
    if version > RECORDING_VERSION:
        raise UsageError(
            f"{path}: written by a newer qtop (recording format version {version}); "
            f"this qtop reads up to version {RECORDING_VERSION}",
            "upgrade qtop (pip install -U qtop) to read it",
        )
    try:
        header = event_from_dict(data)
    except EventDecodeError as exc:
        raise UsageError(f"{path}: the header is malformed: {exc}") from None
    if not isinstance(header, Header):
        raise UsageError(f"{path}: the first line is a {data.get('kind')!r} event, not a header")
    return Recording(path, header, len(first))

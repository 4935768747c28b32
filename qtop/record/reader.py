"""Read recordings: whole, from an offset, or following one still being written.

The reader is forgiving where a crash leaves marks and strict where data would
be misread: a torn last line is dropped and reported, a file with no ``end``
line (a crashed session) still replays, undecodable lines in the middle are
skipped and counted, and a recording from a newer, unknown format version is
refused with a message saying how to read it. Version 1 files (one event per
line) read as they always did.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import os
from collections import OrderedDict
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import msgspec

from qtop.errors import UsageError
from qtop.events import (
    RECORDING_FORMAT,
    RECORDING_VERSION,
    End,
    Event,
    EventDecodeError,
    Header,
    IterationRun,
    Keyframe,
    LogRun,
    ProfileReport,
    event_from_dict,
)
from qtop.record import keyframes
from qtop.record.follow import FileChanged, LineFollower
from qtop.record.index import Mark, RecordingIndex, file_size, read_index_line, scan
from qtop.record.keyframes import KeyframeError
from qtop.record.lines import KeyframeLine, LineError, LineUnpacker, UnknownKind

__all__ = ["Mark", "ReadReport", "Recording", "RecordingIndex", "open_recording"]

_KEYFRAME_PREFIX = b'{"kind":"keyframe"'
_INDEX_PREFIX = b'{"kind":"index"'
_END_PREFIX = b'{"kind":"end"'
_REPORT_PREFIX = b'{"kind":"profile_report"'
REPORTS_KEPT = 16


@dataclass(slots=True)
class ReadReport:
    """What the reader had to skip or drop, for the user to see."""

    torn_tail_bytes: int = 0
    bad_lines: list[int] = field(default_factory=list)
    bad_line_count: int = 0
    unknown_kinds: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

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
            first = f": {self.problems[0]}" if self.problems else ""
            out.append(
                f"{path}: skipped {self.bad_line_count} undecodable line(s) "
                f"(line {shown}{more}){first}"
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
        self._texts: dict[int, str] | None = None
        self._keyframe_cache: tuple[int, dict[str, Any]] | None = None
        self._recent_reports: OrderedDict[int, ProfileReport] = OrderedDict()
        self._random: BinaryIO | None = None

    @property
    def compressed(self) -> bool:
        return self.path.suffix == ".gz"

    # --- lines ------------------------------------------------------------------

    def _lines(self, offset: int) -> Iterator[tuple[int, bytes]]:
        """(offset, line without its newline) from ``offset`` to the end of the file."""
        with _open_binary(self.path) as stream:
            stream.seek(offset)
            position = offset
            after_end = False
            for raw in stream:
                if raw[-1:] == b"\n":
                    yield position, raw[:-1]
                    position += len(raw)
                    after_end = raw[:13] == _END_PREFIX
                    continue
                # A last line that lacks only its newline is complete JSON and
                # still counts; anything shorter is a write cut off by a crash,
                # unless it is the index after the end line (the events are whole).
                try:
                    msgspec.json.decode(raw)
                except msgspec.DecodeError:
                    if not (after_end and _INDEX_PREFIX.startswith(raw[: len(_INDEX_PREFIX)])):
                        self.report.torn_tail_bytes = len(raw)
                else:
                    yield position, raw

    def read_line_at(self, offset: int) -> bytes:
        """The line that starts at ``offset`` (without its newline)."""
        if self._random is None:
            self._random = _open_binary(self.path)
        self._random.seek(offset)
        return self._random.readline().rstrip(b"\n")

    def _count_bad(self, line_number: int, problem: str) -> None:
        self.report.bad_line_count += 1
        if len(self.report.bad_lines) < 20:
            self.report.bad_lines.append(line_number)
        if len(self.report.problems) < 5:
            self.report.problems.append(problem)

    # --- events -----------------------------------------------------------------

    def events(self, offset: int = 0, keyframes: bool = False) -> Iterator[Event]:
        """Events from a line offset (0: from the header on), to the end of the file.

        Keyframe lines are skipped unread unless ``keyframes``: they are not events
        of the session but restore points, and a reader that goes on from where it
        is has no use for them (``qtop.record.seek`` starts from one).
        """
        unpacker = self.unpacker_at(offset)
        decode = self._decode
        for line_number, (position, data) in enumerate(self._lines(offset), start=1):
            found = decode(unpacker, position, data, line_number, keyframes)
            if type(found) is list:
                yield from found
            else:
                yield from found.events()  # type: ignore[union-attr]

    def events_with_offsets(
        self, offset: int = 0, keyframes: bool = False
    ) -> Iterator[tuple[int, Event]]:
        """Like ``events`` but with the byte offset of each event's line."""
        unpacker = self.unpacker_at(offset)
        for line_number, (position, data) in enumerate(self._lines(offset), start=1):
            found = self._decode(unpacker, position, data, line_number, keyframes)
            for event in found if isinstance(found, list) else found.events():
                yield position, event

    def items(self, offset: int = 0) -> Iterator[Event | IterationRun | LogRun]:
        """The events from ``offset`` on, with packed runs kept whole, keyframes skipped.

        For a reader that folds everything (``report``): a run of 20 iterations
        costs one object instead of twenty.
        """
        unpacker = self.unpacker_at(offset)
        decode = self._decode
        for line_number, (position, data) in enumerate(self._lines(offset), start=1):
            found = decode(unpacker, position, data, line_number, False)
            if type(found) is list:
                yield from found
            else:
                yield found  # type: ignore[misc]

    def _decode(
        self, unpacker: LineUnpacker, offset: int, data: bytes, line_number: int, keyframes: bool
    ) -> list[Event] | IterationRun | LogRun:
        head = data[9:14]
        if head == b"keyfr":
            if not keyframes:
                return []
            try:
                return [self.keyframe_at(offset, data)]
            except (LineError, KeyframeError, EventDecodeError) as exc:
                self._count_bad(line_number, f"keyframe: {exc}")
                return []
        if head == b"index":
            return []
        try:
            found = unpacker.items(unpacker.parse(data))
        except UnknownKind as exc:
            kind = exc.kind or "?"
            self.report.unknown_kinds[kind] = self.report.unknown_kinds.get(kind, 0) + 1
            return []
        except LineError as exc:
            self._count_bad(line_number, str(exc))
            return []
        if keyframes and head == b"profi" and isinstance(found, list) and found:
            self._recent_reports[offset] = found[0]  # type: ignore[assignment]
            if len(self._recent_reports) > REPORTS_KEPT:
                self._recent_reports.popitem(last=False)
        return found

    def unpacker_at(self, offset: int) -> LineUnpacker:
        """An unpacker that knows the texts and channels lines before ``offset``."""
        unpacker = LineUnpacker()
        if offset <= 0:
            return unpacker
        unpacker.texts = dict(self._text_table())
        channels_at = self.index().channels_before(offset)
        if channels_at is not None:
            with contextlib.suppress(LineError):
                unpacker.events(unpacker.parse(self.read_line_at(channels_at)))
        return unpacker

    def _text_table(self) -> dict[int, str]:
        if self._texts is None:
            table: dict[int, str] = {}
            reader = LineUnpacker()
            for offset in self.index().texts:
                try:
                    reader.events(reader.parse(self.read_line_at(offset)))
                except LineError:
                    continue
            table.update(reader.texts)
            self._texts = table
        return self._texts

    # --- keyframes --------------------------------------------------------------

    def keyframe_at(self, offset: int, data: bytes | None = None) -> Keyframe:
        """The keyframe whose line starts at ``offset``, as the state it stands for."""
        line = self._keyframe_line(offset, data)
        compact = self._compact_state(offset, line)
        state = keyframes.expand_state(compact, self)
        return Keyframe(t=line.t, host_t=line.host_t, state=state)

    def _keyframe_line(self, offset: int, data: bytes | None = None) -> KeyframeLine:
        parsed = LineUnpacker().parse(data if data is not None else self.read_line_at(offset))
        if not isinstance(parsed, KeyframeLine):
            raise KeyframeError(f"the line at byte {offset} is not a keyframe")
        return parsed

    def _compact_state(self, offset: int, line: KeyframeLine) -> dict[str, Any]:
        cache = self._keyframe_cache
        if cache is not None and cache[0] == offset:
            return cache[1]
        patches = []
        at, current = offset, line
        while current.state is None:
            base = current.base
            if base is None or not 0 < base < at:
                raise KeyframeError(f"the keyframe at byte {at} has no earlier base")
            patches.append(current.patch)
            if cache is not None and cache[0] == base:
                state = cache[1]
                break
            at, current = base, self._keyframe_line(base)
        else:
            state = current.state
        for node in reversed(patches):
            state = keyframes.patch(state, node)
        self._keyframe_cache = (offset, state)
        return state

    def events_in(self, offsets: list[int]) -> list[Event]:
        """The events of the lines at these offsets, in order (a keyframe's recent logs)."""
        unpacker = LineUnpacker()
        unpacker.texts = self._text_table()
        out: list[Event] = []
        for offset in offsets:
            if not isinstance(offset, int):
                raise KeyframeError(f"a keyframe refers to a line at {offset!r}")
            try:
                out.extend(unpacker.events(unpacker.parse(self.read_line_at(offset))))
            except LineError as exc:
                raise KeyframeError(f"the line at byte {offset} it refers to: {exc}") from None
        return out

    def event_dict_at(self, offset: int) -> dict[str, Any]:
        """The event dict of a line a keyframe refers to (header, profiler report)."""
        if offset == 0:
            return self.header.to_dict()
        known = self._recent_reports.get(offset)
        if known is None:
            unpacker = LineUnpacker()
            try:
                found = unpacker.events(unpacker.parse(self.read_line_at(offset)))
            except LineError as exc:
                raise KeyframeError(f"the line at byte {offset} it refers to: {exc}") from None
            if len(found) != 1:
                raise KeyframeError(f"the line at byte {offset} it refers to is not one event")
            return found[0].to_dict()
        return known.to_dict()

    # --- following ----------------------------------------------------------------

    async def follow(
        self,
        offset: int = 0,
        poll_s: float = 0.1,
        stop_at_end: bool = True,
        keyframes: bool = False,
    ) -> AsyncIterator[tuple[int, Event]]:
        """Events of a recording that is still being written, as they arrive.

        Stops after the ``end`` event when ``stop_at_end``; a torn last line is
        held back until its writer finishes it.
        """
        if self.compressed:
            raise UsageError(f"{self.path}: a compressed recording cannot be followed")
        line_number = 0
        unpacker = self.unpacker_at(offset)
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
                    found = self._decode(unpacker, line.offset, line.data, line_number, keyframes)
                    for event in found if isinstance(found, list) else found.events():
                        yield line.offset, event
                        if stop_at_end and isinstance(event, End):
                            return
                await asyncio.sleep(poll_s)

    # --- the index ----------------------------------------------------------------

    def index(self) -> RecordingIndex:
        """Keyframes, marks and decoding context: from the index line, else one scan."""
        if self._index is None:
            found = None
            if not self.compressed:
                with open(self.path, "rb") as stream:
                    found = read_index_line(stream, file_size(stream))
            if found is None:
                found = scan(self._lines(0))
            self._index = found
        return self._index

    def warnings(self) -> list[str]:
        return self.report.messages(self.path)

    def close(self) -> None:
        if self._random is not None:
            self._random.close()
            self._random = None

    def __enter__(self) -> Recording:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


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
        data = msgspec.json.decode(first)
    except msgspec.DecodeError:
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
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
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

"""Read recordings: whole, from an offset, or following one still being written.

The reader is forgiving where a crash leaves marks and strict where data would
be misread: a torn last line is dropped and reported, a file with no ``end``
line (a crashed session) still replays, undecodable lines in the middle are
skipped, counted and named by line number, a compressed file cut short gives
what it holds, and a recording from a newer, unknown format version is refused
with a message saying how to read it. Version 1 files (one event per line) read
as they always did. Whatever a file holds, reading it never raises anything but
``UsageError`` (nothing usable at all) and never loops longer than the file is.
"""

from __future__ import annotations

import contextlib
import gzip
import os
import zlib
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
from qtop.textsafe import plain

__all__ = ["Mark", "ReadReport", "Recording", "RecordingIndex", "open_recording"]

_KEYFRAME_PREFIX = b'{"kind":"keyframe"'
_INDEX_PREFIX = b'{"kind":"index"'
_END_PREFIX = b'{"kind":"end"'
_REPORT_PREFIX = b'{"kind":"profile_report"'
REPORTS_KEPT = 16
# Longer than any line qtop writes (a whole keyframe of a long session is a few MB):
# a longer one is damage, and is skipped without being held in memory.
MAX_LINE_BYTES = 64 << 20


BAD_LINES_NAMED = 5
UNKNOWN_KINDS_NAMED = 20


@dataclass(slots=True)
class ReadReport:
    """What the reader had to skip or drop, for the user to see.

    A line is counted once however often it is read (an export reads a file
    twice, a seek reads part of it again): only lines past the furthest one
    counted so far are counted.
    """

    torn_tail_bytes: int = 0
    bad_lines: list[tuple[int, str]] = field(default_factory=list)
    bad_line_count: int = 0
    unknown_kinds: dict[str, int] = field(default_factory=dict)
    unknown_count: int = 0
    damaged_stream: str = ""
    counted_to: int = -1

    def messages(self, path: Path) -> list[str]:
        out = []
        if self.damaged_stream:
            out.append(f"{path}: {self.damaged_stream}")
        if self.torn_tail_bytes:
            out.append(
                f"{path}: the last line was cut off mid-write ({self.torn_tail_bytes} bytes); "
                "dropped it (the session probably crashed or is still being written)"
            )
        if self.bad_line_count:
            named = "; ".join(
                f"line {number}: {problem}" for number, problem in self.bad_lines[:BAD_LINES_NAMED]
            )
            more = self.bad_line_count - min(len(self.bad_lines), BAD_LINES_NAMED)
            out.append(
                f"{path}: skipped {self.bad_line_count} undecodable line(s): {named}"
                + (f"; and {more} more" if more else "")
            )
        for kind, count in sorted(self.unknown_kinds.items()):
            out.append(f"{path}: skipped {count} event(s) of unknown kind {kind!r} (newer qtop?)")
        others = self.unknown_count - sum(self.unknown_kinds.values())
        if others:
            out.append(f"{path}: skipped {others} event(s) of other unknown kinds (newer qtop?)")
        # The path, kinds and problems quote the file: no control character gets through.
        return [plain(message) for message in out]


def _reason(exc: BaseException) -> str:
    return str(getattr(exc, "strerror", None) or exc) or type(exc).__name__


def _skip_line(stream: BinaryIO) -> int:
    """Read on to the end of an over-long line; returns how many bytes that took."""
    skipped = 0
    while True:
        chunk = stream.readline(MAX_LINE_BYTES)
        skipped += len(chunk)
        if not chunk or chunk.endswith(b"\n"):
            return skipped


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
        # Line numbers worked out so far, by offset (the header is line 1).
        self._line_numbers: dict[int, int] = {0: 1}

    @property
    def compressed(self) -> bool:
        return self.path.suffix == ".gz"

    # --- lines ------------------------------------------------------------------

    def _lines(self, offset: int) -> Iterator[tuple[int, bytes]]:
        """(offset, line without its newline) from ``offset`` to the end of the file.

        A compressed file that is cut short or damaged ends where it stops
        decompressing (said in the warnings); a line longer than
        ``MAX_LINE_BYTES`` is skipped as damaged without being held.
        """
        try:
            stream = _open_binary(self.path)
        except OSError as exc:
            self.report.damaged_stream = f"could not be read again: {exc.strerror or exc}"
            return
        with stream:
            position = offset
            after_end = False
            try:
                stream.seek(offset)
                readline = stream.readline
                while True:
                    raw = readline(MAX_LINE_BYTES)
                    if not raw:
                        return
                    if raw[-1:] == b"\n":
                        yield position, raw[:-1]
                        position += len(raw)
                        after_end = raw[:13] == _END_PREFIX
                        continue
                    if len(raw) == MAX_LINE_BYTES:
                        skipped = len(raw) + _skip_line(stream)
                        self._count_bad(position, f"a line of more than {MAX_LINE_BYTES} bytes")
                        position += skipped
                        continue
                    # A last line that lacks only its newline is complete JSON and
                    # still counts; anything shorter is a write cut off by a crash,
                    # unless it is the index after the end line (the events are whole).
                    try:
                        msgspec.json.decode(raw)
                    except (msgspec.DecodeError, RecursionError):
                        if not (after_end and _INDEX_PREFIX.startswith(raw[: len(_INDEX_PREFIX)])):
                            self.report.torn_tail_bytes = len(raw)
                    else:
                        yield position, raw
                    return
            except (EOFError, zlib.error, OSError) as exc:
                # gzip raises EOFError for a cut stream, BadGzipFile (an OSError) or
                # zlib.error for damaged data.
                self.report.damaged_stream = (
                    f"the file is damaged or cut short after {position} bytes "
                    f"({_reason(exc)}); read what came before"
                )

    def read_line_at(self, offset: int) -> bytes:
        """The line that starts at ``offset`` (without its newline).

        Raises LineError when no line starts there (an index or a keyframe that
        points into the middle of a line, or past the end).
        """
        if not isinstance(offset, int) or offset < 0:
            raise LineError(f"no line starts at byte {offset!r}")
        try:
            if self._random is None:
                self._random = _open_binary(self.path)
            stream = self._random
            if offset > 0:
                stream.seek(offset - 1)
                if stream.read(1) != b"\n":
                    raise LineError(f"no line starts at byte {offset}")
            else:
                stream.seek(0)
            data = stream.readline(MAX_LINE_BYTES)
        except (EOFError, zlib.error, OSError) as exc:
            raise LineError(f"cannot read the line at byte {offset}: {_reason(exc)}") from None
        if not data.endswith(b"\n"):
            # Past the end, a torn tail, or longer than any line qtop reads.
            raise LineError(f"no whole line at byte {offset}")
        return data[:-1]

    def _count_bad(self, offset: int, problem: str) -> None:
        report = self.report
        if offset <= report.counted_to:
            return
        report.counted_to = offset
        report.bad_line_count += 1
        if len(report.bad_lines) < BAD_LINES_NAMED:
            report.bad_lines.append((self._line_number(offset), problem))

    def _count_unknown(self, offset: int, kind: str) -> None:
        report = self.report
        if offset <= report.counted_to:
            return
        report.counted_to = offset
        report.unknown_count += 1
        kinds = report.unknown_kinds
        if kind in kinds or len(kinds) < UNKNOWN_KINDS_NAMED:
            kinds[kind] = kinds.get(kind, 0) + 1

    def _line_number(self, offset: int) -> int:
        """The 1-based number of the line that starts at ``offset`` (counted only for the
        few lines a warning names)."""
        known = self._line_numbers
        before = max((at for at in known if at <= offset), default=0)
        number = known.get(before, 1)
        try:
            with _open_binary(self.path) as stream:
                stream.seek(before)
                remaining = offset - before
                while remaining > 0:
                    chunk = stream.read(min(remaining, 1 << 20))
                    if not chunk:
                        break
                    number += chunk.count(b"\n")
                    remaining -= len(chunk)
        except (EOFError, zlib.error, OSError):
            pass
        known[offset] = number
        return number

    # --- events -----------------------------------------------------------------

    def events(self, offset: int = 0, keyframes: bool = False) -> Iterator[Event]:
        """Events from a line offset (0: from the header on), to the end of the file.

        Keyframe lines are skipped unread unless ``keyframes``: they are not events
        of the session but restore points, and a reader that goes on from where it
        is has no use for them (``qtop.record.seek`` starts from one).
        """
        unpacker = self.unpacker_at(offset)
        decode = self._decode
        for position, data in self._lines(offset):
            found = decode(unpacker, position, data, keyframes)
            if type(found) is list:
                yield from found
            else:
                yield from found.events()  # type: ignore[union-attr]

    def events_with_offsets(
        self, offset: int = 0, keyframes: bool = False
    ) -> Iterator[tuple[int, Event]]:
        """Like ``events`` but with the byte offset of each event's line."""
        unpacker = self.unpacker_at(offset)
        for position, data in self._lines(offset):
            found = self._decode(unpacker, position, data, keyframes)
            for event in found if isinstance(found, list) else found.events():
                yield position, event

    def items(self, offset: int = 0) -> Iterator[Event | IterationRun | LogRun]:
        """The events from ``offset`` on, with packed runs kept whole, keyframes skipped.

        For a reader that folds everything (``report``): a run of 20 iterations
        costs one object instead of twenty.
        """
        unpacker = self.unpacker_at(offset)
        decode = self._decode
        for position, data in self._lines(offset):
            found = decode(unpacker, position, data, False)
            if type(found) is list:
                yield from found
            else:
                yield found  # type: ignore[misc]

    def _decode(
        self, unpacker: LineUnpacker, offset: int, data: bytes, keyframes: bool
    ) -> list[Event] | IterationRun | LogRun:
        head = data[9:14]
        if head == b"keyfr":
            if not keyframes:
                return []
            try:
                return [self.keyframe_at(offset, data)]
            except (LineError, KeyframeError, EventDecodeError) as exc:
                self._count_bad(offset, f"keyframe: {exc}")
                return []
        if head == b"index":
            return []
        try:
            found = unpacker.items(unpacker.parse(data))
        except UnknownKind as exc:
            self._count_unknown(offset, exc.kind or "?")
            return []
        except LineError as exc:
            self._count_bad(offset, str(exc))
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
        # A state read here from its line is this chain's own to change; the cached one
        # is shared, and patched by copying.
        apply = keyframes.patch_owned
        while current.state is None:
            base = current.base
            if base is None or not 0 < base < at:
                raise KeyframeError(f"the keyframe at byte {at} has no earlier base")
            patches.append(current.patch)
            if cache is not None and cache[0] == base:
                state, apply = cache[1], keyframes.patch
                break
            at, current = base, self._keyframe_line(base)
        else:
            state = current.state
        for node in reversed(patches):
            state = apply(state, node)
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
        # Here, not at the top: reading a finished file (report, export) needs no event loop.
        import asyncio

        if self.compressed:
            raise UsageError(f"{self.path}: a compressed recording cannot be followed")
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
                    found = self._decode(unpacker, line.offset, line.data, keyframes)
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
    except (OSError, EOFError, zlib.error) as exc:
        raise UsageError(f"{path}: cannot read: {_reason(exc)}") from None
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
    except RecursionError:
        raise UsageError(
            f"{path}: the recording's header line is damaged (nested thousands of levels deep)",
            "the header says what the rest of the file is: without it nothing can be read",
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

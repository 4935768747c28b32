"""Crash-safe recording writer: append-only JSON Lines, created 0600.

Lines are appended with whole-line ``write`` calls, so a process killed at any
moment leaves whole lines behind (the page cache keeps them); ``fsync`` runs
about once a second so a power cut loses at most that much. A disk that fills
up raises ``RecordingError`` instead of silently dropping events, and nothing
already written is touched.

Runs of iterations and of output lines are written as one line each
(``qtop.record.lines``), so the writer holds events briefly: until a burst of
iterations ends, and never longer than ``HOLD_S``. Holding a process's output
until its iterations arrive is also how the writer knows a process failed and
keeps its output whole. A killed qtop loses what it held (at most ``HOLD_S``).

The writer also places keyframes (``keyframe_due``, ``write_keyframe``) and,
on close, appends the index line (``qtop.record.index``).
"""

from __future__ import annotations

import errno
import os
import time
from collections import deque
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from qtop.errors import RunFailed, UsageError
from qtop.events import (
    RECORDING_FORMAT,
    RECORDING_VERSION,
    End,
    Event,
    Header,
    Iteration,
    Keyframe,
    Log,
    ProfileReport,
    replace,
)
from qtop.record import keyframes
from qtop.record.index import MARK_KINDS, Mark, RecordingIndex, mark_label
from qtop.record.lines import LinePacker, dumps
from qtop.stats.model import LOG_LINES_KEPT, SessionModel

FSYNC_INTERVAL_S = 1.0
HOLD_S = 0.25
HOLD_EVENTS = 4096
# Keyframes: one every KEYFRAME_EVERY_EVENTS events, or every KEYFRAME_EVERY_S of
# device time once KEYFRAME_MIN_EVENTS have passed, so a seek replays at most a
# few thousand events; at most KEYFRAME_SHARE of the file, counted over the
# whole recording; a whole state at least every KEYFRAME_CHAIN keyframes (the
# others are patches on the one before), so a seek reads a short chain.
KEYFRAME_EVERY_EVENTS = 6000
KEYFRAME_EVERY_S = 10.0
KEYFRAME_MIN_EVENTS = 500
KEYFRAME_SHARE = 0.25
KEYFRAME_CHAIN = 48
REPORTS_REMEMBERED = 64


class RecordingError(RunFailed):
    """The recording could not be written; the message says where and why."""


def encode_line(event: Event) -> bytes:
    """One event as one line of the recording, in its unpacked form."""
    return dumps(event.to_dict())


class RecordingWriter:
    """Appends events to a new recording file."""

    def __init__(self, path: str | os.PathLike[str], header: Header) -> None:
        self.path = Path(path)
        if (header.format, header.version) != (RECORDING_FORMAT, RECORDING_VERSION):
            # The header names the format this file is written in, whatever it was given.
            header = replace(header, format=RECORDING_FORMAT, version=RECORDING_VERSION)
        self.header = header
        self.bytes_written = 0
        self.events_written = 0
        self.index = RecordingIndex()
        self._closed = False
        self._last_fsync = time.monotonic()
        self._dirty = False
        self._packer = LinePacker()
        self._held: list[Event] = []
        self._held_since = 0.0
        self._reports: dict[int, tuple[ProfileReport, int]] = {}
        self._log_lines: deque[tuple[int, Sequence[Log]]] = deque()
        self._logs_remembered = 0
        self._events_since_keyframe = 0
        self._keyframe_t: float | None = None
        self._keyframe_bytes = 0
        self._last_patch_size = 0
        self._last_keyframe: tuple[int, dict[str, Any]] | None = None
        self._chain = 0
        self._last_whole_size = 0
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._fd = os.open(
                self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | os.O_CLOEXEC, 0o600
            )
        except FileExistsError:
            raise UsageError(
                f"{self.path}: a recording with this name already exists",
                "choose another --record path; qtop never overwrites a recording",
            ) from None
        except OSError as exc:
            raise UsageError(f"{self.path}: cannot create the recording: {exc.strerror}") from None
        # The umask may have widened nothing, but an inherited ACL or a filesystem
        # default can; recordings hold device names and paths, so insist on 0600.
        os.fchmod(self._fd, 0o600)
        self.write(header)
        self.flush()

    # --- events -------------------------------------------------------------

    def write(self, event: Event) -> None:
        """Add one event; it reaches the file at once or within ``HOLD_S``."""
        if self._closed:
            raise RecordingError(f"{self.path}: the recording is already closed")
        if isinstance(event, Keyframe):
            raise RecordingError("keyframes are written with write_keyframe(model)")
        packable = isinstance(event, Iteration) or (
            isinstance(event, Log) and event.stream == "stdout"
        )
        if (
            self._held
            and isinstance(self._held[-1], Iteration)
            and not isinstance(event, Iteration)
        ):
            # A burst of iterations ends a process: what was held is complete.
            self.flush()
        held = self._held
        if not held and not packable:
            self._write_lines([event])
        else:
            if not held:
                self._held_since = time.monotonic()
            held.append(event)
            if len(held) >= HOLD_EVENTS:
                self.flush()
        self._events_since_keyframe += 1
        self.flush_if_due()

    def flush_if_due(self, now: float | None = None) -> None:
        """Write what is held once it has waited ``HOLD_S``; call it from a timer too."""
        if self._held and (time.monotonic() if now is None else now) - self._held_since >= HOLD_S:
            self.flush()

    def flush(self) -> None:
        """Write everything held now."""
        if self._held:
            held, self._held = self._held, []
            self._write_lines(held)

    def _write_lines(self, events: list[Event]) -> None:
        failed = any(isinstance(e, Iteration) and e.exit_status != 0 for e in events)
        try:
            lines = self._packer.lines(events, literal_logs=failed)
        except ValueError as exc:
            raise RecordingError(
                f"{self.path}: an event could not be recorded ({exc}); the recording stops here",
                "this is a bug in qtop: please report it with the session's log",
            ) from None
        offset = self.bytes_written
        index = self.index
        for line in lines:
            if line.kind == "text":
                index.texts.append(offset)
            elif line.kind == "channels":
                index.channels.append(offset)
            elif line.kind in ("log", "logs"):
                self._remember_logs(offset, line.events)  # type: ignore[arg-type]
            elif line.kind == "profile_report":
                self._remember_report(line.events[0], offset)  # type: ignore[arg-type]
            elif line.kind in MARK_KINDS:
                event = line.events[0]
                if event.t is not None:
                    label = mark_label(event.kind, event.to_dict())
                    index.marks.append(Mark(event.t, event.kind, label, offset))
            offset += len(line.data)
        for event in events:
            if event.t is not None:
                index.note_time(event.t)
        index.lines += len(lines)
        self._write_bytes(b"".join(line.data for line in lines))
        self.events_written += len(events)

    def _remember_logs(self, offset: int, logs: Sequence[Log]) -> None:
        """Keep the lines that hold the last LOG_LINES_KEPT log events (a keyframe names them)."""
        self._log_lines.append((offset, logs))
        self._logs_remembered += len(logs)
        while self._logs_remembered - len(self._log_lines[0][1]) >= LOG_LINES_KEPT:
            self._logs_remembered -= len(self._log_lines.popleft()[1])

    def _logs_reference(self, model: SessionModel) -> dict[str, Any] | None:
        """The model's recent logs as the lines that hold them, if it holds exactly those."""
        wanted = model.logs
        if not wanted or self._logs_remembered < len(wanted):
            return None
        written = [log for _, logs in self._log_lines for log in logs]
        skip = len(written) - len(wanted)
        if any(a is not b for a, b in zip(written[skip:], wanted, strict=True)):
            return None
        return {"lines": [offset for offset, _ in self._log_lines], "skip": skip, "n": len(wanted)}

    def _remember_report(self, report: ProfileReport, offset: int) -> None:
        self._reports[id(report)] = (report, offset)
        if len(self._reports) > REPORTS_REMEMBERED:
            del self._reports[next(iter(self._reports))]

    # --- keyframes -----------------------------------------------------------

    def keyframe_due(self, t: float | None) -> bool:
        """Whether a keyframe at device time ``t`` is due (see the KEYFRAME_* constants)."""
        events = self._events_since_keyframe
        if t is None or events < KEYFRAME_MIN_EVENTS:
            return False
        # The next keyframe must keep the share: expect it to cost what the last one of
        # its sort (a patch, or a whole state when the chain is full) did.
        if self._chain < KEYFRAME_CHAIN and self._last_patch_size:
            cost = self._last_patch_size
        else:
            cost = self._last_whole_size
        if self._keyframe_bytes + cost > KEYFRAME_SHARE * (self.bytes_written + cost):
            return False
        if events >= KEYFRAME_EVERY_EVENTS:
            return True
        since = self._keyframe_t if self._keyframe_t is not None else self.index.t_start
        return since is not None and t - since >= KEYFRAME_EVERY_S

    def write_keyframe(self, model: SessionModel) -> None:
        """A keyframe of ``model`` (whose state includes every event written so far)."""
        if self._closed:
            raise RecordingError(f"{self.path}: the recording is already closed")
        self.flush()
        t = model.t_last
        state = keyframes.compact_state(model.snapshot(), self._references(model))
        try:
            line, whole = self._keyframe_line(t, state)
        except ValueError:
            # A statistic overflowed to infinity (absurd values): JSON cannot carry it. The
            # file stays whole without this keyframe; seeks start from the one before.
            self._events_since_keyframe = 0
            self._keyframe_t = t
            return
        if whole:
            self._chain = 0
            self._last_whole_size = len(line)
        else:
            self._chain += 1
            self._last_patch_size = len(line)
        offset = self.bytes_written
        self._write_bytes(line)
        self._last_keyframe = (offset, state)
        self._keyframe_bytes += len(line)
        self._events_since_keyframe = 0
        self._keyframe_t = t
        self.index.lines += 1
        if t is not None:
            self.index.keyframes.append((t, offset))

    def _keyframe_line(self, t: float | None, state: dict[str, Any]) -> tuple[bytes, bool]:
        """The keyframe line (a patch when that is smaller) and whether it is whole."""
        if self._last_keyframe is not None and self._chain < KEYFRAME_CHAIN:
            base, previous = self._last_keyframe
            patch = keyframes.diff(previous, state)
            line = dumps({"kind": "keyframe", "t": t, "base": base, "patch": patch})
            if len(line) <= self._last_whole_size:
                return line, False
        return dumps({"kind": "keyframe", "t": t, "state": state}), True

    def _references(self, model: SessionModel) -> dict[str, Any]:
        references: dict[str, Any] = {}
        if model.header is not None and model.header == self.header:
            references["header"] = 0
        offsets = {}
        for key, report in model.profile_reports.items():
            known = self._reports.get(id(report))
            if known is not None and known[0] is report:
                offsets[key] = known[1]
        references["profile_reports"] = offsets
        references["logs"] = self._logs_reference(model)
        return references

    # --- the file -------------------------------------------------------------

    def _write_bytes(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            try:
                written = os.write(self._fd, view)
            except InterruptedError:
                continue
            except OSError as exc:
                if exc.errno == errno.ENOSPC:
                    raise RecordingError(
                        f"{self.path}: the disk is full; the recording stops here "
                        f"({self.events_written} events kept)",
                        "free some space; the device run is not affected",
                    ) from None
                raise RecordingError(f"{self.path}: write failed: {exc.strerror}") from None
            view = view[written:]
            self.bytes_written += written
        self._dirty = True
        self.sync_if_due()

    def sync_if_due(self, now: float | None = None) -> None:
        """fsync when a second has passed since the last one; call it from a timer too."""
        now = time.monotonic() if now is None else now
        if self._dirty and now - self._last_fsync >= FSYNC_INTERVAL_S:
            self.sync()

    def sync(self) -> None:
        """Write what is held and make everything written durable."""
        if self._closed:
            return
        self.flush()
        try:
            os.fsync(self._fd)
        except OSError as exc:
            raise RecordingError(f"{self.path}: fsync failed: {exc.strerror}") from None
        self._dirty = False
        self._last_fsync = time.monotonic()

    def close(self, end: End | None = None) -> None:
        """Write what is held, the end line (when given) and the index; sync and close.

        Safe to call twice; after a write error it closes without the index.
        """
        if self._closed:
            return
        try:
            if end is not None:
                self.write(end)
            self.flush()
            self._write_bytes(dumps(self.index.to_line(self.bytes_written)))
            self.sync()
        finally:
            self._closed = True
            os.close(self._fd)

    def abandon(self) -> None:
        """Close after an error without writing anything more."""
        if not self._closed:
            self._closed = True
            os.close(self._fd)

    @property
    def closed(self) -> bool:
        return self._closed

    def __enter__(self) -> RecordingWriter:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

"""Crash-safe recording writer: append-only JSON Lines, created 0600.

Each event is written with its own ``write`` system call as one complete line,
so a process killed at any moment leaves whole lines behind (the page cache
keeps them); ``fsync`` runs about once a second so a power cut loses at most
that much. A disk that fills up raises ``RecordingError`` instead of silently
dropping events, and nothing already written is touched.
"""

from __future__ import annotations

import errno
import json
import os
import time
from pathlib import Path
from typing import Any

from qtop.errors import RunFailed, UsageError
from qtop.events import End, Event, Header

FSYNC_INTERVAL_S = 1.0


class RecordingError(RunFailed):
    """The recording could not be written; the message says where and why."""


def encode_line(event: Event) -> bytes:
    """One event as one line of the recording."""
    return (
        json.dumps(event.to_dict(), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        + "\n"
    ).encode("utf-8")


class RecordingWriter:
    """Appends events to a new recording file."""

    def __init__(self, path: str | os.PathLike[str], header: Header) -> None:
        self.path = Path(path)
        self.bytes_written = 0
        self.events_written = 0
        self._closed = False
        self._last_fsync = time.monotonic()
        self._dirty = False
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

    def write(self, event: Event) -> None:
        if self._closed:
            raise RecordingError(f"{self.path}: the recording is already closed")
        self._write_bytes(encode_line(event))
        self.events_written += 1

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
        if self._closed:
            return
        try:
            os.fsync(self._fd)
        except OSError as exc:
            raise RecordingError(f"{self.path}: fsync failed: {exc.strerror}") from None
        self._dirty = False
        self._last_fsync = time.monotonic()

    def close(self, end: End | None = None) -> None:
        """Write the end line (when given), sync and close. Safe to call twice."""
        if self._closed:
            return
        try:
            if end is not None:
                self.write(end)
            self.sync()
        finally:
            self._closed = True
            os.close(self._fd)

    @property
    def closed(self) -> bool:
        return self._closed

    def __enter__(self) -> RecordingWriter:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

"""Markers added while replaying a recording, kept next to it in ``FILE.markers``.

A recording is never changed once written (it may be a CI artifact, compressed,
or still being written by a live session), so a note added in ``qtop replay``
goes to a sidecar file named after the recording with ``.markers`` appended
(``run.jsonl`` -> ``run.jsonl.markers``; a glob for ``*.jsonl`` does not pick it
up). Its first line names the recording it belongs to; every further line is a
``marker`` event in the recording format. Replays of the recording show them.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from qtop.errors import UsageError
from qtop.events import EventDecodeError, Marker, event_from_dict

SIDECAR_FORMAT = "qtop-markers"
SIDECAR_VERSION = 1
SUFFIX = ".markers"
# A sidecar holds notes a person typed; anything this large is not one.
MAX_BYTES = 4 * 1024 * 1024


def sidecar_path(recording: Path) -> Path:
    return recording.with_name(recording.name + SUFFIX)


@dataclass(slots=True)
class SidecarMarkers:
    """The markers of one recording's sidecar, and what could not be read in it."""

    path: Path
    markers: list[Marker] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def read_markers(recording: Path, session_id: str) -> SidecarMarkers:
    """The markers saved for ``recording``; a missing sidecar is an empty one."""
    path = sidecar_path(recording)
    found = SidecarMarkers(path)
    try:
        if path.stat().st_size > MAX_BYTES:
            found.problems.append(f"{path}: larger than {MAX_BYTES // 2**20} MB, not read")
            return found
        lines = path.read_bytes().splitlines()
    except FileNotFoundError:
        return found
    except OSError as exc:
        found.problems.append(f"{path}: cannot read: {exc.strerror}")
        return found
    for number, raw in enumerate(lines, start=1):
        try:
            data = json.loads(raw)
        except ValueError:
            found.problems.append(f"{path}:{number}: not JSON, skipped")
            continue
        if number == 1:
            if not _belongs(data, session_id):
                found.problems.append(
                    f"{path}: written for another recording (session id differs), not shown"
                )
                return found
            continue
        try:
            event = event_from_dict(data)
        except EventDecodeError as exc:
            found.problems.append(f"{path}:{number}: {exc}, skipped")
            continue
        if isinstance(event, Marker) and event.t is not None:
            found.markers.append(event)
    return found


def _belongs(first: object, session_id: str) -> bool:
    return (
        isinstance(first, dict)
        and first.get("format") == SIDECAR_FORMAT
        and first.get("session_id") == session_id
    )


def save_marker(recording: Path, session_id: str, marker: Marker) -> Path:
    """Append ``marker`` to the recording's sidecar (created 0600 with its first line)."""
    path = sidecar_path(recording)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC | os.O_NOFOLLOW,
                     0o600)  # fmt: skip
    except OSError as exc:
        raise UsageError(
            f"{path}: cannot save the marker: {exc.strerror}",
            "markers of a replay are kept next to the recording; make its directory writable",
        ) from None
    try:
        lines = []
        if os.fstat(fd).st_size == 0:
            first = {"kind": "sidecar", "format": SIDECAR_FORMAT, "version": SIDECAR_VERSION,
                     "recording": recording.name, "session_id": session_id}  # fmt: skip
            lines.append(json.dumps(first, ensure_ascii=False, separators=(",", ":")))
        lines.append(json.dumps(marker.to_dict(), ensure_ascii=False, separators=(",", ":")))
        os.write(fd, ("\n".join(lines) + "\n").encode("utf-8"))
        os.fsync(fd)
    except OSError as exc:
        raise UsageError(f"{path}: cannot save the marker: {exc.strerror}") from None
    finally:
        os.close(fd)
    return path

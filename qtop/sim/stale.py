"""Scratch directories of a demo or simulator that was killed, found and removed.

``qtop demo`` and the simulated board make directories under the system's
temporary directory and ``/dev/shm`` and remove them when they close; a
process killed with SIGKILL never does. Each such directory names its owner
(pid and process start time) in an ``.owner`` file: at the next start, the
directories of this user whose owner is gone are removed. A directory
without that file, or of another user, is left alone.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import psutil

OWNER_FILE = ".owner"


def claim(directory: Path) -> None:
    """Record this process as the owner of ``directory``."""
    me = psutil.Process()
    (directory / OWNER_FILE).write_text(f"{me.pid} {me.create_time()!r}\n")


def _owner_alive(text: str) -> bool:
    try:
        pid_text, created_text = text.split()
        pid, created = int(pid_text), float(created_text)
    except ValueError:
        return True
    try:
        return abs(psutil.Process(pid).create_time() - created) < 0.01
    except psutil.NoSuchProcess:
        return False
    except psutil.Error:
        return True


def remove_stale(parent: Path, prefix: str) -> list[Path]:
    """Remove this user's ``parent/prefix*`` directories whose owner process is gone."""
    removed: list[Path] = []
    try:
        candidates = list(parent.glob(prefix + "*"))
    except OSError:
        return removed
    for directory in candidates:
        try:
            if directory.is_symlink() or directory.stat().st_uid != os.getuid():
                continue
            owner = (directory / OWNER_FILE).read_text()
        except OSError:
            continue
        if not _owner_alive(owner):
            shutil.rmtree(directory, ignore_errors=True)
            removed.append(directory)
    return removed

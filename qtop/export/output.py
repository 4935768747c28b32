"""Writing an export file the way the recorder writes a recording.

The file is written under a temporary name in the target's directory (created
exclusively, mode 0600 unless asked otherwise) and only then given its name, so
a reader never sees half a file and an interrupted export leaves nothing at the
target. Giving it its name never follows a symbolic link and never overwrites
anything unless ``force``:

* without ``force``, the name is taken with ``link``, which fails when anything
  (a file, a symbolic link, even a dangling one) already has it;
* with ``force``, ``rename`` replaces what has the name in one step; a symbolic
  link there is replaced itself, not the file it points to.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from qtop.errors import UsageError

DEFAULT_MODE = 0o600


def parse_mode(text: str) -> int:
    """An octal file mode such as ``644`` or ``0o640``; raises ValueError otherwise."""
    digits = text.lower().removeprefix("0o")
    if not digits or len(digits) > 4 or any(c not in "01234567" for c in digits):
        raise ValueError(f"{text!r} is not an octal file mode such as 600 or 644")
    mode = int(digits, 8)
    if mode & ~0o777:
        raise ValueError(f"{text!r}: only permission bits (at most 777) are accepted")
    return mode


def _check_target(target: Path, force: bool) -> None:
    try:
        found = os.lstat(target)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise UsageError(f"{target}: cannot check the output path: {exc.strerror}") from None
    if stat.S_ISDIR(found.st_mode):
        raise UsageError(f"{target}: is a directory", "give a file name with -o")
    if not force:
        what = "a symbolic link" if stat.S_ISLNK(found.st_mode) else "a file"
        raise UsageError(
            f"{target}: {what} with this name already exists; qtop export does not overwrite it",
            "choose another path with -o, or pass --force to replace it",
        )


def write_file(
    target: Path, write: Callable[[TextIO], int], *, force: bool, mode: int = DEFAULT_MODE
) -> int:
    """Run ``write`` on a new file that then becomes ``target``; returns what ``write`` did."""
    _check_target(target, force)
    folder = target.parent
    try:
        fd, temporary = tempfile.mkstemp(dir=folder, prefix=f".{target.name}.", suffix=".part")
    except OSError as exc:
        raise UsageError(
            f"{target}: cannot write in {folder}: {exc.strerror}", "choose a writable path with -o"
        ) from None
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as out:
            count = write(out)
            out.flush()
            os.fsync(out.fileno())
        _give_name(Path(temporary), target, force)
    except OSError as exc:
        raise UsageError(
            f"{target}: cannot write: {exc.strerror or exc}", "choose a writable path with -o"
        ) from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
    return count


def _give_name(temporary: Path, target: Path, force: bool) -> None:
    if force:
        os.replace(temporary, target)
        return
    try:
        os.link(temporary, target, follow_symlinks=False)
    except FileExistsError:
        _check_target(target, force=False)
        raise
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EMLINK):
            raise
        # A filesystem without hard links: take the name exclusively, then move the
        # file onto it (a symbolic link swapped in meanwhile is replaced, not followed).
        placeholder = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        os.close(placeholder)
        os.replace(temporary, target)

"""Read complete lines from a file that may still be growing.

Reads in chunks and hands out only lines that end in a newline, with the
offset where each one starts, so a reader can resume at an exact byte. A torn
last line is held back until it is finished (or reported by the caller when
the writer is known to be gone). Truncation (the file got shorter) and
rotation (the path now names another file) are detected and reported rather
than read as garbage.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

CHUNK_SIZE = 1 << 20


@dataclass(frozen=True, slots=True)
class LineAt:
    """A complete line (without its newline) and the byte offset where it starts."""

    offset: int
    data: bytes


class FileChanged(Exception):
    """The followed file was truncated or replaced by another file."""


class LineFollower:
    """Incremental reader of newline-terminated lines from one file."""

    def __init__(self, path: str | os.PathLike[str], offset: int = 0) -> None:
        self.path = Path(path)
        self._file: BinaryIO = open(self.path, "rb")  # noqa: SIM115 - owned until close()
        self._identity = self._stat_identity(os.fstat(self._file.fileno()))
        self._file.seek(offset)
        self.offset = offset
        self._partial = b""

    @staticmethod
    def _stat_identity(stat: os.stat_result) -> tuple[int, int]:
        return (stat.st_dev, stat.st_ino)

    @property
    def pending(self) -> bytes:
        """Bytes after the last newline: a line still being written, or a torn one."""
        return self._partial

    def read_lines(self) -> Iterator[LineAt]:
        """Every complete line available now; raises FileChanged on truncation or rotation."""
        self._check_unchanged()
        while True:
            chunk = self._file.read(CHUNK_SIZE)
            if not chunk:
                return
            data = self._partial + chunk
            start = 0
            line_offset = self.offset
            while True:
                newline = data.find(b"\n", start)
                if newline < 0:
                    break
                yield LineAt(line_offset, data[start:newline])
                line_offset += newline + 1 - start
                start = newline + 1
            self.offset = line_offset
            self._partial = data[start:]

    def _check_unchanged(self) -> None:
        try:
            stat = os.stat(self.path)
        except FileNotFoundError:
            raise FileChanged(f"{self.path} was removed") from None
        if self._stat_identity(stat) != self._identity:
            raise FileChanged(f"{self.path} now names another file (rotated or replaced)")
        if stat.st_size < self.offset + len(self._partial):
            raise FileChanged(
                f"{self.path} was truncated to {stat.st_size} bytes "
                f"(had read {self.offset + len(self._partial)})"
            )

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> LineFollower:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

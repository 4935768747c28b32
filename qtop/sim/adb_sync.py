"""The ``sync:`` service of a simulated device: what ``adb push``, ``pull`` and ``ls`` use.

Requests are ``STAT``, ``LIST``, ``SEND``, ``RECV`` (each followed by a path)
and ``QUIT``, as adb's SYNC.TXT describes (version 1, the one a device
without ``stat_v2``/``sendrecv_v2`` offers). Like adbd, ``SEND`` creates the
parent directories, writes the file as the data arrives (a transfer cut
short leaves a partial file behind) and answers ``OKAY`` only after
``DONE``; a failure is answered ``FAIL`` with adbd's message.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
import struct
from collections.abc import Awaitable, Callable
from pathlib import Path

from qtop.sim.adb_wire import (
    SYNC_DATA_MAX,
    ProtocolError,
    read_sync_header,
    sync_message,
)

# adbd refuses longer paths (its limit is 1024 bytes).
PATH_MAX = 1024
_STAT = struct.Struct("<III")
_U32 = 0xFFFFFFFF


def _stat_fields(path: str) -> tuple[int, int, int]:
    """mode, size, mtime as ``STAT`` v1 reports them (lstat; zeros when there is nothing)."""
    try:
        info = os.lstat(path)
    except OSError:
        return 0, 0, 0
    return info.st_mode & _U32, info.st_size & _U32, int(info.st_mtime) & _U32


def _fail(message: str) -> bytes:
    return b"FAIL" + struct.pack("<I", len(message.encode())) + message.encode()


class SyncSession:
    """One ``sync:`` connection: requests until ``QUIT`` or the connection ends."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        reachable: Callable[[], Awaitable[None]],
    ) -> None:
        self.reader = reader
        self.writer = writer
        self.reachable = reachable

    async def run(self) -> None:
        with contextlib.suppress(asyncio.IncompleteReadError, ConnectionError, ProtocolError):
            while True:
                kind, number = await read_sync_header(self.reader)
                await self.reachable()
                if kind == b"QUIT":
                    break
                if number > PATH_MAX:
                    raise ProtocolError(f"sync path of {number} bytes")
                path = (await self.reader.readexactly(number)).decode("utf-8", "surrogateescape")
                handler = {
                    b"STAT": self._stat,
                    b"LIST": self._list,
                    b"SEND": self._send,
                    b"RECV": self._recv,
                }.get(kind)
                if handler is None:
                    self.writer.write(_fail(f"unknown sync command {kind!r}"))
                    break
                await handler(path)
                await self.writer.drain()
        self.writer.close()

    async def _stat(self, path: str) -> None:
        self.writer.write(b"STAT" + _STAT.pack(*_stat_fields(path)))

    async def _list(self, path: str) -> None:
        with contextlib.suppress(OSError):
            for entry in sorted(os.listdir(path)):
                mode, size, mtime = _stat_fields(os.path.join(path, entry))
                name = entry.encode("utf-8", "surrogateescape")
                header = b"DENT" + _STAT.pack(mode, size, mtime) + struct.pack("<I", len(name))
                self.writer.write(header + name)
        self.writer.write(b"DONE" + _STAT.pack(0, 0, 0) + struct.pack("<I", 0))

    async def _send(self, spec: str) -> None:
        path, comma, mode_text = spec.rpartition(",")
        if not comma or not mode_text.isdigit():
            path, mode_text = spec, "420"
        mode = int(mode_text)
        error: str | None = None
        handle = None
        try:
            if stat.S_ISDIR(os.stat(path).st_mode):
                error = f"{path}: Is a directory"
        except FileNotFoundError:
            pass
        except OSError as exc:
            error = f"{path}: {exc.strerror}"
        if error is None:
            try:
                Path(path).parent.mkdir(parents=True, exist_ok=True)
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(path)
                handle = open(path, "wb")  # noqa: SIM115 - written as the data arrives
            except OSError as exc:
                error = f"couldn't create file: {exc.strerror}"
        mtime = 0
        try:
            while True:
                kind, number = await read_sync_header(self.reader)
                if kind == b"DATA":
                    if number > SYNC_DATA_MAX:
                        raise ProtocolError(f"sync DATA of {number} bytes")
                    data = await self.reader.readexactly(number)
                    await self.reachable()
                    if handle is not None and error is None:
                        try:
                            handle.write(data)
                        except OSError as exc:
                            error = f"write failed: {exc.strerror}"
                elif kind == b"DONE":
                    mtime = number
                    break
                else:
                    raise ProtocolError(f"unexpected {kind!r} during SEND")
        finally:
            if handle is not None:
                handle.close()
        if error is None:
            with contextlib.suppress(OSError):
                os.chmod(path, stat.S_IMODE(mode))
                os.utime(path, (mtime, mtime))
            self.writer.write(b"OKAY" + struct.pack("<I", 0))
        else:
            self.writer.write(_fail(error))

    async def _recv(self, path: str) -> None:
        try:
            with open(path, "rb") as handle:
                while chunk := handle.read(SYNC_DATA_MAX):
                    await self.reachable()
                    self.writer.write(sync_message(b"DATA", len(chunk), chunk))
                    await self.writer.drain()
        except OSError as exc:
            self.writer.write(_fail(f"{path}: {exc.strerror}"))
            return
        self.writer.write(sync_message(b"DONE"))

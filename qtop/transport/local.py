"""The same interface as SSH, against this machine (``qtop run --local``).

Commands run under ``/bin/sh -c`` exactly as the SSH server would run them,
so the device agent, the spool and the resume logic are the same code; the
link simply never drops.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket

from qtop.transport.base import CommandResult, LinkDown

SHELL = "/bin/sh"


class LocalStream:
    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self._process = process

    async def read(self, size: int = 65536) -> bytes:
        assert self._process.stdout is not None
        return await self._process.stdout.read(size)

    async def close(self) -> None:
        if self._process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self._process.terminate()
        # Reading stdout to its end lets asyncio close the pipe with the process.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._process.communicate(), timeout=2.0)
        if self._process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self._process.kill()
            await self._process.communicate()


class LocalTransport:
    """This machine."""

    kind = "local"

    def __init__(self, shell: str = SHELL) -> None:
        self.shell = shell
        self.description = f"local ({socket.gethostname()})"
        self._connected = False

    @property
    def connected(self) -> bool:
        return self._connected

    async def connect(self) -> None:
        self._connected = True

    async def run(
        self, command: str, stdin: bytes | None = None, timeout: float | None = None
    ) -> CommandResult:
        process = await asyncio.create_subprocess_exec(
            self.shell,
            "-c",
            command,
            stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            stdout, stderr = await asyncio.wait_for(process.communicate(stdin), timeout)
        except TimeoutError:
            process.kill()
            await process.wait()
            raise LinkDown(f"local command gave no answer within {timeout:g} s") from None
        assert process.returncode is not None
        return CommandResult(process.returncode, stdout, stderr)

    async def open_stream(self, command: str) -> LocalStream:
        process = await asyncio.create_subprocess_exec(
            self.shell,
            "-c",
            command,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
        return LocalStream(process)

    async def close(self) -> None:
        self._connected = False

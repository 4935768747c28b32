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
# How long a child whose output has ended is given to exit on its own.
EXITING_GRACE_S = 1.0


async def reap_process(process: asyncio.subprocess.Process) -> None:
    """Kill ``process`` if it still runs and wait for it, even while being cancelled.

    A process left unreaped keeps an asyncio transport that is closed only when
    the garbage collector finds it, possibly after its event loop is gone.
    """
    waiting = asyncio.ensure_future(process.wait())
    if process.returncode is None and process.stdout is not None and process.stdout.at_eof():
        # Its output ended, so it is exiting: let asyncio's child watcher reap it.
        # kill() polls the child first and would reap it under the watcher, which
        # then logs "Unknown child process" and reports status 255.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(waiting), EXITING_GRACE_S)
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
    while not waiting.done():
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.shield(waiting)
    # asyncio's Process has no public close: without this its transport stays
    # open until collected, and closing it then fails if the loop is gone.
    transport = getattr(process, "_transport", None)
    if transport is not None:
        transport.close()


async def spawn_exec(*argv: str, **options: object) -> asyncio.subprocess.Process:
    """Start ``argv``; a cancellation while starting still reaps the child.

    Cancelled in the middle of ``create_subprocess_exec``, asyncio may already
    have forked the child, and nobody would ever wait for it.
    """
    starting = asyncio.ensure_future(asyncio.create_subprocess_exec(*argv, **options))  # type: ignore[arg-type]
    try:
        return await asyncio.shield(starting)
    except asyncio.CancelledError:
        while not starting.done():
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(starting)
        if not starting.cancelled() and starting.exception() is None:
            await reap_process(starting.result())
        raise


async def _spawn(command: str, shell: str, **pipes: int) -> asyncio.subprocess.Process:
    return await spawn_exec(shell, "-c", command, **pipes)


class LocalStream:
    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self._process = process

    async def read(self, size: int = 65536) -> bytes:
        assert self._process.stdout is not None
        return await self._process.stdout.read(size)

    async def close(self) -> None:
        # A reader may still be waiting on stdout (a cancelled read not yet
        # unwound), so stdout is not drained here: the process is ended and its
        # transport closed, which ends that read too.
        if self._process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self._process.terminate()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._process.wait()), timeout=2.0)
        await reap_process(self._process)


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
        process = await _spawn(
            command,
            self.shell,
            stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            stdout, stderr = await asyncio.wait_for(process.communicate(stdin), timeout)
        except TimeoutError:
            await reap_process(process)
            raise LinkDown(f"local command gave no answer within {timeout:g} s") from None
        except asyncio.CancelledError:
            await reap_process(process)
            raise
        assert process.returncode is not None
        return CommandResult(process.returncode, stdout, stderr)

    async def open_stream(self, command: str) -> LocalStream:
        process = await _spawn(
            command,
            self.shell,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
        return LocalStream(process)

    async def close(self) -> None:
        self._connected = False

"""A ProxyCommand, run as ``ssh`` runs it: ``exec COMMAND`` in ``$SHELL -c``.

The command's stdin and stdout are one end of a socket pair that asyncssh speaks SSH
over. Its stderr goes to an unlinked temporary file, never to qtop's screen (and never
into the SSH stream, where asyncssh's own ProxyCommand support would put it); a failed
connection shows its last lines. When the connection closes, the command's process
group gets SIGHUP, as ``ssh`` sends it, and is killed if it outlives that.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import tempfile

import asyncssh

# Hang guard: a proxy ignoring SIGHUP gets SIGKILL after this long.
STOP_GRACE_S = 2.0

# Tasks that stop a proxy once its connection is closed; asyncio keeps only weak
# references to tasks.
_stoppers: set[asyncio.Task[None]] = set()


class ProxyCommand:
    """One ProxyCommand process, for one connection."""

    def __init__(self, command: str) -> None:
        self.command = command
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 -- lives as long as the proxy
        self._process: asyncio.subprocess.Process | None = None

    async def start(self) -> socket.socket:
        """Start the command; the returned socket is the SSH connection's end."""
        ours, theirs = socket.socketpair()
        shell = os.environ.get("SHELL") or "/bin/sh"
        try:
            self._process = await asyncio.create_subprocess_exec(
                shell,
                "-c",
                f"exec {self.command}",
                stdin=theirs.fileno(),
                stdout=theirs.fileno(),
                stderr=self._stderr,
                start_new_session=True,
            )
        except OSError:
            ours.close()
            raise
        finally:
            theirs.close()
        return ours

    def stderr(self) -> str:
        """The last lines the command wrote to stderr, made safe to print."""
        if self._stderr.closed:
            return ""
        self._stderr.seek(0)
        text = self._stderr.read()[-2000:].decode("utf-8", errors="replace")
        lines = [_printable(line) for line in text.splitlines() if line.strip()]
        return " / ".join(lines[-3:])

    def stop_with(self, connection: asyncssh.SSHClientConnection) -> asyncio.Task[None]:
        """Stop the command once ``connection`` is closed (the task that does it)."""

        async def stop_when_closed() -> None:
            await connection.wait_closed()
            await self.stop()

        task = asyncio.get_running_loop().create_task(stop_when_closed())
        _stoppers.add(task)
        task.add_done_callback(_stoppers.discard)
        return task

    async def stop(self) -> None:
        process = self._process
        try:
            if process is not None and process.returncode is None:
                self._signal(process.pid, signal.SIGHUP)
                try:
                    await asyncio.wait_for(process.wait(), STOP_GRACE_S)
                except TimeoutError:
                    self._signal(process.pid, signal.SIGKILL)
                    await process.wait()
        finally:
            if process is not None and process.returncode is None:
                self._signal(process.pid, signal.SIGKILL)
            self._stderr.close()

    @staticmethod
    def _signal(pid: int, signum: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signum)


def _printable(text: str) -> str:
    return "".join(char if char.isprintable() else "?" for char in text.strip())

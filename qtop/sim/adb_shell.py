"""One ``adb shell`` on a simulated device, run the way adbd runs it.

adbd forks, calls ``setsid`` and execs ``/system/bin/sh -c COMMAND`` (mksh on
Android) with stdin and stdout on one socket pair and, with shell protocol
v2, stderr on another. Output is relayed as packets until both output
streams end; the exit packet follows once the process has exited, carrying
its status (``0x80 | signal`` when it was killed). ``close-stdin`` shuts the
socket pair's write side. When the client's connection goes away, adbd sends
SIGHUP to the shell (only to it, not to its group) and closes the pipes:
what the shell started in a session of its own lives on.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from qtop.sim.adb_wire import (
    CLOSE_STDIN,
    EXIT,
    PACKET_DATA_MAX,
    STDERR,
    STDIN,
    STDOUT,
    ProtocolError,
    packet,
    read_packet,
)
from qtop.sim.sessions import device_signals, read_fd, wait_exit, write_fd


@dataclass(frozen=True, slots=True)
class ShellRequest:
    """A parsed ``shell[,ARG...]:COMMAND`` or ``exec:COMMAND`` service."""

    command: str
    protocol_v2: bool
    pty: bool
    term: str | None


def parse_shell_service(service: str) -> ShellRequest | None:
    """The request a service names, or None when it is no shell service."""
    head, colon, command = service.partition(":")
    if not colon:
        return None
    if head == "exec":
        return ShellRequest(command, protocol_v2=False, pty=False, term=None)
    name, *args = head.split(",")
    if name != "shell":
        return None
    v2 = "v2" in args
    term = next((arg.partition("=")[2] for arg in args if arg.startswith("TERM=")), None)
    # Without v2 adbd always gives a pty; with it, unless the client asked for raw.
    pty = not v2 or "raw" not in args
    return ShellRequest(command, protocol_v2=v2, pty=pty, term=term)


def exit_code(returncode: int) -> int:
    """A Popen return code as adbd reports it in the exit packet."""
    if returncode < 0:
        return 0x80 | (-returncode & 0x7F)
    return returncode & 0xFF


def _close(fd: int | None) -> None:
    if fd is not None:
        with contextlib.suppress(OSError):
            os.close(fd)


class ShellSession:
    """Runs one shell request and relays it until the process and the connection are done."""

    def __init__(
        self,
        request: ShellRequest,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        shell: str,
        env: Mapping[str, str],
        cwd: str,
        reachable: Callable[[], Awaitable[None]],
        on_orphan: Callable[[subprocess.Popen[bytes]], None],
    ) -> None:
        self.request = request
        self.reader = reader
        self.writer = writer
        self.shell = shell
        self.env = dict(env)
        self.cwd = cwd
        # Waits while the device's link is frozen (a silent drop): nothing moves.
        self.reachable = reachable
        self.on_orphan = on_orphan
        self.popen: subprocess.Popen[bytes] | None = None
        self._inout: socket.socket | None = None
        self._err_fd: int | None = None

    def _spawn(self) -> subprocess.Popen[bytes]:
        request = self.request
        if request.term:
            self.env["TERM"] = request.term
        argv = [self.shell, "-c", request.command] if request.command else [self.shell]
        ours, theirs = socket.socketpair()
        err_ours: socket.socket | None = None
        err_theirs: socket.socket | None = None
        if request.protocol_v2 and not request.pty:
            err_ours, err_theirs = socket.socketpair()
        try:
            popen = subprocess.Popen(
                argv,
                stdin=theirs.fileno(),
                stdout=theirs.fileno(),
                stderr=(err_theirs or theirs).fileno(),
                cwd=self.cwd,
                env=self.env,
                start_new_session=True,
                # adbd ignores SIGPIPE and resets it for the child; Python does the same.
                restore_signals=True,
                preexec_fn=device_signals,
            )
        finally:
            theirs.close()
            if err_theirs is not None:
                err_theirs.close()
        ours.setblocking(False)
        self._inout = ours
        if err_ours is not None:
            self._err_fd = os.dup(err_ours.fileno())
            os.set_blocking(self._err_fd, False)
            err_ours.close()
        return popen

    async def run(self) -> None:
        try:
            self.popen = self._spawn()
        except OSError as exc:
            message = f"error: exec '{self.shell}' failed: {exc.strerror}\n".encode()
            await self._send_error(message)
            return
        assert self._inout is not None
        outputs = [asyncio.ensure_future(self._pump_out(self._inout.fileno(), STDOUT))]
        if self._err_fd is not None:
            outputs.append(asyncio.ensure_future(self._pump_out(self._err_fd, STDERR)))
        feeder = asyncio.ensure_future(self._pump_in())
        exited = asyncio.ensure_future(wait_exit(self.popen))
        drained = asyncio.ensure_future(asyncio.gather(*outputs, exited))
        try:
            waiting: set[asyncio.Future[Any]] = {drained, feeder}
            await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
        finally:
            # The feeder ends only when the client is gone (or broke the protocol).
            completed = drained.done() and not drained.cancelled() and not drained.exception()
            tasks: list[asyncio.Future[Any]] = [feeder, drained, *outputs]
            for task in tasks:
                task.cancel()
            await asyncio.gather(feeder, drained, *outputs, return_exceptions=True)
        if not completed:
            self._client_gone(exited)
            return
        self._close_fds()
        status = exit_code(exited.result())
        if self.request.protocol_v2:
            with contextlib.suppress(ConnectionError, RuntimeError):
                await self.reachable()
                self.writer.write(packet(EXIT, bytes([status])))
                await self.writer.drain()
        self.writer.close()

    async def _send_error(self, message: bytes) -> None:
        # adbd's ReportError: the message on stderr, then exit status 126.
        with contextlib.suppress(ConnectionError, RuntimeError):
            if self.request.protocol_v2:
                self.writer.write(packet(STDERR, message) + packet(EXIT, bytes([126])))
            else:
                self.writer.write(message)
            await self.writer.drain()
        self.writer.close()

    def _client_gone(self, exited: asyncio.Future[int]) -> None:
        """The connection died: SIGHUP the shell, drop the pipes, let the process be."""
        self._close_fds()
        self.writer.close()
        popen = self.popen
        if popen is None or popen.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(popen.pid, signal.SIGHUP)
        exited.cancel()
        self.on_orphan(popen)

    def _close_fds(self) -> None:
        if self._inout is not None:
            self._inout.close()
            self._inout = None
        _close(self._err_fd)
        self._err_fd = None

    async def _pump_out(self, fd: int, kind: int) -> None:
        while True:
            data = await read_fd(fd)
            if not data:
                return
            await self.reachable()
            if self.request.protocol_v2:
                for start in range(0, len(data), PACKET_DATA_MAX):
                    self.writer.write(packet(kind, data[start : start + PACKET_DATA_MAX]))
            else:
                self.writer.write(data)
            await self.writer.drain()

    async def _pump_in(self) -> None:
        """Client -> process, until the client is gone (or breaks the protocol)."""
        with contextlib.suppress(asyncio.IncompleteReadError, ConnectionError, ProtocolError):
            while True:
                if self.request.protocol_v2:
                    kind, data = await read_packet(self.reader)
                else:
                    kind, data = STDIN, await self.reader.read(65536)
                    if not data:
                        return
                await self.reachable()
                if kind == STDIN and data and self._inout is not None:
                    await write_fd(self._inout.fileno(), data)
                elif kind == CLOSE_STDIN and not self.request.pty and self._inout is not None:
                    with contextlib.suppress(OSError):
                        self._inout.shutdown(socket.SHUT_WR)

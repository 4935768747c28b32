"""One SSH session on the simulated board: a real ``/bin/sh`` wired to the channel.

Behaves as OpenSSH's sshd does for the cases qtop meets: the command runs in
its own session (``setsid``), stdin EOF closes the shell's stdin, the exit
status (or exit signal) is sent once the process has exited and its stdout
and stderr have reached EOF, and when the channel or the connection goes
away the pipes are closed but the process is not killed: it keeps running,
as on a real board, and gets EPIPE/SIGPIPE only if it writes.

Pipes are relayed with ``add_reader`` on raw non-blocking descriptors and
the exit is watched with a pidfd, so no thread or asyncio subprocess
transport outlives the session.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import signal
import struct
import subprocess
import termios
from collections.abc import Callable, Mapping
from typing import Any

import asyncssh

_CHUNK = 65536


async def _readable(fd: int) -> None:
    loop = asyncio.get_running_loop()
    ready = loop.create_future()

    def wake() -> None:
        if not ready.done():
            ready.set_result(None)

    loop.add_reader(fd, wake)
    try:
        await ready
    finally:
        loop.remove_reader(fd)


async def _writable(fd: int) -> None:
    loop = asyncio.get_running_loop()
    ready = loop.create_future()

    def wake() -> None:
        if not ready.done():
            ready.set_result(None)

    loop.add_writer(fd, wake)
    try:
        await ready
    finally:
        loop.remove_writer(fd)


async def read_fd(fd: int) -> bytes:
    """The next chunk from a non-blocking descriptor; b'' at EOF (or EIO from a closed pty)."""
    while True:
        try:
            return os.read(fd, _CHUNK)
        except BlockingIOError:
            await _readable(fd)
        except OSError:
            return b""


async def write_fd(fd: int, data: bytes) -> bool:
    """Write everything; False when the reader has gone (EPIPE)."""
    view = memoryview(data)
    while view:
        try:
            written = os.write(fd, view)
        except BlockingIOError:
            await _writable(fd)
            continue
        except OSError:
            return False
        view = view[written:]
    return True


async def wait_exit(process: subprocess.Popen[bytes]) -> int:
    """The process's return code, waiting on a pidfd (negative: killed by that signal)."""
    try:
        pidfd = os.pidfd_open(process.pid)
    except (OSError, AttributeError):
        while process.poll() is None:
            await asyncio.sleep(0.05)
        return process.returncode
    try:
        while process.poll() is None:
            await _readable(pidfd)
    finally:
        os.close(pidfd)
    return process.returncode


def _nonblocking(fd: int) -> int:
    os.set_blocking(fd, False)
    return fd


def _close(fd: int | None) -> None:
    if fd is not None:
        with contextlib.suppress(OSError):
            os.close(fd)


def _set_window(fd: int, size: tuple[int, int, int, int]) -> None:
    columns, rows, width, height = size
    if columns and rows:
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, width, height))


def device_signals() -> None:
    """In a board process before its exec: signals as a device's sshd or adbd leaves them.

    Whatever runs the simulator (nohup, a background job of a script) may ignore SIGHUP
    or SIGINT, and an ignored signal stays ignored across exec: the board's shells
    would then survive a hang-up and a command its SIGINT, as on no real device.
    """
    for number in (signal.SIGHUP, signal.SIGINT, signal.SIGQUIT):
        signal.signal(number, signal.SIG_DFL)


def _take_controlling_tty() -> None:
    device_signals()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class Session:
    """Runs one exec or shell request and relays it until the process and channel are done."""

    def __init__(
        self,
        process: asyncssh.SSHServerProcess[bytes],
        env: Mapping[str, str],
        cwd: str,
        on_orphan: Callable[[subprocess.Popen[bytes]], None],
    ) -> None:
        self.channel_process = process
        self.env = dict(env)
        self.cwd = cwd
        self.on_orphan = on_orphan
        self.popen: subprocess.Popen[bytes] | None = None
        self._stdin_fd: int | None = None
        self._stdout_fd: int | None = None
        self._stderr_fd: int | None = None
        self._pty = False

    def _spawn(self) -> subprocess.Popen[bytes]:
        process = self.channel_process
        command = process.command
        argv = ["/bin/sh", "-c", command] if command is not None else ["/bin/sh", "-i"]
        if process.get_terminal_type():
            self._pty = True
            master, slave = os.openpty()
            _set_window(master, process.get_terminal_size())
            self.env["TERM"] = process.get_terminal_type() or "xterm"
            try:
                popen = subprocess.Popen(
                    argv,
                    stdin=slave,
                    stdout=slave,
                    stderr=slave,
                    cwd=self.cwd,
                    env=self.env,
                    start_new_session=True,
                    preexec_fn=_take_controlling_tty,
                )
            finally:
                os.close(slave)
            self._stdin_fd = self._stdout_fd = _nonblocking(master)
            return popen
        popen = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=self.cwd,
            env=self.env,
            start_new_session=True,
            preexec_fn=device_signals,
        )
        assert popen.stdin and popen.stdout and popen.stderr
        # Detach the descriptors from the Popen file objects: we own and close them.
        self._stdin_fd = _nonblocking(os.dup(popen.stdin.fileno()))
        self._stdout_fd = _nonblocking(os.dup(popen.stdout.fileno()))
        self._stderr_fd = _nonblocking(os.dup(popen.stderr.fileno()))
        for stream in (popen.stdin, popen.stdout, popen.stderr):
            stream.close()
        return popen

    async def run(self) -> None:
        process = self.channel_process
        if process.subsystem is not None:
            process.stderr.write(f"subsystem {process.subsystem} is not available\n".encode())
            process.exit(1)
            return
        try:
            self.popen = self._spawn()
        except OSError as exc:
            process.stderr.write(f"sh: cannot start: {exc.strerror}\n".encode())
            process.exit(127)
            return
        pumps = [asyncio.ensure_future(self._pump_out(self._stdout_fd, process.stdout))]
        if self._stderr_fd is not None:
            pumps.append(asyncio.ensure_future(self._pump_out(self._stderr_fd, process.stderr)))
        feeder = asyncio.ensure_future(self._pump_in())
        exited = asyncio.ensure_future(wait_exit(self.popen))
        closed = asyncio.ensure_future(process.channel.wait_closed())
        finished = asyncio.ensure_future(asyncio.gather(*pumps, exited))
        completed = False
        try:
            waiting: set[asyncio.Future[Any]] = {finished, closed}
            await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
            completed = finished.done()
        finally:
            # Stop every reader and writer before closing descriptors they watch.
            tasks: list[asyncio.Future[Any]] = [feeder, closed, finished, *pumps]
            for task in tasks:
                task.cancel()
            await asyncio.gather(feeder, closed, finished, *pumps, return_exceptions=True)
        if not completed or process.is_closing():
            self._abandon(exited)
            return
        self._close_fds()
        status = exited.result()
        if status < 0:
            process.exit_with_signal(signal.Signals(-status).name.removeprefix("SIG"))
        else:
            process.exit(status)

    def _abandon(self, exited: asyncio.Future[int]) -> None:
        """The channel is gone: drop our ends of the pipes, let the process live on."""
        self._close_fds()
        if self.popen is not None and self.popen.poll() is None:
            exited.cancel()
            self.on_orphan(self.popen)

    def _close_fds(self) -> None:
        fds = {self._stdin_fd, self._stdout_fd, self._stderr_fd}
        self._stdin_fd = self._stdout_fd = self._stderr_fd = None
        for fd in fds:
            _close(fd)

    async def _pump_out(self, fd: int | None, writer: asyncssh.SSHWriter[bytes]) -> None:
        if fd is None:
            return
        while True:
            data = await read_fd(fd)
            if not data:
                return
            try:
                writer.write(data)
                await writer.drain()
            except (OSError, asyncssh.Error):
                return

    async def _pump_in(self) -> None:
        reader = self.channel_process.stdin
        while True:
            try:
                data = await reader.read(_CHUNK)
            except asyncssh.TerminalSizeChanged as change:
                if self._stdin_fd is not None:
                    _set_window(
                        self._stdin_fd,
                        (change.width, change.height, change.pixwidth, change.pixheight),
                    )
                continue
            except (asyncssh.SignalReceived, asyncssh.BreakReceived):
                # OpenSSH refuses signal requests for root logins; qtop must not rely on them.
                continue
            except (OSError, asyncssh.Error):
                return
            if not data:
                break
            if self._stdin_fd is None or not await write_fd(self._stdin_fd, data):
                return
        if not self._pty and self._stdin_fd is not None:
            _close(self._stdin_fd)
            self._stdin_fd = None

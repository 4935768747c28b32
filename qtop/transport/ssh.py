"""The device over SSH (asyncssh): where to connect, the connection, commands and streams.

The host name is resolved as OpenSSH resolves it (``ssh_config``), the route is
connected host by host with qtop's policy (``ssh_route``), host keys are always
checked (``ssh_hostkeys``).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import asyncssh

from qtop.errors import RunFailed, UsageError
from qtop.profiles import DeviceProfile
from qtop.transport.base import CommandResult, LinkDown
from qtop.transport.ssh_config import (
    PROFILE_JUMP_HOST,
    HostRequest,
    ResolvedHost,
    parse_jumps,
    resolve,
)
from qtop.transport.ssh_route import close_route, describe_error, open_route, route_reads
from qtop.transport.upload import UploadUnavailable


@dataclass(frozen=True, slots=True)
class SSHTarget:
    """Where and how to connect; profile values win over ~/.ssh/config.

    ``ssh_config`` lists the config files to read instead of ``~/.ssh/config`` and
    ``/etc/ssh/ssh_config`` (as ``ssh -F`` does); ``None`` reads those two.
    """

    host: str
    port: int | None = None
    user: str | None = None
    identity_file: str | None = None
    known_hosts: str | None = None
    jump_host: str | None = None
    connect_timeout_s: float = 10.0
    keepalive_interval_s: float = 2.0
    keepalive_count_max: int = 3
    accept_new_host_key: bool = False
    ssh_config: tuple[str, ...] | None = None

    @classmethod
    def from_profile(
        cls,
        device: DeviceProfile,
        host: str | None = None,
        accept_new_host_key: bool = False,
        ssh_config: tuple[str, ...] | None = None,
    ) -> SSHTarget:
        target_host = host or device.host
        if not target_host:
            raise UsageError(
                "the profile names no device host",
                "add 'device: {host: NAME}' to the profile, or pass --host NAME (or --local)",
            )
        return cls(
            host=target_host,
            port=device.port,
            user=device.user,
            identity_file=device.identity_file,
            known_hosts=device.known_hosts,
            jump_host=device.jump_host,
            connect_timeout_s=device.connect_timeout_s,
            keepalive_interval_s=device.keepalive_interval_s,
            keepalive_count_max=device.keepalive_count_max,
            accept_new_host_key=accept_new_host_key,
            ssh_config=ssh_config,
        )

    @property
    def name(self) -> str:
        who = f"{self.user}@" if self.user else ""
        where = f":{self.port}" if self.port else ""
        return f"{who}{self.host}{where}"


def resolve_target(target: SSHTarget) -> ResolvedHost:
    """The device and its route as ``ssh`` resolves ``target.host``; profile values win."""
    jumps = parse_jumps(target.jump_host, PROFILE_JUMP_HOST) if target.jump_host else None
    request = HostRequest(
        target.host,
        user=target.user,
        port=target.port,
        identity_file=target.identity_file,
        known_hosts=target.known_hosts,
        jumps=jumps,
        jumps_origin=PROFILE_JUMP_HOST if jumps is not None else "",
    )
    return resolve(request, target.ssh_config)


async def open_connection(target: SSHTarget, lost: asyncio.Event) -> asyncssh.SSHClientConnection:
    """The device's connection, through its jump hosts, every host checked with qtop's policy."""
    loop = asyncio.get_running_loop()
    device = await loop.run_in_executor(None, resolve_target, target)
    return await open_route(device, target, lost)


class SSHStream:
    """A remote command's stdout over one SSH channel."""

    def __init__(
        self,
        process: asyncssh.SSHClientProcess,
        lost: asyncio.Event,
        on_close: Sequence[Callable[[], None]] = (),
    ) -> None:
        self._process = process
        self._lost = lost
        self._on_close = on_close

    async def read(self, size: int = 65536) -> bytes:
        try:
            data = await self._process.stdout.read(size)
        except (OSError, asyncssh.Error) as exc:
            raise LinkDown(f"the stream broke: {describe_error(exc)}") from None
        if not data and self._lost.is_set():
            raise LinkDown("the connection was lost")
        return data

    async def close(self) -> None:
        for closed in self._on_close:
            closed()
        self._process.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._process.wait_closed(), timeout=2.0)


class SSHTransport:
    """The device over SSH."""

    kind = "ssh"

    def __init__(self, target: SSHTarget) -> None:
        self.target = target
        self.description = f"ssh {target.name}"
        self._connection: asyncssh.SSHClientConnection | None = None
        self._lost = asyncio.Event()

    @property
    def connected(self) -> bool:
        return self._connection is not None and not self._lost.is_set()

    async def connect(self) -> None:
        await self._drop()
        self._lost = asyncio.Event()
        self._connection = await open_connection(self.target, self._lost)

    def _live(self) -> asyncssh.SSHClientConnection:
        if self._connection is None or self._lost.is_set():
            raise LinkDown(f"{self.target.name}: not connected")
        return self._connection

    @contextlib.contextmanager
    def _awaiting(self, connection: asyncssh.SSHClientConnection) -> Iterator[None]:
        """While an answer is awaited, the route's sockets are held only briefly (``ssh_reads``)."""
        with contextlib.ExitStack() as stack:
            for reads in route_reads(connection):
                stack.enter_context(reads.awaiting())
            yield

    async def run(
        self, command: str, stdin: bytes | None = None, timeout: float | None = None
    ) -> CommandResult:
        connection = self._live()
        try:
            with self._awaiting(connection):
                result = await asyncio.wait_for(
                    connection.run(command, input=stdin, encoding=None, check=False), timeout
                )
        except TimeoutError:
            raise LinkDown(f"{self.target.name}: no answer within {timeout:g} s") from None
        except (OSError, asyncssh.Error) as exc:
            raise LinkDown(f"{self.target.name}: {describe_error(exc)}") from None
        if result.exit_status is None:
            raise LinkDown(f"{self.target.name}: the command ended without an exit status")
        return CommandResult(result.exit_status, _bytes(result.stdout), _bytes(result.stderr))

    async def open_stream(self, command: str) -> SSHStream:
        connection = self._live()
        try:
            with self._awaiting(connection):
                process = await connection.create_process(
                    command, encoding=None, stdin=asyncssh.DEVNULL
                )
        except (OSError, asyncssh.Error) as exc:
            raise LinkDown(f"{self.target.name}: {describe_error(exc)}") from None
        following = [reads.following() for reads in route_reads(connection)]
        return SSHStream(process, self._lost, following)

    async def upload(self, pairs: Sequence[tuple[Path, str]]) -> None:
        """Copy local files to device paths over SFTP; their directories must exist.

        ``UploadUnavailable`` when the server offers no SFTP subsystem.
        """
        connection = self._live()
        with self._awaiting(connection):
            await self._upload(connection, pairs)

    async def _upload(
        self, connection: asyncssh.SSHClientConnection, pairs: Sequence[tuple[Path, str]]
    ) -> None:
        try:
            sftp = await connection.start_sftp_client()
        except asyncssh.ChannelOpenError as exc:
            raise UploadUnavailable(f"{self.target.name}: no SFTP ({exc.reason})") from None
        except (OSError, asyncssh.Error) as exc:
            raise LinkDown(f"{self.target.name}: {exc}") from None
        remote = ""
        try:
            async with sftp:
                for local, remote in pairs:
                    await sftp.put(str(local), remote)
        except asyncssh.SFTPError as exc:
            if self._lost.is_set() or isinstance(exc, asyncssh.SFTPConnectionLost):
                raise LinkDown(f"{self.target.name}: the link dropped during SFTP") from None
            raise RunFailed(
                f"{self.target.name}: SFTP to {remote} failed: {exc.reason}",
                "check that the directory on the device is writable by the SSH user",
            ) from None
        except (OSError, asyncssh.Error) as exc:
            raise LinkDown(f"{self.target.name}: {exc}") from None

    def abort(self) -> None:
        """Cut the connection at once, as a dropped link would (fault injection)."""
        if self._connection is not None:
            self._connection.abort()

    async def _drop(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            await close_route(connection, abort=True)

    async def close(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            await close_route(connection)


def _bytes(data: object) -> bytes:
    if isinstance(data, bytes):
        return data
    if isinstance(data, str):
        return data.encode()
    return b""

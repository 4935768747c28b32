"""SSH to the device with asyncssh: ~/.ssh/config, keys, agent, jump hosts.

Host keys are always checked. An unknown key is refused with its fingerprint
and the exact line that would trust it (``--accept-new-host-key`` adds it); a
changed key is refused; a configuration that turns checking off
(``UserKnownHostsFile none``, which asyncssh takes as "accept any key") is
refused. Keepalives and a connect timeout are on (asyncssh has both off by
default), so a dead link is noticed within ``interval x count`` seconds. No
agent forwarding, whatever the config says.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import asyncssh

from qtop.errors import RunFailed, UsageError
from qtop.profiles import DeviceProfile
from qtop.transport.base import CommandResult, HostKeyRefused, LinkDown
from qtop.transport.upload import UploadUnavailable

DEFAULT_KNOWN_HOSTS = "~/.ssh/known_hosts"


@dataclass(frozen=True, slots=True)
class SSHTarget:
    """Where and how to connect; profile values win over ~/.ssh/config."""

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


class _Client(asyncssh.SSHClient):
    """Sees the host key the server presents, so a refusal can show it."""

    def __init__(self, policy: _HostKeyPolicy, lost: asyncio.Event) -> None:
        self._policy = policy
        self._lost = lost

    def validate_host_public_key(
        self, host: str, addr: str, port: int, key: asyncssh.SSHKey
    ) -> bool:
        return self._policy.consider(host, addr, port, key)

    def connection_lost(self, exc: Exception | None) -> None:
        self._lost.set()


class _HostKeyPolicy:
    """Called only for keys not in known_hosts: accept a new one if allowed, never a changed one."""

    def __init__(self, known: asyncssh.SSHKnownHosts | None, accept_new: bool) -> None:
        self.known = known
        self.accept_new = accept_new
        self.presented: tuple[str, int, asyncssh.SSHKey] | None = None
        self.changed = False
        self.accepted = False

    def consider(self, host: str, addr: str, port: int, key: asyncssh.SSHKey) -> bool:
        self.presented = (host, port, key)
        lookup_port = None if port == 22 else port
        trusted = []
        if self.known is not None:
            trusted = list(asyncssh.match_known_hosts(self.known, host, addr, lookup_port)[0])
        self.changed = bool(trusted)
        self.accepted = self.accept_new and not self.changed
        return self.accepted


def known_hosts_line(host: str, port: int, key: asyncssh.SSHKey) -> str:
    pattern = host if port == 22 else f"[{host}]:{port}"
    algorithm, data = key.export_public_key("openssh").decode().split()[:2]
    return f"{pattern} {algorithm} {data}"


def _connect_kwargs(target: SSHTarget) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"host": target.host}
    if target.ssh_config is not None:
        kwargs["config"] = list(target.ssh_config)
    if target.port is not None:
        kwargs["port"] = target.port
    if target.user is not None:
        kwargs["username"] = target.user
    if target.identity_file is not None:
        kwargs["client_keys"] = [os.path.expanduser(target.identity_file)]
    return kwargs


def _resolve_options(target: SSHTarget) -> asyncssh.SSHClientConnectionOptions:
    try:
        return asyncssh.SSHClientConnectionOptions(**_connect_kwargs(target))
    except asyncssh.ConfigParseError as exc:
        raise UsageError(f"ssh config: {exc}", "fix the line it names in ~/.ssh/config") from None
    except (OSError, asyncssh.KeyImportError, ValueError) as exc:
        raise UsageError(
            f"{target.name}: cannot prepare the SSH connection: {exc}",
            "check device.identity_file and the IdentityFile lines of ~/.ssh/config",
        ) from None


def known_hosts_files(target: SSHTarget, options: asyncssh.SSHClientConnectionOptions) -> list[str]:
    """The known_hosts files to check against; refuses a setup that checks nothing."""
    if target.known_hosts is not None:
        if target.known_hosts.strip().lower() == "none":
            raise HostKeyRefused(
                f"{target.name}: device.known_hosts is 'none', which would turn host-key "
                "checking off; qtop always checks host keys",
                "give a known_hosts file path, or remove the key to use ~/.ssh/known_hosts",
            )
        return [os.path.expanduser(target.known_hosts)]
    configured = options.known_hosts
    if configured is None:
        raise HostKeyRefused(
            f"{target.host}: ~/.ssh/config sets 'UserKnownHostsFile none' for this host, which "
            "would turn host-key checking off; qtop always checks host keys",
            "remove that line for this host, or set device.known_hosts to a file in the profile",
        )
    files = [os.path.expanduser(str(path)) for path in configured]
    return files or [os.path.expanduser(DEFAULT_KNOWN_HOSTS)]


def _load_known_hosts(files: list[str]) -> asyncssh.SSHKnownHosts:
    text = ""
    for path in files:
        with contextlib.suppress(FileNotFoundError):
            text += Path(path).read_text(encoding="utf-8", errors="replace") + "\n"
    return asyncssh.import_known_hosts(text)


def _append_known_host(path: str, line: str) -> None:
    file = Path(path)
    file.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(file, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    with os.fdopen(fd, "a", encoding="utf-8") as handle:
        handle.write(line + "\n")


def _refusal(target: SSHTarget, policy: _HostKeyPolicy, files: list[str]) -> HostKeyRefused:
    if policy.presented is None:
        return HostKeyRefused(
            f"{target.name}: the host key was not accepted",
            f"check the entries for this host in {files[0]}",
        )
    host, port, key = policy.presented
    fingerprint = key.get_fingerprint("sha256")
    line = known_hosts_line(host, port, key)
    if policy.changed:
        return HostKeyRefused(
            f"{target.name}: the host key CHANGED ({key.get_algorithm()} {fingerprint}); this "
            "can be a reinstalled device or someone in the middle, so qtop refuses to connect",
            f"if the device was reinstalled, remove its old line from {files[0]} "
            f"(ssh-keygen -R '{line.split()[0]}' -f {files[0]}) and connect again",
        )
    return HostKeyRefused(
        f"{target.name}: unknown host key {key.get_algorithm()} {fingerprint}; qtop only "
        "connects to devices whose key is in known_hosts",
        f"check the fingerprint on the device (ssh-keygen -lf /etc/ssh/ssh_host_*_key.pub), "
        f"then trust it with: echo '{line}' >> {files[0]}  (or rerun with --accept-new-host-key)",
    )


async def open_connection(target: SSHTarget, lost: asyncio.Event) -> asyncssh.SSHClientConnection:
    """One SSH connection with qtop's policy (jump hosts get the same policy)."""
    loop = asyncio.get_running_loop()
    options = await loop.run_in_executor(None, _resolve_options, target)
    files = known_hosts_files(target, options)
    known = _load_known_hosts(files)
    policy = _HostKeyPolicy(known, target.accept_new_host_key)
    tunnel = await _open_tunnel(target, options)
    kwargs = _connect_kwargs(target)
    host = kwargs.pop("host")
    try:
        connection = await asyncio.wait_for(
            asyncssh.connect(
                host,
                **kwargs,
                known_hosts=known,
                client_factory=lambda: _Client(policy, lost),
                agent_forwarding=False,
                connect_timeout=target.connect_timeout_s,
                keepalive_interval=target.keepalive_interval_s,
                keepalive_count_max=target.keepalive_count_max,
                tunnel=tunnel,
            ),
            timeout=target.connect_timeout_s * 2,
        )
    except asyncssh.HostKeyNotVerifiable:
        _close_quietly(tunnel)
        raise _refusal(target, policy, files) from None
    except asyncssh.PermissionDenied as exc:
        _close_quietly(tunnel)
        raise RunFailed(
            f"{target.name}: authentication failed ({exc.reason})",
            "check device.user and device.identity_file (or the agent and IdentityFile "
            "in ~/.ssh/config); the public key must be in the device's authorized_keys",
        ) from None
    except (TimeoutError, OSError, asyncssh.Error) as exc:
        _close_quietly(tunnel)
        raise LinkDown(f"{target.name}: cannot connect: {_describe(exc)}") from None
    if policy.accepted and policy.presented is not None:
        _append_known_host(files[0], known_hosts_line(*policy.presented))
    return connection


async def _open_tunnel(
    target: SSHTarget, options: asyncssh.SSHClientConnectionOptions
) -> asyncssh.SSHClientConnection | None:
    """Connect through ProxyJump / device.jump_host hops, each checked like the device."""
    spec = target.jump_host or (options.tunnel if isinstance(options.tunnel, str) else None)
    if not spec or spec.strip().lower() == "none":
        return None
    tunnel: asyncssh.SSHClientConnection | None = None
    for hop in (part.strip() for part in spec.split(",") if part.strip()):
        user, _, rest = hop.rpartition("@")
        host, port = rest, None
        if rest.count(":") == 1:
            host, _, port_text = rest.partition(":")
            port = int(port_text) if port_text.isdigit() else None
        hop_target = replace(
            target, host=host, port=port, user=user or None, identity_file=None, jump_host=None
        )
        hop_options = _resolve_options(hop_target)
        files = known_hosts_files(hop_target, hop_options)
        known = _load_known_hosts(files)
        policy = _HostKeyPolicy(known, target.accept_new_host_key)
        kwargs = _connect_kwargs(hop_target)
        hop_host = kwargs.pop("host")
        try:
            tunnel = await asyncssh.connect(
                hop_host,
                **kwargs,
                known_hosts=known,
                client_factory=lambda policy=policy: _Client(policy, asyncio.Event()),
                agent_forwarding=False,
                connect_timeout=target.connect_timeout_s,
                keepalive_interval=target.keepalive_interval_s,
                keepalive_count_max=target.keepalive_count_max,
                tunnel=tunnel,
            )
        except asyncssh.HostKeyNotVerifiable:
            raise _refusal(hop_target, policy, files) from None
        except (TimeoutError, OSError, asyncssh.Error) as exc:
            raise LinkDown(f"jump host {hop}: cannot connect: {_describe(exc)}") from None
        if policy.accepted and policy.presented is not None:
            _append_known_host(files[0], known_hosts_line(*policy.presented))
    return tunnel


def _close_quietly(connection: asyncssh.SSHClientConnection | None) -> None:
    if connection is not None:
        connection.close()


def _describe(exc: BaseException) -> str:
    if isinstance(exc, asyncio.TimeoutError):
        return "timed out"
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    text = str(exc) or type(exc).__name__
    return text


class SSHStream:
    """A remote command's stdout over one SSH channel."""

    def __init__(self, process: asyncssh.SSHClientProcess, lost: asyncio.Event) -> None:
        self._process = process
        self._lost = lost

    async def read(self, size: int = 65536) -> bytes:
        try:
            data = await self._process.stdout.read(size)
        except (OSError, asyncssh.Error) as exc:
            raise LinkDown(f"the stream broke: {_describe(exc)}") from None
        if not data and self._lost.is_set():
            raise LinkDown("the connection was lost")
        return data

    async def close(self) -> None:
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

    async def run(
        self, command: str, stdin: bytes | None = None, timeout: float | None = None
    ) -> CommandResult:
        connection = self._live()
        try:
            result = await asyncio.wait_for(
                connection.run(command, input=stdin, encoding=None, check=False), timeout
            )
        except TimeoutError:
            raise LinkDown(f"{self.target.name}: no answer within {timeout:g} s") from None
        except (OSError, asyncssh.Error) as exc:
            raise LinkDown(f"{self.target.name}: {_describe(exc)}") from None
        if result.exit_status is None:
            raise LinkDown(f"{self.target.name}: the command ended without an exit status")
        return CommandResult(result.exit_status, _bytes(result.stdout), _bytes(result.stderr))

    async def open_stream(self, command: str) -> SSHStream:
        connection = self._live()
        try:
            process = await connection.create_process(
                command, encoding=None, stdin=asyncssh.DEVNULL
            )
        except (OSError, asyncssh.Error) as exc:
            raise LinkDown(f"{self.target.name}: {_describe(exc)}") from None
        return SSHStream(process, self._lost)

    async def upload(self, pairs: Sequence[tuple[Path, str]]) -> None:
        """Copy local files to device paths over SFTP; their directories must exist.

        ``UploadUnavailable`` when the server offers no SFTP subsystem.
        """
        connection = self._live()
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
            connection.abort()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(connection.wait_closed(), timeout=2.0)

    async def close(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            connection.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(connection.wait_closed(), timeout=2.0)


def _bytes(data: object) -> bytes:
    if isinstance(data, bytes):
        return data
    if isinstance(data, str):
        return data.encode()
    return b""

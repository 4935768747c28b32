"""Connecting the route ``ssh`` would take: jump hosts one by one, or a ProxyCommand.

Every host on the route (each ProxyJump hop is an alias of its own) is checked with the
same host-key policy, and every failure names the host, what failed and the fix.
Keepalives and a connect timeout are on (asyncssh has both off by default), so a dead
link is noticed within ``interval x count`` seconds. Never, whatever the config says:
agent or X11 forwarding, sending the local environment (SendEnv/SetEnv: the device's
environment is ``device.env``), or a terminal (a pty would mangle the agent's bytes).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import asyncssh

from qtop.errors import RunFailed, UsageError
from qtop.transport.base import LinkDown
from qtop.transport.ssh_config import ResolvedHost, display_path
from qtop.transport.ssh_hostkeys import (
    HostKeyPolicy,
    load_known_hosts,
    refusal,
    refuse_unchecked,
    remember,
)
from qtop.transport.ssh_proxy import STOP_GRACE_S, ProxyCommand
from qtop.transport.ssh_reads import BurstReads, read_in_bursts

if TYPE_CHECKING:
    from qtop.transport.ssh import SSHTarget


@dataclass(slots=True)
class _RouteParts:
    """What a device connection's route holds besides its connections."""

    # What the route started that closing it must wait for (ProxyCommands).
    stoppers: list[asyncio.Task[None]]
    # The hosts that read from a socket (the first hop, or a ProxyCommand's): everything
    # the device sends wakes qtop through them.
    reads: list[BurstReads]


_routes: weakref.WeakKeyDictionary[asyncssh.SSHClientConnection, _RouteParts] = (
    weakref.WeakKeyDictionary()
)


@dataclass(frozen=True, slots=True)
class _Hop:
    """One host on the route and how errors name it."""

    host: ResolvedHost
    label: str
    is_device: bool
    # Where the ProxyJump that leads to this host was set (jump hosts only).
    jump_origin: str | None


def _route(device: ResolvedHost) -> list[_Hop]:
    hosts = device.route()
    hops = [
        _Hop(host, f"jump host {host.alias}", False, after.route_origin)
        for host, after in itertools.pairwise(hosts)
    ]
    return [*hops, _Hop(device, device.alias, True, None)]


class _Client(asyncssh.SSHClient):
    """Sees the host key the server presents, so a refusal can show it."""

    def __init__(self, policy: HostKeyPolicy, lost: asyncio.Event) -> None:
        self._policy = policy
        self._lost = lost

    def validate_host_public_key(
        self, host: str, addr: str, port: int, key: asyncssh.SSHKey
    ) -> bool:
        return self._policy.consider(host, addr, port, key)

    def connection_lost(self, exc: Exception | None) -> None:
        self._lost.set()


async def open_route(
    device: ResolvedHost, target: SSHTarget, lost: asyncio.Event
) -> asyncssh.SSHClientConnection:
    """Connect every host of ``device``'s route in turn; the device's connection is returned."""
    route = _route(device)
    for hop in route:
        refuse_unchecked(hop.host, hop.label, hop.is_device)
    tunnel: asyncssh.SSHClientConnection | None = None
    stoppers: list[asyncio.Task[None]] = []
    reads: list[BurstReads] = []
    try:
        for hop in route:
            device_lost = lost if hop.is_device else None
            tunnel = await _connect_hop(hop, target, tunnel, device_lost, stoppers)
            found = read_in_bursts(tunnel)
            if found is not None:
                reads.append(found)
    except BaseException:
        if tunnel is not None:
            tunnel.abort()
        raise
    assert tunnel is not None
    _routes[tunnel] = _RouteParts(stoppers, reads)
    return tunnel


def route_reads(connection: asyncssh.SSHClientConnection) -> list[BurstReads]:
    """The burst readers under ``connection``'s route (``open_route``)."""
    parts = _routes.get(connection)
    return parts.reads if parts is not None else []


async def close_route(connection: asyncssh.SSHClientConnection, abort: bool = False) -> None:
    """Close the device's connection, its jump hosts' and the ProxyCommands they started."""
    if abort:
        connection.abort()
    else:
        connection.close()
    with contextlib.suppress(Exception):
        await asyncio.wait_for(connection.wait_closed(), timeout=2.0)
    parts = _routes.pop(connection, None)
    for stopper in parts.stoppers if parts is not None else []:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(asyncio.shield(stopper), timeout=STOP_GRACE_S + 1.0)


async def _connect_hop(
    hop: _Hop,
    target: SSHTarget,
    tunnel: asyncssh.SSHClientConnection | None,
    lost: asyncio.Event | None,
    stoppers: list[asyncio.Task[None]],
) -> asyncssh.SSHClientConnection:
    host = hop.host
    known = load_known_hosts(host)
    policy = HostKeyPolicy(known, target.accept_new_host_key, host.host_key_alias)
    events = lost or asyncio.Event()
    proxy = ProxyCommand(host.proxy_command) if host.proxy_command else None
    try:
        sock = await proxy.start() if proxy else None
        connection = await asyncio.wait_for(
            asyncssh.connect(
                host.alias,
                **_options(hop),
                known_hosts=known,
                tunnel=tunnel,
                sock=sock,
                proxy_command=None,
                client_factory=lambda: _Client(policy, events),
                connect_timeout=target.connect_timeout_s,
                keepalive_interval=target.keepalive_interval_s,
                keepalive_count_max=target.keepalive_count_max,
            ),
            timeout=target.connect_timeout_s * 2,
        )
    except BaseException as exc:
        failure = _failure(hop, policy, exc, proxy)
        if proxy is not None:
            await proxy.stop()
        if failure is None:
            raise
        raise failure from None
    if proxy is not None:
        stoppers.append(proxy.stop_with(connection))
    if tunnel is not None:
        # Closing the device's connection then closes the jump hosts' too.
        connection.set_tunnel(tunnel)
    remember(host, policy)
    return connection


def _failure(
    hop: _Hop, policy: HostKeyPolicy, exc: BaseException, proxy: ProxyCommand | None
) -> Exception | None:
    """The qtop error for a failed connection, or None to let ``exc`` through."""
    if isinstance(exc, asyncssh.HostKeyNotVerifiable):
        return refusal(hop.host, hop.label, policy)
    if isinstance(exc, asyncssh.PermissionDenied):
        return _auth_failed(hop, exc)
    if isinstance(exc, TimeoutError | OSError | asyncssh.Error | ValueError):
        return _cannot_connect(hop, exc, proxy)
    return None


# asyncssh's own order with AES-GCM first: each packet costs the client one AEAD call
# instead of chacha20-poly1305's three cipher contexts and a MAC, which at a live
# session's 750 packets a second is 2.5% of a core (bench/client_cpu.py); ARMv8 boards
# (every Snapdragon) do AES in hardware. A ``Ciphers`` line in ssh_config still rules.
PREFERRED_CIPHERS = (
    "aes128-gcm@openssh.com",
    "aes256-gcm@openssh.com",
    "chacha20-poly1305@openssh.com",
    "aes256-ctr",
    "aes192-ctr",
    "aes128-ctr",
)


def _options(hop: _Hop) -> dict[str, Any]:
    """asyncssh reads the same files with the same overrides, so it resolves as qtop did."""
    host, request = hop.host, hop.host.request
    options: dict[str, Any] = {
        "config": list(host.config_files),
        "agent_forwarding": False,
        "x11_forwarding": False,
        "request_pty": False,
        "send_env": None,
        "env": None,
        # An encrypted key is left to the agent: qtop has no terminal to ask a passphrase.
        "ignore_encrypted": True,
    }
    if host.ciphers_origin is None:
        options["encryption_algs"] = PREFERRED_CIPHERS
    if request.port is not None:
        options["port"] = request.port
    if request.user is not None:
        options["username"] = request.user
    if host.identity_files:
        options["client_keys"] = _identity_files(hop)
    return options


def _identity_files(hop: _Hop) -> list[str]:
    host = hop.host
    if host.request.identity_file is not None:
        path = host.identity_files[0]
        if not os.path.isfile(path):
            raise UsageError(
                f"{hop.label}: device.identity_file {display_path(path)} does not exist",
                "fix the path in the profile, or remove the key to use ~/.ssh/config and the agent",
            )
        return [path]
    # As ssh does, an IdentityFile that is not there is passed over; with none left
    # asyncssh falls back to the default keys and the agent.
    return [path for path in host.identity_files if os.path.isfile(path)]


def _auth_failed(hop: _Hop, exc: asyncssh.PermissionDenied) -> RunFailed:
    host = hop.host
    keys = "device.user and device.identity_file in the profile, or " if hop.is_device else ""
    return RunFailed(
        f"{hop.label}: authentication as {host.user} failed ({exc.reason})",
        f"check {keys}User and IdentityFile for {host.alias} in ~/.ssh/config "
        f"('ssh {host.alias} true' must work without a password prompt); the public key must "
        "be in the host's authorized_keys, and an encrypted key must be loaded in ssh-agent",
    )


def _cannot_connect(hop: _Hop, exc: BaseException, proxy: ProxyCommand | None) -> Exception:
    host = hop.host
    if isinstance(exc, ValueError) or (isinstance(exc, OSError) and exc.filename):
        return UsageError(
            f"{hop.label}: cannot prepare the SSH connection: {exc}",
            f"check the key and algorithm settings for {host.alias} "
            "(device.identity_file, IdentityFile in ~/.ssh/config)",
        )
    if proxy is not None:
        said = proxy.stderr() or "it printed nothing"
        return LinkDown(
            f"{hop.label}: the ProxyCommand ({host.route_origin}) failed: {describe_error(exc)}; "
            f"it said: {said}",
            f"run it by hand to see why: {host.proxy_command}",
        )
    if isinstance(exc, asyncssh.ChannelOpenError) and host.via is not None:
        forwarding = (
            "; the jump host must allow TCP forwarding (AllowTcpForwarding yes in its sshd_config)"
            if exc.code == asyncssh.OPEN_ADMINISTRATIVELY_PROHIBITED
            else ""
        )
        return LinkDown(
            f"{hop.label}: jump host {host.via.alias} cannot reach {host.hostname} port "
            f"{host.port}: {describe_error(exc)}",
            f"check that {host.alias} is up and that {host.via.alias} can reach it{forwarding}",
        )
    where = f"{host.hostname} port {host.port}"
    if hop.is_device:
        fix = (
            f"check that {host.alias} is up and reachable; 'ssh {host.alias} true' should "
            "work without a password prompt"
        )
    else:
        fix = (
            f"check that jump host {host.alias} is up and reachable ('ssh {host.alias} true'), "
            f"or correct the ProxyJump at {hop.jump_origin}"
        )
    return LinkDown(f"{hop.label}: cannot connect to {where}: {describe_error(exc)}", fix)


def describe_error(exc: BaseException) -> str:
    """An exception as the tail of a sentence: 'connection refused', 'timed out'."""
    if isinstance(exc, TimeoutError):
        return "timed out"
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, asyncssh.ChannelOpenError | asyncssh.DisconnectError):
        return _sentence_part(exc.reason) or type(exc).__name__
    if isinstance(exc, OSError) and exc.strerror:
        return _sentence_part(exc.strerror)
    return str(exc) or type(exc).__name__


def _sentence_part(text: str) -> str:
    text = text.strip().rstrip(".")
    return text[:1].lower() + text[1:]

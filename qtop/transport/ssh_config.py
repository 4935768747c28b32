"""What an SSH host name resolves to, read from ``~/.ssh/config`` as OpenSSH's ``ssh`` reads it.

asyncssh's own parser reads the files (``Host`` and ``Match`` blocks, ``Include``, the
first value winning, %-tokens in ``HostName``, ``IdentityFile`` and ``ProxyCommand``).
On top of it this module does what asyncssh leaves out or does differently from
OpenSSH (9.2 is the reference, checked against ``ssh -G`` in the tests):

- the system-wide ``/etc/ssh/ssh_config`` is read after the user's file;
- ``ProxyJump`` and ``ProxyCommand`` exclude each other: the first one met wins, except
  that ``ProxyJump none`` leaves room for a later ``ProxyCommand``;
- each ``ProxyJump`` hop is an alias resolved through the same files, and the last hop
  is reached through the hops before it, as ``ssh -J`` does; the first hop follows its
  own ``ProxyJump``/``ProxyCommand``;
- ``UserKnownHostsFile`` and ``GlobalKnownHostsFile`` get ``~``, %-token and ``${VAR}``
  expansion and OpenSSH's defaults (``known_hosts`` and ``known_hosts2``);
- every value remembers the file and line it came from, so an error can name it.
"""

from __future__ import annotations

import getpass
import hashlib
import os
import re
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncssh
from asyncssh.config import SSHClientConfig

from qtop.errors import UsageError

SYSTEM_CONFIG = "/etc/ssh/ssh_config"
SYSTEM_KNOWN_HOSTS = ("/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2")
USER_CONFIG = "~/.ssh/config"
USER_KNOWN_HOSTS = ("~/.ssh/known_hosts", "~/.ssh/known_hosts2")
DEFAULT_PORT = 22
# A chain longer than this is a loop the alias check cannot see (hops that differ only in
# how they are spelled); OpenSSH would fork ssh processes until something gives out.
MAX_JUMP_DEPTH = 16
PROFILE_JUMP_HOST = "device.jump_host in the profile"
PROFILE_KNOWN_HOSTS = "device.known_hosts in the profile"

# A host being resolved: (alias, user, port), and whether its route comes from the config.
_Resolving = tuple[tuple[str, str | None, int | None], bool]


@dataclass(frozen=True, slots=True)
class Hop:
    """One jump host as ProxyJump writes it: ``[user@]host[:port]``."""

    host: str
    user: str | None = None
    port: int | None = None


@dataclass(frozen=True, slots=True)
class HostRequest:
    """What qtop asks for: a name, plus the values that win over the config files.

    ``jumps`` is ``None`` to take the route from the config files, ``()`` for a direct
    connection, or the hops to go through (the config's ProxyJump/ProxyCommand are then
    ignored, as with ``ssh -J``).
    """

    alias: str
    user: str | None = None
    port: int | None = None
    identity_file: str | None = None
    known_hosts: str | None = None
    jumps: tuple[Hop, ...] | None = None
    jumps_origin: str = ""


@dataclass(frozen=True, slots=True)
class ResolvedHost:
    """One host of the route, with everything ``ssh -G`` would print for it that qtop uses."""

    request: HostRequest
    config_files: tuple[str, ...]
    hostname: str
    port: int
    user: str
    identity_files: tuple[str, ...]
    host_key_alias: str | None
    known_hosts: tuple[str, ...]
    known_hosts_origin: str | None
    global_known_hosts: tuple[str, ...]
    jump_hosts: tuple[Hop, ...]
    proxy_command: str | None
    route_origin: str | None
    via: ResolvedHost | None
    # Where a ``Ciphers`` line for this host is, if any (qtop then leaves the choice to it).
    ciphers_origin: str | None = None

    @property
    def alias(self) -> str:
        return self.request.alias

    @property
    def known_hosts_off(self) -> bool:
        """``UserKnownHostsFile none`` (or ``device.known_hosts: none``): nothing to check with."""
        return not self.known_hosts

    def route(self) -> list[ResolvedHost]:
        """The hosts connected to in order: the first jump host first, this host last."""
        hosts = [self]
        while hosts[0].via is not None:
            hosts.insert(0, hosts[0].via)
        return hosts


def config_files(explicit: Sequence[str] | None = None) -> tuple[str, ...]:
    """The files ``ssh`` reads: ``~/.ssh/config`` then the system's, or exactly ``explicit``."""
    if explicit is not None:
        return tuple(os.path.expanduser(path) for path in explicit)
    candidates = (os.path.expanduser(USER_CONFIG), SYSTEM_CONFIG)
    return tuple(path for path in candidates if os.access(path, os.R_OK))


def resolve(request: HostRequest, config_paths: Sequence[str] | None = None) -> ResolvedHost:
    """Resolve ``request`` and every jump host on its route; ``UsageError`` names a bad line."""
    return _resolve(request, config_files(config_paths), ())


def parse_jumps(text: str, origin: str) -> tuple[Hop, ...]:
    """ProxyJump's value: ``none``, or comma-separated ``[user@]host[:port]`` / ``ssh://`` URIs."""
    if text.strip().lower() == "none":
        return ()
    return tuple(_parse_hop(part.strip(), text, origin) for part in text.split(","))


def display_path(path: str | Path) -> str:
    """A path as the user would write it: the home directory shown as ``~``."""
    text = str(path)
    home = os.path.expanduser("~")
    if home not in ("", "/", "~") and (text == home or text.startswith(home + os.sep)):
        return "~" + text[len(home) :]
    return text


def _resolve(
    request: HostRequest, files: tuple[str, ...], chain: tuple[_Resolving, ...]
) -> ResolvedHost:
    key = (request.alias, request.user, request.port)
    from_config = request.jumps is None
    # 'ProxyJump gw,gw' is allowed (ssh -J gw,gw): only a host that reaches its own
    # config route again is a loop.
    again = from_config and (key, True) in chain
    if again or len(chain) >= MAX_JUMP_DEPTH:
        names = " -> ".join(alias for (alias, _, _), _ in (*chain, (key, from_config)))
        raise UsageError(
            f"ssh config: the jump hosts of {chain[0][0][0]} loop ({names}); "
            f"last set at {request.jumps_origin}",
            "a jump host must not go through itself: keep it out of the Host pattern that sets "
            f"ProxyJump (for example 'Host * !{request.alias}')",
        )
    config = _parse(files, request)
    hostname = str(config.get("Hostname", request.alias))
    port = request.port if request.port is not None else int(config.get("Port", DEFAULT_PORT))
    user = request.user if request.user is not None else str(config.get("User") or _local_user())
    host_key_alias = config.get("HostKeyAlias")
    tokens = _file_tokens(request.alias, hostname, port, user, host_key_alias)

    if request.identity_file is not None:
        identity_files: tuple[str, ...] = (os.path.expanduser(request.identity_file),)
    else:
        identity_files = tuple(os.path.expanduser(str(p)) for p in config.get("IdentityFile", ()))

    if request.known_hosts is not None:
        off = request.known_hosts.strip().lower() == "none"
        known_hosts: tuple[str, ...] = () if off else (os.path.expanduser(request.known_hosts),)
        known_origin: str | None = PROFILE_KNOWN_HOSTS
    else:
        known_origin = config.where("UserKnownHostsFile")
        known_hosts = _known_hosts_files(
            config, "UserKnownHostsFile", USER_KNOWN_HOSTS, tokens, known_origin
        )
    global_known_hosts = _known_hosts_files(
        config,
        "GlobalKnownHostsFile",
        SYSTEM_KNOWN_HOSTS,
        tokens,
        config.where("GlobalKnownHostsFile"),
    )

    if request.jumps is not None:
        jumps, proxy_command, route_origin = request.jumps, None, request.jumps_origin or None
    else:
        jumps, proxy_command, route_origin = _route_from_config(config)
    via = None
    if jumps:
        *before, last = jumps
        hop = HostRequest(
            last.host,
            user=last.user,
            port=last.port,
            jumps=tuple(before) if before else None,
            jumps_origin=route_origin or "",
        )
        via = _resolve(hop, files, (*chain, (key, from_config)))
    return ResolvedHost(
        request=request,
        config_files=files,
        hostname=hostname,
        port=port,
        user=user,
        identity_files=identity_files,
        host_key_alias=str(host_key_alias) if host_key_alias else None,
        known_hosts=known_hosts,
        known_hosts_origin=known_origin,
        global_known_hosts=global_known_hosts,
        jump_hosts=jumps,
        proxy_command=proxy_command,
        route_origin=route_origin,
        via=via,
        ciphers_origin=config.where("Ciphers"),
    )


def _route_from_config(config: _TracedConfig) -> tuple[tuple[Hop, ...], str | None, str | None]:
    jump = config.get("ProxyJump")
    command = config.get("ProxyCommand")
    jump_order = config.order("ProxyJump")
    command_order = config.order("ProxyCommand")
    # OpenSSH ignores ProxyJump once any ProxyCommand line (even 'none') was taken, and
    # ProxyCommand once a ProxyJump other than 'none' was taken; asyncssh keeps both.
    command_first = command_order is not None and (
        jump_order is None or command_order < jump_order or jump is None
    )
    if command_first:
        where = config.where("ProxyCommand")
        return (), (str(command) if command else None), where
    if jump:
        where = config.where("ProxyJump") or ""
        return parse_jumps(str(jump), where), None, where
    return (), None, None


def _known_hosts_files(
    config: _TracedConfig,
    option: str,
    default: tuple[str, ...],
    tokens: dict[str, str],
    origin: str | None,
) -> tuple[str, ...]:
    configured = config.get(option)
    values = default if configured is None else tuple(str(value) for value in configured)
    return tuple(_expand_file(value, tokens, option, origin) for value in values)


_EXPANSION = re.compile(r"%(.)|\$\{([^}]*)\}")


def _expand_file(value: str, tokens: dict[str, str], option: str, origin: str | None) -> str:
    """``~``, then %-tokens and ``${VAR}`` in one pass, as OpenSSH expands a known_hosts path."""

    def replace(match: re.Match[str]) -> str:
        token, variable = match.group(1), match.group(2)
        if token is not None:
            if token in tokens:
                return tokens[token]
            raise UsageError(
                f"ssh config: {origin}: {option} {value}: unknown token %{token}",
                "use one of %% %C %d %h %i %k %L %l %n %p %r %u (see 'man ssh_config', TOKENS)",
            )
        if variable in os.environ:
            return os.environ[variable]
        raise UsageError(
            f"ssh config: {origin}: {option} {value}: ${{{variable}}} is not set",
            f"set {variable} in the environment qtop runs in, or write the path out",
        )

    return _EXPANSION.sub(replace, os.path.expanduser(value))


def _file_tokens(
    alias: str, hostname: str, port: int, user: str, host_key_alias: object
) -> dict[str, str]:
    local_host = socket.gethostname()
    local_user = _local_user()
    connection = local_host + hostname + str(port) + user
    return {
        "%": "%",
        "C": hashlib.sha1(connection.encode()).hexdigest(),
        "d": os.path.expanduser("~"),
        "h": hostname,
        "i": str(os.getuid()),
        "k": str(host_key_alias) if host_key_alias else alias,
        "L": local_host.split(".", 1)[0],
        "l": local_host,
        "n": alias,
        "p": str(port),
        "r": user,
        "u": local_user,
    }


def _parse_hop(part: str, text: str, origin: str) -> Hop:
    spec = part.removeprefix("ssh://").rstrip("/") if part.startswith("ssh://") else part
    user, at, rest = spec.rpartition("@")
    host, port_text = rest, ""
    if rest.startswith("["):
        close = rest.find("]")
        host, tail = rest[1:close], rest[close + 1 :]
        if close < 0 or (tail and not tail.startswith(":")):
            host = ""
        port_text = tail[1:]
    elif rest.count(":") == 1:
        host, _, port_text = rest.partition(":")
    port = int(port_text) if port_text.isdigit() else None
    if not host or (at and not user) or (port_text and not (port and 0 < port < 65536)):
        raise UsageError(
            f"{origin}: ProxyJump {text}: '{part}' is not [user@]host[:port]",
            "write each jump host as [user@]host[:port] (or ssh://[user@]host[:port]), "
            "separated by commas",
        )
    return Hop(host, user or None, port)


def _local_user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        raise UsageError(
            "cannot tell the local user name for SSH",
            "set USER (or LOGNAME) in the environment",
        ) from None


def _parse(files: tuple[str, ...], request: HostRequest) -> _TracedConfig:
    try:
        config = _TracedConfig.load(
            None,
            list(files),
            False,
            False,
            False,
            _local_user(),
            request.user if request.user is not None else (),
            request.alias,
            request.port if request.port is not None else (),
        )
        assert isinstance(config, _TracedConfig)  # load() builds an instance of its class
        return config
    except OSError as exc:
        where = display_path(exc.filename) if exc.filename else "a config file"
        raise UsageError(
            f"ssh config: cannot read {where}: {exc.strerror or exc}",
            "check the path (and the Include lines that name it)",
        ) from None
    except (ValueError, asyncssh.Error) as exc:
        raise UsageError(
            f"ssh config: {_home_as_tilde(str(exc))}",
            "fix that line; 'ssh -G HOST' shows how OpenSSH reads the file",
        ) from None


def _home_as_tilde(text: str) -> str:
    home = os.path.expanduser("~")
    return text.replace(home + os.sep, "~" + os.sep) if home not in ("", "/") else text


class _TracedConfig(SSHClientConfig):
    """asyncssh's client config parser, remembering the line each option was first set on.

    It wraps the parser's handler table and reads its position (``_path``, ``_line_no``):
    asyncssh's internals as of 2.19 (the lowest version pyproject allows); the tests that
    name config lines fail if a release changes them.
    """

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.origins: dict[str, tuple[str, int]] = {}

    def get(self, option: str, default: Any = None) -> Any:
        # asyncssh types every option's value as object; each caller here knows its kind.
        return super().get(option, default)

    def where(self, option: str) -> str | None:
        origin = self.origins.get(option)
        return origin[0] if origin else None

    def order(self, option: str) -> int | None:
        origin = self.origins.get(option)
        return origin[1] if origin else None


Handler = Callable[[SSHClientConfig, str, list[str]], None]


def _traced(handler: Handler) -> Handler:
    def handle(config: SSHClientConfig, option: str, args: list[str]) -> None:
        unset = option not in config._options
        handler(config, option, args)
        if unset and option in config._options and isinstance(config, _TracedConfig):
            where = f"{display_path(config._path)} line {config._line_no}"
            config.origins[option] = (where, len(config.origins))

    return handle


_TracedConfig._handlers = {
    key: (option, handler if key in SSHClientConfig._conditionals else _traced(handler))
    for key, (option, handler) in SSHClientConfig._handlers.items()
}

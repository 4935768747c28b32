"""``--metrics-listen HOST:PORT``: where the metrics endpoint may listen, checked up front.

The endpoint carries device data (hostnames, the latency of models that may
not be public yet) over plain HTTP without authentication, so it listens only
where it is told. Loopback and a named address of this machine are explicit
choices; the wildcard (``0.0.0.0``, ``::``, an empty host as in ``:9464``)
would also open it on interfaces nobody thought of (a café's Wi-Fi, a
container bridge), so it needs ``--metrics-all-interfaces`` as well.
Everything here is checked before anything starts on the device; the port
itself is taken when the session starts (``qtop.metrics.server``).
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass

from qtop.errors import UsageError

DEFAULT_PORT_HINT = 9464
_EXAMPLE = f"127.0.0.1:{DEFAULT_PORT_HINT}"


@dataclass(frozen=True, slots=True)
class ListenAddress:
    """A checked ``HOST:PORT``: ``host`` as given (brackets removed), ``port`` 0 for any free."""

    host: str
    port: int
    loopback: bool
    wildcard: bool

    def __str__(self) -> str:
        return join_host_port(self.host, self.port)


def join_host_port(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _split(text: str) -> tuple[str, str]:
    if text.startswith("["):
        host, bracket, rest = text[1:].partition("]")
        if not bracket or not rest.startswith(":"):
            raise _bad(text, "an IPv6 address goes in brackets: [::1]:9464")
        return host, rest[1:]
    if text.count(":") > 1:
        raise _bad(text, f"an IPv6 address goes in brackets, e.g. [::1]:{DEFAULT_PORT_HINT}")
    host, colon, port = text.rpartition(":")
    if not colon:
        raise _bad(text, f"write HOST:PORT, e.g. {_EXAMPLE}")
    return host, port


def _bad(text: str, fix: str) -> UsageError:
    return UsageError(f"--metrics-listen {text!r}: not HOST:PORT", fix)


def _port(text: str, port_text: str) -> int:
    if not port_text.isdigit() or int(port_text) > 65535:
        raise UsageError(
            f"--metrics-listen {text!r}: the port must be a number from 0 to 65535",
            f"e.g. --metrics-listen {_EXAMPLE} (0 picks a free port and prints it)",
        )
    return int(port_text)


def _addresses(
    text: str, host: str, port: int
) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as exc:
        reason = exc.strerror if isinstance(exc, socket.gaierror) else str(exc)
        raise UsageError(
            f"--metrics-listen {text!r}: cannot resolve {host!r}: {reason}",
            f"give an address of this machine, e.g. --metrics-listen {_EXAMPLE}",
        ) from None
    addresses = []
    for info in infos:
        try:
            addresses.append(ipaddress.ip_address(str(info[4][0]).partition("%")[0]))
        except ValueError:
            continue
    return addresses


def parse_listen(text: str, all_interfaces: bool = False) -> ListenAddress:
    """``HOST:PORT`` checked against the policy above; raises ``UsageError`` with the fix."""
    text = text.strip()
    host, port_text = _split(text)
    port = _port(text, port_text)
    wildcard = host in ("", "*")
    addresses = [] if wildcard else _addresses(text, host, port)
    wildcard = wildcard or any(address.is_unspecified for address in addresses)
    if wildcard and not all_interfaces:
        raise UsageError(
            f"--metrics-listen {text!r} would serve the metrics, unauthenticated, on every "
            "network interface of this machine",
            f"use --metrics-listen 127.0.0.1:{port} and let Prometheus scrape through an SSH "
            "tunnel or a local agent, name one interface's address, or add "
            "--metrics-all-interfaces if that is what you mean",
        )
    if wildcard:
        host = "::" if ":" in host else "0.0.0.0"
    loopback = bool(addresses) and all(address.is_loopback for address in addresses)
    return ListenAddress(host=host, port=port, loopback=loopback, wildcard=wildcard)

"""The simulator's SSH keys: its own host key and one client key, kept in the state dir.

Keys are reused when the state directory already has them, so a restarted
``qtop sim`` keeps matching the ``known_hosts`` line and the profiles that
point at the client key.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import asyncssh

HOST_KEY_FILE = "ssh_host_ed25519_key"
CLIENT_KEY_FILE = "client_ed25519"
KNOWN_HOSTS_FILE = "known_hosts"


@dataclass(frozen=True, slots=True)
class SimKeys:
    host_key: asyncssh.SSHKey
    client_key: asyncssh.SSHKey
    host_key_path: Path
    client_key_path: Path


def _load_or_create(path: Path) -> asyncssh.SSHKey:
    if path.exists():
        try:
            return asyncssh.read_private_key(str(path))
        except (asyncssh.KeyImportError, OSError, ValueError):
            path.unlink()
    key = asyncssh.generate_private_key("ssh-ed25519", comment="qtop-sim")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(key.export_private_key("openssh"))
    path.with_name(path.name + ".pub").write_bytes(key.export_public_key("openssh"))
    return key


def ensure_keys(state_dir: Path) -> SimKeys:
    host_key_path = state_dir / HOST_KEY_FILE
    client_key_path = state_dir / CLIENT_KEY_FILE
    host_key = _load_or_create(host_key_path)
    client_key = _load_or_create(client_key_path)
    # OpenSSH refuses a private key that others can read.
    client_key_path.chmod(0o600)
    return SimKeys(host_key, client_key, host_key_path, client_key_path)


def host_patterns(host: str, port: int) -> list[str]:
    names = [host] if host != "localhost" else ["127.0.0.1"]
    if "localhost" not in names:
        names.append("localhost")
    return [name if port == 22 else f"[{name}]:{port}" for name in names]


def known_hosts_line(host_key: asyncssh.SSHKey, host: str, port: int) -> str:
    """One OpenSSH known_hosts line for the simulator's host key at host:port."""
    algorithm, blob = host_key.export_public_key("openssh").decode().split()[:2]
    return f"{','.join(host_patterns(host, port))} {algorithm} {blob}"


def write_known_hosts(path: Path, host_key: asyncssh.SSHKey, host: str, port: int) -> None:
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(known_hosts_line(host_key, host, port) + "\n")
    temporary.chmod(0o600)
    temporary.replace(path)

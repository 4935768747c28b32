"""Host keys: the known_hosts files of a host, the check, and the refusals that name the fix.

Keys are checked against the host's user files (``device.known_hosts``, or
``UserKnownHostsFile`` from the config, or ``~/.ssh/known_hosts`` and
``known_hosts2``) and the global ones, as ``ssh`` checks them. An unknown key is refused
with its fingerprint and the exact line that would trust it, written to the first user
file (``--accept-new-host-key`` appends it there); a changed key is always refused; a
setup that checks nothing (``UserKnownHostsFile none``) is refused before connecting.
"""

from __future__ import annotations

import os
from pathlib import Path

import asyncssh

from qtop.errors import UsageError
from qtop.transport.base import HostKeyRefused
from qtop.transport.ssh_config import PROFILE_KNOWN_HOSTS, ResolvedHost, display_path


class HostKeyPolicy:
    """Asked about keys not in known_hosts: accept a new one if allowed, never a changed one."""

    def __init__(self, known: asyncssh.SSHKnownHosts, accept_new: bool, alias: str | None) -> None:
        self.known = known
        self.accept_new = accept_new
        self.host_key_alias = alias
        self.presented: tuple[str, int, asyncssh.SSHKey] | None = None
        self.changed = False
        self.accepted = False

    def consider(self, host: str, addr: str, port: int, key: asyncssh.SSHKey) -> bool:
        # With HostKeyAlias, OpenSSH files the key under the bare alias, whatever the port.
        port = 22 if self.host_key_alias else port
        self.presented = (host, port, key)
        lookup_port = None if port == 22 else port
        trusted = asyncssh.match_known_hosts(self.known, host, addr, lookup_port)[0]
        self.changed = bool(trusted)
        self.accepted = self.accept_new and not self.changed
        return self.accepted


def known_hosts_line(host: str, port: int, key: asyncssh.SSHKey) -> str:
    pattern = host if port == 22 else f"[{host}]:{port}"
    algorithm, data = key.export_public_key("openssh").decode().split()[:2]
    return f"{pattern} {algorithm} {data}"


def refuse_unchecked(host: ResolvedHost, label: str, is_device: bool) -> None:
    """Refuse a host whose known_hosts setting is 'none', naming where it was set."""
    if not host.known_hosts_off:
        return
    if host.known_hosts_origin == PROFILE_KNOWN_HOSTS:
        raise HostKeyRefused(
            f"{label}: device.known_hosts is 'none', which would turn host-key "
            "checking off; qtop always checks host keys",
            "give a known_hosts file path, or remove the key to use ~/.ssh/known_hosts",
        )
    profile = ", or set device.known_hosts in the profile" if is_device else ""
    raise HostKeyRefused(
        f"{label}: 'UserKnownHostsFile none' ({host.known_hosts_origin}) would turn host-key "
        "checking off for this host; qtop always checks host keys",
        f"remove that line, or give {host.alias} its own 'UserKnownHostsFile "
        f"~/.ssh/known_hosts' in a Host block above it{profile}",
    )


def load_known_hosts(host: ResolvedHost) -> asyncssh.SSHKnownHosts:
    known = asyncssh.SSHKnownHosts()
    for path in (*host.known_hosts, *host.global_known_hosts):
        try:
            text = Path(path).read_text(encoding="utf-8", errors="replace")
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError as exc:
            raise UsageError(
                f"{host.alias}: cannot read the known_hosts file {display_path(path)}: "
                f"{exc.strerror or exc}",
                "fix its permissions, or point the setting that names it elsewhere",
            ) from None
        try:
            known.load(text)
        except ValueError as exc:
            raise UsageError(
                f"{host.alias}: the known_hosts file {display_path(path)} is malformed: {exc}",
                "fix or remove that line (ssh-keygen -R HOST -f FILE removes a host's lines)",
            ) from None
    return known


def remember(host: ResolvedHost, policy: HostKeyPolicy) -> None:
    """Append the key ``--accept-new-host-key`` accepted to the host's first known_hosts file."""
    if not policy.accepted or policy.presented is None:
        return
    file = Path(host.known_hosts[0])
    file.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(file, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    with os.fdopen(fd, "a", encoding="utf-8") as handle:
        handle.write(known_hosts_line(*policy.presented) + "\n")


def refusal(host: ResolvedHost, label: str, policy: HostKeyPolicy) -> HostKeyRefused:
    file = display_path(host.known_hosts[0])
    checked = _checked(host)
    if policy.presented is None:
        return HostKeyRefused(
            f"{label}: the host key was not accepted ({checked})",
            f"check the entries for this host in {file}",
        )
    name, port, key = policy.presented
    fingerprint = key.get_fingerprint("sha256")
    line = known_hosts_line(name, port, key)
    if policy.changed:
        return HostKeyRefused(
            f"{label}: the host key CHANGED ({key.get_algorithm()} {fingerprint}); this can "
            f"be a reinstalled device or someone in the middle, so qtop refuses to connect "
            f"({checked})",
            "if the device was reinstalled, remove its old line "
            f"(ssh-keygen -R '{line.split()[0]}' -f {file}) and connect again",
        )
    return HostKeyRefused(
        f"{label}: unknown host key {key.get_algorithm()} {fingerprint}; qtop only connects "
        f"to hosts whose key is in known_hosts ({checked})",
        "check the fingerprint on the host (ssh-keygen -lf /etc/ssh/ssh_host_*_key.pub), "
        f"then trust it with: echo '{line}' >> {file}  (or rerun with --accept-new-host-key)",
    )


def _checked(host: ResolvedHost) -> str:
    files = ", ".join(display_path(path) for path in host.known_hosts)
    source = f"from {host.known_hosts_origin}" if host.known_hosts_origin else "OpenSSH's default"
    return f"checked {files}: {source}"

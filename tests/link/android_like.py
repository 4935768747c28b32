"""A device that looks like Android to the agent: mksh as sh, busybox for the tools.

A chroot with only mksh and busybox (its ``date`` has no %N, like toybox's
on older Android) on the PATH: no bash, no python3, no /tmp, and a writable
/data/local/tmp. /proc and /dev are bind-mounted in a private mount
namespace that a holder process keeps alive; every command enters it with
``nsenter`` and runs under ``chroot``, through a ``LocalTransport`` whose
shell is a wrapper script. Needs root (or unprivileged user namespaces);
``build`` raises ``Unavailable`` where this machine cannot do it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from qtop.transport.local import LocalTransport

BUSYBOX_TOOLS = (
    "cat", "date", "env", "getconf", "grep", "head", "hostname", "id", "kill", "ls", "mkdir",
    "mkfifo", "mv", "printf", "rm", "setsid", "sleep", "tail", "timeout", "tr", "true", "uname",
    "wc",
)  # fmt: skip


class Unavailable(Exception):
    """This machine cannot build the chroot (not root, no unshare, no busybox...)."""


@dataclass
class AndroidLike:
    root: Path
    holder: subprocess.Popen[bytes]
    wrapper: Path

    def transport(self) -> LocalTransport:
        return LocalTransport(shell=str(self.wrapper))

    def host_path(self, device_path: str) -> Path:
        return self.root / device_path.lstrip("/")

    def close(self) -> None:
        self.holder.kill()
        self.holder.wait()


def _libraries(binary: str) -> list[Path]:
    out = subprocess.run(["ldd", binary], capture_output=True, text=True).stdout
    found = []
    for line in out.splitlines():
        for word in line.split():
            if word.startswith("/"):
                found.append(Path(word))
    return found


def build(root: Path, sh: str = "mksh") -> AndroidLike:
    """The chroot at ``root``, with ``sh`` being mksh (Android) or busybox ash."""
    if os.geteuid() != 0:
        raise Unavailable("needs root for chroot and bind mounts")
    tools = {name: shutil.which(name) for name in ("busybox", "mksh", "unshare", "nsenter")}
    missing = [name for name, path in tools.items() if path is None]
    if missing:
        raise Unavailable(f"{', '.join(missing)} not installed")
    bin_dir = root / "bin"
    bin_dir.mkdir(parents=True)
    for binary in (tools["busybox"], tools["mksh"]):
        shutil.copy2(binary, bin_dir)
        for library in _libraries(binary):
            target = root / library.relative_to("/")
            target.parent.mkdir(parents=True, exist_ok=True)
            if not target.exists():
                shutil.copy2(library.resolve(), target)
    for tool in BUSYBOX_TOOLS:
        (bin_dir / tool).symlink_to("busybox")
    if sh == "mksh":
        (bin_dir / "sh").symlink_to("mksh")
    else:
        (bin_dir / "mksh").unlink()
        (bin_dir / "sh").symlink_to("busybox")
    for directory in ("proc", "dev", "data/local/tmp"):
        (root / directory).mkdir(parents=True)
    (root / "data/local/tmp").chmod(0o771)
    holder = subprocess.Popen(
        [
            tools["unshare"], "-m", "--propagation", "private", "sh", "-c",
            'mount --bind /proc "$1/proc" && mount --bind /dev "$1/dev" && echo ready '
            "&& exec sleep 100000",
            "sh", str(root),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )  # fmt: skip
    assert holder.stdout is not None
    if holder.stdout.readline().strip() != b"ready":
        with contextlib.suppress(OSError):
            holder.kill()
        error = holder.stderr.read().decode() if holder.stderr else ""
        holder.wait()
        raise Unavailable(f"cannot make the mount namespace: {error.strip()}")
    wrapper = root.parent / f"{root.name}-enter"
    wrapper.write_text(
        "#!/bin/sh\n"
        f"exec {tools['nsenter']} -t {holder.pid} -m -- chroot {root} "
        '/bin/env -i PATH=/bin HOME=/data/local/tmp /bin/sh "$@"\n'
    )
    wrapper.chmod(0o755)
    return AndroidLike(root, holder, wrapper)

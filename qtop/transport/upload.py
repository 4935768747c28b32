"""Copying files to the device: what a transport may offer beyond commands.

A transport with a file-transfer channel of its own (SFTP over SSH, ``adb
push``) has ``upload``; the device's directories must exist. Without one
(or when the server refuses it: dropbear often has no SFTP subsystem),
``copy_through_shell`` sends the bytes on a command's stdin, which every
transport can do.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

from qtop.errors import RunFailed
from qtop.transport.base import Transport
from qtop.transport.command import quote

# Bytes per command when copying through the shell: large enough that the
# round trips do not matter, small enough to hold in memory.
SHELL_CHUNK = 4 * 1024 * 1024
PART_SUFFIX = ".qtop-part"


class UploadUnavailable(Exception):
    """The transport's own file transfer is not offered by this device."""


@runtime_checkable
class Uploader(Protocol):
    async def upload(self, pairs: Sequence[tuple[Path, str]]) -> None:
        """Copy each local file to its device path; ``LinkDown`` if the link drops."""
        ...


async def copy_through_shell(transport: Transport, local: Path, remote: str) -> None:
    """``local`` to ``remote`` in chunks on ``cat``'s stdin, then renamed into place.

    The rename means a copy cut short never leaves a file that looks complete.
    """
    part = remote + PART_SUFFIX
    with local.open("rb") as handle:
        first = True
        while True:
            chunk = handle.read(SHELL_CHUNK)
            if not chunk and not first:
                break
            redirect = ">" if first else ">>"
            result = await transport.run(f"cat {redirect} {quote(part)}", stdin=chunk)
            if result.exit_status != 0:
                raise RunFailed(
                    f"cannot write {part} on the device: {result.error_text or 'cat failed'}",
                    "check that the directory on the device is writable",
                )
            first = False
            if len(chunk) < SHELL_CHUNK:
                break
    result = await transport.run(f"mv -f {quote(part)} {quote(remote)}")
    if result.exit_status != 0:
        raise RunFailed(f"cannot move {part} to {remote} on the device: {result.error_text}")

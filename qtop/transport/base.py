"""What qtop needs from a way of reaching a device, whatever carries it.

A transport runs shell command lines (built by ``qtop.transport.command``) on
the device: to completion with ``run``, or as a ``Stream`` whose stdout is
read as it comes. When the link is lost every pending call raises
``LinkDown``; the caller reconnects with ``connect`` and carries on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from qtop.errors import RunFailed


class LinkDown(Exception):
    """The link to the device dropped (or never came up); reconnecting may help.

    ``fix`` says what the user can check when the link never came up at all.
    """

    def __init__(self, problem: str, fix: str | None = None) -> None:
        super().__init__(problem)
        self.fix = fix


class HostKeyRefused(RunFailed):
    """The device's host key is unknown or changed, or checking it was turned off."""


@dataclass(frozen=True, slots=True)
class CommandResult:
    exit_status: int
    stdout: bytes
    stderr: bytes

    @property
    def text(self) -> str:
        return self.stdout.decode("utf-8", errors="replace")

    @property
    def error_text(self) -> str:
        return self.stderr.decode("utf-8", errors="replace").strip()


class Stream(Protocol):
    """A running remote command whose stdout is read incrementally."""

    async def read(self, size: int = 65536) -> bytes:
        """Up to ``size`` bytes; ``b""`` at the end. Raises ``LinkDown`` when the link drops."""
        ...

    async def close(self) -> None: ...


class Transport(Protocol):
    """A way of running commands on the device."""

    kind: str
    description: str

    @property
    def connected(self) -> bool: ...

    async def connect(self) -> None:
        """Open (or reopen) the link; raises ``LinkDown`` when the device cannot be reached."""
        ...

    async def run(
        self, command: str, stdin: bytes | None = None, timeout: float | None = None
    ) -> CommandResult: ...

    async def open_stream(self, command: str) -> Stream: ...

    async def close(self) -> None: ...

"""Reading a device's connection in bursts while it only trickles.

A live session follows the run's files with ``tail -f`` on the device, and each
line the runner appends there leaves the device as its own SSH packet: at the
demo's rates (250 iterations and 350 lines of output a second) the client woke
about 2,000 times a second, and in a virtual machine each wake-up of an idle
process costs more than the packet it reads. So after a read that did not fill
the buffer, the socket is left unread for ``HOLD_S``: what arrives meanwhile
waits in the kernel and is read in one go. Nothing already read waits, and a
full read (a transfer) is followed at once. Holds are only for a connection with
a stream open (``following``): without one, every read is an answer, and a hold
would only add to the round trip. While a command's answer is awaited
(``awaiting``) the holds are ``AWAITING_HOLD_S``: each of a command's round trips
waits that long at most. ``bench/client_cpu.py``, the same cipher: the client
16.5-17.6% of a core without holds, 12.0-13.5% with them.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import asyncssh

# Long against a wake-up (tens of microseconds), short against what the live view
# shows (10 frames a second) and against the link's keepalive (half a second at least).
HOLD_S = 0.02
# While an answer is awaited: a profiler hook's viewer run (a channel opened, a command,
# its output, the channel closed) takes four or five round trips, a dozen times a second
# at the demo's rates.
AWAITING_HOLD_S = 0.005
# A read this big may have left more behind: it is not a trickle.
FULL_READ = 64 * 1024


class BurstReads(asyncio.Protocol):
    """Stands between a connection's socket transport and asyncssh's protocol object."""

    def __init__(self, transport: asyncio.Transport, inner: asyncio.Protocol) -> None:
        self._transport = transport
        self._inner = inner
        self._loop = asyncio.get_running_loop()
        self._resume_at: asyncio.TimerHandle | None = None
        self._awaiting = 0
        self._streams = 0
        self.holds = 0

    @property
    def holding(self) -> bool:
        """Whether the socket is being left unread for now."""
        return self._resume_at is not None

    @contextlib.contextmanager
    def awaiting(self) -> Iterator[None]:
        """While a command's answer is awaited: a hold ends now, and later ones are short."""
        self._awaiting += 1
        self._resume()
        try:
            yield
        finally:
            self._awaiting -= 1

    def following(self) -> Callable[[], None]:
        """A stream opened: holds begin. Call what is returned once it is closed."""
        self._streams += 1
        closed = False

        def close() -> None:
            nonlocal closed
            if not closed:
                closed = True
                self._streams -= 1
                if not self._streams:
                    self._resume()

        return close

    def data_received(self, data: bytes) -> None:
        self._inner.data_received(data)
        if not self._streams or len(data) >= FULL_READ or self._resume_at is not None:
            return
        if not self._transport.is_reading() or self._transport.is_closing():
            return
        self._transport.pause_reading()
        self.holds += 1
        hold = AWAITING_HOLD_S if self._awaiting else HOLD_S
        self._resume_at = self._loop.call_later(hold, self._resume)

    def _resume(self) -> None:
        if self._resume_at is None:
            return
        self._resume_at.cancel()
        self._resume_at = None
        if not self._transport.is_closing():
            self._transport.resume_reading()

    def eof_received(self) -> bool | None:
        return self._inner.eof_received()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._resume_at is not None:
            self._resume_at.cancel()
            self._resume_at = None
        self._inner.connection_lost(exc)

    def pause_writing(self) -> None:
        self._inner.pause_writing()

    def resume_writing(self) -> None:
        self._inner.resume_writing()


def read_in_bursts(connection: asyncssh.SSHClientConnection) -> BurstReads | None:
    """Put a ``BurstReads`` under ``connection``; ``None`` where it cannot go (a connection
    tunnelled through a jump host reads from an SSH channel, not a socket)."""
    # asyncssh keeps its transport to itself: no public call gives it.
    transport: Any = getattr(connection, "_transport", None)
    if not isinstance(transport, asyncio.Transport) or transport.get_protocol() is not connection:
        return None
    if not transport.is_reading():
        return None
    reads = BurstReads(transport, connection)
    transport.set_protocol(reads)
    return reads

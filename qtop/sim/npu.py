"""Who holds the NPU, and for how long it was busy: the link from tools to physics.

HTP needs the NPU to itself: a second user fails while one holds it (seed
000's ``fastrpc memory map ... failed``). Busy time is accumulated so the
physics loop can turn it into a load fraction per tick without the tools
knowing about ticks.
"""

from __future__ import annotations

import threading
from collections.abc import Callable


class NpuArbiter:
    """Exclusive ownership of the simulated HTP plus busy-time accounting (thread-safe)."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._owner: int | None = None
        self._busy_since: float | None = None
        self._busy_accumulated = 0.0
        self._active_tools = 0

    @property
    def owner(self) -> int | None:
        return self._owner

    def try_acquire(self, owner: int) -> bool:
        with self._lock:
            if self._owner is not None and self._owner != owner:
                return False
            self._owner = owner
            return True

    def release(self, owner: int) -> None:
        with self._lock:
            if self._owner == owner:
                self._stop_busy_locked()
                self._owner = None

    def set_busy(self, busy: bool) -> None:
        with self._lock:
            if busy and self._busy_since is None:
                self._busy_since = self._clock()
            elif not busy:
                self._stop_busy_locked()

    def _stop_busy_locked(self) -> None:
        if self._busy_since is not None:
            self._busy_accumulated += self._clock() - self._busy_since
            self._busy_since = None

    def take_busy_seconds(self, now: float) -> float:
        """Busy seconds since the previous call (an ongoing busy period counts up to ``now``)."""
        with self._lock:
            busy = self._busy_accumulated
            self._busy_accumulated = 0.0
            if self._busy_since is not None:
                busy += max(0.0, now - self._busy_since)
                self._busy_since = now
            return busy

    def tool_started(self) -> None:
        with self._lock:
            self._active_tools += 1

    def tool_finished(self) -> None:
        with self._lock:
            self._active_tools = max(0, self._active_tools - 1)

    @property
    def active_tools(self) -> int:
        return self._active_tools

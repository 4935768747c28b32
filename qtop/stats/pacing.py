"""Running figures of a paced run: deadline misses, start lateness, achieved rate, duty cycle.

A paced run's iterations arrive on a schedule (``run.rate``, ``run.schedule``)
and never wait for each other (open loop): one that cannot start at its
arrival starts when the one before ends, so its lateness (start minus arrival)
is queueing. It misses its deadline when it ends later than the deadline after
its arrival. The fold keeps bounded state, like ``RunningStats``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from qtop.stats.quantiles import RunningStats


class PacingFold:
    """Misses, lateness, first and last start and end, and busy time of paced iterations."""

    __slots__ = ("busy_s", "count", "first_start", "last_end", "last_start", "lateness", "missed")

    def __init__(self) -> None:
        self.count = 0
        self.missed = 0
        self.lateness = RunningStats()
        self.first_start = math.inf
        self.last_start = -math.inf
        self.last_end = -math.inf
        self.busy_s = 0.0

    def add(self, start: float, end: float, lateness_s: float, missed: bool) -> None:
        self.count += 1
        self.missed += bool(missed)
        self.lateness.add(lateness_s)
        self.first_start = min(self.first_start, start)
        self.last_start = max(self.last_start, start)
        self.last_end = max(self.last_end, end)
        self.busy_s += max(0.0, end - start)

    def extend(
        self,
        starts: Sequence[float],
        ends: Sequence[float],
        lateness: Sequence[float],
        missed: Sequence[bool],
    ) -> None:
        if not starts:
            return
        self.count += len(starts)
        self.missed += sum(map(bool, missed))
        self.lateness.extend(lateness)
        self.first_start = min(self.first_start, min(starts))
        self.last_start = max(self.last_start, max(starts))
        self.last_end = max(self.last_end, max(ends))
        self.busy_s += sum(max(0.0, end - start) for start, end in zip(starts, ends, strict=True))

    @property
    def miss_fraction(self) -> float | None:
        return self.missed / self.count if self.count else None

    @property
    def achieved_rate_hz(self) -> float | None:
        """Starts per second, first to last: the rate the device kept up."""
        span = self.last_start - self.first_start
        return (self.count - 1) / span if self.count > 1 and span > 0 else None

    @property
    def duty_cycle(self) -> float | None:
        """The share of the time from the first start to the last end spent running."""
        span = self.last_end - self.first_start
        return min(1.0, self.busy_s / span) if self.count and span > 0 else None

    def to_dict(self) -> dict[str, Any]:
        known = self.count > 0
        return {
            "count": self.count,
            "missed": self.missed,
            "lateness": self.lateness.to_dict(),
            "first_start": self.first_start if known else None,
            "last_start": self.last_start if known else None,
            "last_end": self.last_end if known else None,
            "busy_s": self.busy_s,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PacingFold:
        fold = cls()
        fold.count = int(data["count"])
        fold.missed = int(data["missed"])
        fold.lateness = RunningStats.from_dict(data["lateness"])
        if fold.count:
            fold.first_start = float(data["first_start"])
            fold.last_start = float(data["last_start"])
            fold.last_end = float(data["last_end"])
        fold.busy_s = float(data["busy_s"])
        return fold

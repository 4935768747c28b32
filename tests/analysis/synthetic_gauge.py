"""A synthetic fuel gauge: a known step signal, read by a slow gauge, sampled by qtop.

The true power is a step function. The gauge updates every ``refresh_s`` (from
``gauge_phase_s``) and then holds the true power of that instant until its next
update; qtop's sampler reads the held value every ``dt`` (from ``sample_phase_s``).
Both exact integrals are known: the true signal's and the gauge's own step curve.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass


def no_noise(update_time: float) -> float:
    return 0.0


@dataclass(frozen=True)
class StepSignal:
    """Watts ``levels[i]`` from ``edges[i]`` (the first edge is the start of time)."""

    edges: tuple[float, ...]
    levels: tuple[float, ...]

    def at(self, t: float) -> float:
        return self.levels[max(0, bisect.bisect_right(self.edges, t) - 1)]

    def integral(self, a: float, b: float) -> float:
        """The exact integral over [a, b]."""
        points = [a, *(e for e in self.edges if a < e < b), b]
        return math.fsum(self.at(lo) * (hi - lo) for lo, hi in itertools.pairwise(points))


@dataclass(frozen=True)
class Gauge:
    """A gauge refreshing every ``refresh_s`` from ``phase_s``, sampling ``signal`` then holding.

    ``noise`` adds a reading error that depends only on the update's time, so the
    gauge's own step curve stays exactly known.
    """

    signal: StepSignal
    refresh_s: float
    phase_s: float
    noise: Callable[[float], float] = no_noise

    def update_time(self, t: float) -> float:
        """The time of the last update at or before t."""
        k = math.floor((t - self.phase_s) / self.refresh_s + 1e-12)
        return self.phase_s + k * self.refresh_s

    def reading(self, t: float) -> float:
        update = self.update_time(t)
        return self.signal.at(update) + self.noise(update)

    def integral(self, a: float, b: float) -> float:
        """The exact integral of the gauge's held readings over [a, b]."""
        first = self.update_time(a)
        points = [a]
        k = 1
        while first + k * self.refresh_s < b:
            points.append(first + k * self.refresh_s)
            k += 1
        points.append(b)
        return math.fsum(self.reading(lo) * (hi - lo) for lo, hi in itertools.pairwise(points))


def sample_times(t0: float, t1: float, dt: float, phase_s: float = 0.0) -> list[float]:
    """Sampler ticks every dt from t0 + phase_s up to t1 (computed, not accumulated)."""
    out = []
    k = 0
    while t0 + phase_s + k * dt <= t1 + 1e-9:
        out.append(t0 + phase_s + k * dt)
        k += 1
    return out

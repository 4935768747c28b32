"""A time series for display that never grows past a fixed number of points.

When the series is full, neighbouring points are merged in pairs and every
later point covers twice as many raw values, so an hour-long session keeps its
whole shape in the same memory as its first minute. Each point keeps the mean
and the extremes of what it covers, so a chart can still show spikes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

DEFAULT_CAPACITY = 1024


@dataclass(slots=True)
class SeriesPoint:
    """The values one point of the series stands for."""

    t: float
    mean: float
    low: float
    high: float
    count: int

    def merged(self, other: SeriesPoint) -> SeriesPoint:
        total = self.count + other.count
        return SeriesPoint(
            t=(self.t * self.count + other.t * other.count) / total,
            mean=(self.mean * self.count + other.mean * other.count) / total,
            low=min(self.low, other.low),
            high=max(self.high, other.high),
            count=total,
        )


class Series:
    """Downsampling (t, value) series of bounded size."""

    __slots__ = ("_pending", "capacity", "points", "stride", "total")

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        if capacity < 2 or capacity % 2:
            raise ValueError("series capacity must be an even number >= 2")
        self.capacity = capacity
        self.points: list[SeriesPoint] = []
        self.stride = 1
        self.total = 0
        self._pending: SeriesPoint | None = None

    def add(self, t: float, value: float) -> None:
        self.total += 1
        point = SeriesPoint(t, value, value, value, 1)
        self._pending = point if self._pending is None else self._pending.merged(point)
        if self._pending.count >= self.stride:
            self.points.append(self._pending)
            self._pending = None
            if len(self.points) >= self.capacity:
                self._halve()

    def _halve(self) -> None:
        pairs = zip(self.points[0::2], self.points[1::2], strict=True)
        self.points = [first.merged(second) for first, second in pairs]
        self.stride *= 2

    def view(self) -> list[SeriesPoint]:
        """All points, including the one still being filled."""
        return self.points + ([self._pending] if self._pending is not None else [])

    def last(self) -> SeriesPoint | None:
        if self._pending is not None:
            return self._pending
        return self.points[-1] if self.points else None

    def to_dict(self) -> dict[str, Any]:
        def rows(points: list[SeriesPoint]) -> list[list[float]]:
            return [[p.t, p.mean, p.low, p.high, p.count] for p in points]

        return {
            "capacity": self.capacity,
            "stride": self.stride,
            "total": self.total,
            "points": rows(self.points),
            "pending": rows([self._pending]) if self._pending else [],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Series:
        series = cls(int(data["capacity"]))
        series.stride = int(data["stride"])
        series.total = int(data["total"])
        series.points = [SeriesPoint(t, m, lo, hi, int(n)) for t, m, lo, hi, n in data["points"]]
        pending = data.get("pending") or []
        if pending:
            t, m, lo, hi, n = pending[0]
            series._pending = SeriesPoint(t, m, lo, hi, int(n))
        return series

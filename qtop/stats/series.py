"""A time series for display that never grows past a fixed number of points.

When the series is full, neighbouring points are merged in pairs and every
later point covers twice as many raw values, so an hour-long session keeps its
whole shape in the same memory as its first minute. Each point keeps the mean
and the extremes of what it covers, so a chart can still show spikes.

A point that stands for one value keeps it exactly. A merged point's time is
rounded to the microsecond (the device clock's resolution) and its mean to
seven significant digits: far below what a chart can show, and it keeps the
snapshot a keyframe carries to about a third of its size. Live and replay run
this same code, so they agree on every bit.
"""

from __future__ import annotations

import functools
import itertools
import operator
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

DEFAULT_CAPACITY = 1024


def _rounded_mean(value: float) -> float:
    return float(f"{value:.7g}")


def _runs(values: list[int]) -> list[list[int]]:
    """[[value, repeat], ...]: every point of a full series covers the same count."""
    runs: list[list[int]] = []
    for value in values:
        if runs and runs[-1][0] == value:
            runs[-1][1] += 1
        else:
            runs.append([value, 1])
    return runs


class SeriesPoint(NamedTuple):
    """The values one point of the series stands for (a tuple: restoring 20,000 is quick)."""

    t: float
    mean: float
    low: float
    high: float
    count: int  # type: ignore[assignment]  # shadows tuple.count, which nothing calls here

    def merged(self, other: SeriesPoint) -> SeriesPoint:
        total = self.count + other.count
        return SeriesPoint(
            t=round((self.t * self.count + other.t * other.count) / total, 6),
            mean=_rounded_mean((self.mean * self.count + other.mean * other.count) / total),
            low=min(self.low, other.low),
            high=max(self.high, other.high),
            count=total,
        )


# tuple.__new__ bound to the class: builds points from rows at C speed (a seek restores ~20,000).
point_from_row = functools.partial(tuple.__new__, SeriesPoint)
# A sum in the order add makes it: ((a + b) + c) + ... (the builtin sum may compensate).
_sum = functools.partial(functools.reduce, operator.add)


class Series:
    """Downsampling (t, value) series of bounded size."""

    __slots__ = ("_high", "_low", "_n", "_t_sum", "_v_sum", "capacity", "points", "stride",
                 "total")  # fmt: skip

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        if capacity < 2 or capacity % 2:
            raise ValueError("series capacity must be an even number >= 2")
        self.capacity = capacity
        self.points: list[SeriesPoint] = []
        self.stride = 1
        self.total = 0
        # The point being filled, as running sums (exact while it holds one value).
        self._n = 0
        self._t_sum = 0.0
        self._v_sum = 0.0
        self._low = 0.0
        self._high = 0.0

    def add(self, t: float, value: float) -> None:
        self.total += 1
        n = self._n
        if n == 0:
            self._t_sum, self._v_sum, self._low, self._high = t, value, value, value
        else:
            self._t_sum += t
            self._v_sum += value
            if value < self._low:
                self._low = value
            elif value > self._high:
                self._high = value
        self._n = n = n + 1
        if n >= self.stride:
            self.points.append(self._pending_point())
            self._n = 0
            if len(self.points) >= self.capacity:
                self._halve()

    def extend(self, times: Sequence[float], values: Sequence[float]) -> None:
        """``add`` of each (t, value) in turn, with the same bits.

        Whole points are made from slices, many at a time, in C: the sums by
        ``reduce`` (the same additions in the same order as ``add``), the
        extremes by ``min`` and ``max`` (which keep the first of equal values, as
        ``add``'s comparisons do), the rounding by ``round`` and ``format`` (what
        ``_pending_point`` calls). Only values that finish or start a partial
        point go one by one.
        """
        count = len(values)
        if len(times) != count:
            raise ValueError("times and values of different lengths")
        position = 0
        while position < count:
            stride = self.stride
            if self._n or position + stride > count:
                self.add(times[position], values[position])
                position += 1
                continue
            points = min((count - position) // stride, self.capacity - len(self.points))
            stop = position + points * stride
            if stride == 1:
                column = values[position:stop]
                rows: Any = zip(times[position:stop], column, column, column, itertools.repeat(1))
            else:
                starts = range(position, stop, stride)
                cuts = list(map(slice, starts, map(operator.add, starts, itertools.repeat(stride))))
                chunks = list(map(values.__getitem__, cuts))
                sums = map(_sum, map(times.__getitem__, cuts))
                means = map(operator.truediv, map(_sum, chunks), itertools.repeat(stride))
                rows = zip(
                    map(round, map(operator.truediv, sums, itertools.repeat(stride)),
                        itertools.repeat(6)),
                    map(float, map(format, means, itertools.repeat(".7g"))),
                    map(min, chunks),
                    map(max, chunks),
                    itertools.repeat(stride),
                )  # fmt: skip
            self.points.extend(map(point_from_row, rows))
            self.total += stop - position
            position = stop
            if len(self.points) >= self.capacity:
                self._halve()

    def _pending_point(self) -> SeriesPoint:
        n = self._n
        if n == 1:
            return SeriesPoint(self._t_sum, self._v_sum, self._low, self._high, 1)
        return SeriesPoint(
            round(self._t_sum / n, 6), _rounded_mean(self._v_sum / n), self._low, self._high, n
        )

    def _halve(self) -> None:
        """Neighbouring points merged in pairs (``SeriesPoint.merged``, in C over columns)."""
        t0, m0, l0, h0, c0 = zip(*self.points[0::2], strict=True)
        t1, m1, l1, h1, c1 = zip(*self.points[1::2], strict=True)
        mul, add, div = operator.mul, operator.add, operator.truediv
        totals = list(map(add, c0, c1))
        times = map(div, map(add, map(mul, t0, c0), map(mul, t1, c1)), totals)
        means = map(div, map(add, map(mul, m0, c0), map(mul, m1, c1)), totals)
        self.points = list(
            map(
                point_from_row,
                zip(
                    map(round, times, itertools.repeat(6)),
                    map(float, map(format, means, itertools.repeat(".7g"))),
                    map(min, l0, l1),
                    map(max, h0, h1),
                    totals,
                    strict=False,
                ),
            )
        )
        self.stride *= 2

    def view(self) -> list[SeriesPoint]:
        """All points, including the one still being filled."""
        return self.points + ([self._pending_point()] if self._n else [])

    def last(self) -> SeriesPoint | None:
        if self._n:
            return self._pending_point()
        return self.points[-1] if self.points else None

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON, one list per field: a keyframe patch then only carries new points."""
        points = self.points
        return {
            "capacity": self.capacity,
            "stride": self.stride,
            "total": self.total,
            "t": [p.t for p in points],
            "mean": [p.mean for p in points],
            "low": [p.low for p in points],
            "high": [p.high for p in points],
            "counts": _runs([p.count for p in points]),
            "filling": (
                [self._t_sum, self._v_sum, self._low, self._high, self._n] if self._n else None
            ),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Series:
        """From ``to_dict``, or from a version 1 keyframe's ``points`` and ``pending`` rows."""
        series = cls(int(data["capacity"]))
        series.stride = int(data["stride"])
        series.total = int(data["total"])
        if "points" in data:
            rows: Iterable[tuple[Any, Any, Any, Any, int]] = [
                (t, m, lo, hi, int(n)) for t, m, lo, hi, n in data["points"]
            ]
            pending = (data.get("pending") or [None])[0]
            if pending:
                t, mean, low, high, n = pending
                # Version 1 kept the filling point as means: its sums are these.
                pending = [t * n, mean * n, low, high, n]
        else:
            counts = itertools.chain.from_iterable(
                itertools.repeat(int(count), int(repeat)) for count, repeat in data["counts"]
            )
            rows = zip(data["t"], data["mean"], data["low"], data["high"], counts, strict=True)
            pending = data.get("filling")
        series.points = list(map(point_from_row, rows))
        if pending:
            series._t_sum, series._v_sum, series._low, series._high, n = pending
            series._n = int(n)
        return series

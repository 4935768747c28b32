"""How often each sensor really updates, estimated from when its value changes.

A fuel gauge that refreshes once a second, sampled at 10 Hz, repeats each
value ten times: the repeats are the sensor's, and a user should know that
before reading a flat power curve as flat power. The estimate is the median
time between changes over a sliding window; when a reading happens to repeat
across a real update it errs long, so the warning needs a clear margin.
"""

from __future__ import annotations

import statistics
from collections import deque
from dataclasses import dataclass, field

ESTIMATED_KINDS = ("temperature", "current", "voltage", "power")
MIN_CHANGES = 6
WINDOW = 32
SLOWER_FACTOR = 2.0


@dataclass(slots=True)
class _Track:
    last_value: float | None = None
    change_times: deque[float] = field(default_factory=lambda: deque(maxlen=WINDOW))
    warned: bool = False


class RefreshEstimator:
    """Feed it every sample; it says once per channel when sampling outpaces the sensor."""

    def __init__(self, interval_s: float, kinds: dict[str, str]) -> None:
        self.interval_s = interval_s
        self._tracks = {cid: _Track() for cid, kind in kinds.items() if kind in ESTIMATED_KINDS}

    def observe(self, t: float, values: dict[str, float | None]) -> list[str]:
        """Warnings that became true with this sample (each channel at most once)."""
        warnings = []
        for channel, track in self._tracks.items():
            value = values.get(channel)
            if value is None:
                continue
            if track.last_value is not None and value != track.last_value:
                track.change_times.append(t)
            track.last_value = value
            if track.warned:
                continue
            period = self._period(track)
            if period is not None and period >= SLOWER_FACTOR * self.interval_s:
                track.warned = True
                warnings.append(
                    f"{channel} refreshes about every {period:.2g} s but is sampled every "
                    f"{self.interval_s:g} s: its repeated values come from the sensor"
                )
        return warnings

    @staticmethod
    def _period(track: _Track) -> float | None:
        times = track.change_times
        if len(times) < MIN_CHANGES:
            return None
        gaps = [b - a for a, b in zip(list(times)[:-1], list(times)[1:], strict=True)]
        return statistics.median(gaps)

    def periods(self) -> dict[str, float]:
        """The current estimate per channel, for channels with enough changes."""
        estimates = {}
        for channel, track in self._tracks.items():
            period = self._period(track)
            if period is not None:
                estimates[channel] = period
        return estimates

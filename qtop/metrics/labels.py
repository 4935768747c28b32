"""Label values from device text: short, printable, distinct, and few.

Zone and cooling-device names come from the device (``thermal_zone*/type``),
as do hostnames and the tools' metric names; a broken or hostile device could
send a name a megabyte long or ten thousand zones, and every distinct label
value is a time series Prometheus keeps. Escaping quotes and newlines is the
client library's job; here values are cut to ``MAX_LABEL_CHARS`` of a safe
alphabet and each family keeps at most a fixed number of them. What is left
out is counted, never silently dropped (``qtop_metrics_series_dropped``).
"""

from __future__ import annotations

import re

MAX_LABEL_CHARS = 64
# A real board has a few dozen thermal zones and a handful of cooling devices.
MAX_ZONES = 128
MAX_COOLING_DEVICES = 64
MAX_VARIANTS = 32
MAX_ITERATION_METRICS = 16
MAX_TRIPS_PER_ZONE = 8

_UNSAFE = re.compile(r"[^A-Za-z0-9_.:+#/@-]+")


def clean_value(text: str) -> str:
    """``text`` in the safe alphabet (runs of anything else become ``_``), at most 64 chars."""
    cleaned = _UNSAFE.sub("_", text)
    if len(cleaned) > MAX_LABEL_CHARS:
        cleaned = cleaned[: MAX_LABEL_CHARS - 1] + "~"
    return cleaned


class LabelSet:
    """Distinct clean label values for up to ``limit`` raw names, in the order first seen.

    Two names that clean to the same value get ``~2``, ``~3``... so their series
    stay apart; names past the limit get no value and are counted in ``dropped``.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.dropped = 0
        self._values: dict[str, str] = {}
        self._taken: set[str] = set()

    def value(self, name: str) -> str | None:
        known = self._values.get(name)
        if known is not None:
            return known
        if len(self._values) >= self.limit:
            self.dropped += 1
            return None
        base = clean_value(name)
        candidate, number = base, 2
        while candidate in self._taken:
            suffix = f"~{number}"
            candidate = base[: MAX_LABEL_CHARS - len(suffix)] + suffix
            number += 1
        self._values[name] = candidate
        self._taken.add(candidate)
        return candidate

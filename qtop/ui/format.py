"""Text for the panes: numbers with units, durations, truncation, sparklines, axis ticks.

Pure functions with no Textual import, so they are tested on their own and the
panes stay about layout. Numbers use the report's ``fmt`` so a figure reads the
same on screen and in ``qtop report``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from qtop.table import MISSING, fmt

__all__ = [
    "MISSING",
    "clock",
    "ellipsize",
    "fmt",
    "fmt_ms",
    "nice_step",
    "offset",
    "percent",
    "smaller_step",
    "sparkline",
    "with_unit",
]

SPARK_LEVELS = "▁▂▃▄▅▆▇█"


def fmt_ms(seconds: float | None, digits: int = 3) -> str:
    """Seconds as milliseconds, the way ``report`` prints them (no unit)."""
    if seconds is None or not math.isfinite(seconds):
        return MISSING
    return fmt(seconds * 1000, digits)


def with_unit(value: float | None, unit: str, digits: int = 2) -> str:
    """``12.34 W``; a dash when the value is missing."""
    text = fmt(value, digits)
    return text if text == MISSING else f"{text} {unit}"


def percent(ratio: float | None, digits: int = 1, signed: bool = False) -> str:
    if ratio is None or not math.isfinite(ratio):
        return MISSING
    return f"{ratio * 100:+.{digits}f}%" if signed else f"{ratio * 100:.{digits}f}%"


def clock(seconds: float | None) -> str:
    """A duration as m:ss, or h:mm:ss past an hour."""
    if seconds is None or not math.isfinite(seconds):
        return MISSING
    total = max(0, round(seconds))
    minutes, secs = divmod(total, 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def offset(seconds: float | None) -> str:
    """A time after the start: ``+1:05``."""
    text = clock(seconds)
    return text if text == MISSING else f"+{text}"


def ellipsize(text: str, width: int) -> str:
    """Cut ``text`` to ``width`` cells, marking the cut with an ellipsis."""
    if width <= 0:
        return ""
    if len(text) <= width:
        return text
    return text[: width - 1] + "…"


def sparkline(values: Sequence[float], width: int, low: float | None = None,
              high: float | None = None) -> str:  # fmt: skip
    """Block-character sparkline of the last values, one cell per bucket of values.

    Values are grouped into ``width`` equal buckets (the maximum of each is
    drawn, so a short spike still shows); fewer values than cells draw one cell
    each, left-aligned.
    """
    if width <= 0 or not values:
        return ""
    if len(values) > width:
        size = len(values) / width
        buckets = [
            max(values[int(i * size) : max(int((i + 1) * size), int(i * size) + 1)])
            for i in range(width)
        ]
    else:
        buckets = list(values)
    low = min(buckets) if low is None else low
    high = max(buckets) if high is None else high
    span = high - low
    top = len(SPARK_LEVELS) - 1
    if span <= 0:
        return SPARK_LEVELS[0] * len(buckets)
    return "".join(
        SPARK_LEVELS[min(top, max(0, round((value - low) / span * top)))] for value in buckets
    )


def nice_step(raw: float) -> float:
    """The round step (1, 2 or 5 times a power of ten) nearest ``raw``, erring small."""
    if not (raw > 0 and math.isfinite(raw)):
        return 1.0
    magnitude = 10 ** math.floor(math.log10(raw))
    return next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= 0.75 * raw)


def smaller_step(step: float) -> float:
    """The next round step below ``step``: 5 -> 2 -> 1 -> 0.5."""
    magnitude = 10 ** math.floor(math.log10(step) + 1e-9)
    mantissa = round(step / magnitude)
    return {1: 0.5, 2: 1.0, 5: 2.0}.get(mantissa, 0.5) * magnitude


def tick_label(value: float, step: float) -> str:
    """A tick value with just enough decimals for its step (a 1, 2 or 5 step needs no more)."""
    decimals = max(0, -math.floor(math.log10(step) + 1e-9)) if step > 0 else 0
    return f"{value + 0.0:.{decimals}f}"

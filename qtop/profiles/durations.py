"""Durations as people type them: ``90``, ``0.5``, ``250ms``, ``30s``, ``10m``, ``1h30m``.

A bare number is seconds, in a profile and on the command line alike. Limits
are not checked here: each key's range lives in the schema (``values.py``).
"""

from __future__ import annotations

import math
import re
from typing import Any

from qtop.profiles.issues import describe

UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0, "d": 86400.0}
_NUMBER = r"(?:\d+(?:\.\d*)?|\.\d+)"
# Longest alternatives first, so that "min" is not read as "m" followed by "in".
_UNIT = r"(?:ms|min|s|m|h|d)"
_PART = re.compile(rf"({_NUMBER})\s*({_UNIT})", re.IGNORECASE)
_BARE = re.compile(rf"^\s*{_NUMBER}\s*\Z")
_WITH_UNITS = re.compile(rf"^\s*(?:{_NUMBER}\s*{_UNIT}\s*)+\Z", re.IGNORECASE)
# The same grammar for JSON Schema (ECMA-262 and Python ``re`` read it alike).
DURATION_PATTERN = (
    rf"^\s*{_NUMBER}\s*$|^\s*(?:{_NUMBER}\s*(?:[mM][sS]|[mM][iI][nN]|[sSmMhHdD])\s*)+$"
)
ACCEPTED_FORMS = "seconds (90, 0.5) or a number with a unit (250ms, 30s, 10m, 1h30m, 2d)"


class DurationError(ValueError):
    """Text or a value that is not a duration; ``fix`` shows the accepted forms."""

    def __init__(self, message: str, fix: str) -> None:
        super().__init__(message)
        self.fix = fix


def forms_fix(example: str | None = None) -> str:
    return f"write {ACCEPTED_FORMS}" + (f", e.g. {example}" if example else "")


def is_bare_number(value: Any) -> bool:
    """True for a number, or text that is only a number: the unit was left out."""
    if isinstance(value, bool):
        return False
    return isinstance(value, int | float) or (isinstance(value, str) and bool(_BARE.match(value)))


def shown(value: Any) -> str:
    """A duration as the user gave it, with the unit a bare number implies."""
    if isinstance(value, str):
        text = value.strip()
        return f"{text} s" if _BARE.match(text) else text
    if isinstance(value, float) and not math.isfinite(value):
        return ".nan" if math.isnan(value) else ("-.inf" if value < 0 else ".inf")
    return f"{value:g} s"


def parse_duration(value: Any, example: str | None = None) -> float:
    """Seconds from ``90``, ``0.5``, ``"250ms"``, ``"10m"``, ``"1h30m"``, ``"1h 30m"``.

    Refuses negative, infinite and NaN values; zero is returned as 0.0 (whether
    zero is allowed is up to the key).
    """
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise DurationError(f"expected a duration, got {describe(value)}", forms_fix(example))
    if isinstance(value, int | float):
        seconds = float(value)
    else:
        text = value.strip()
        if text.startswith("-") and (_BARE.match(text[1:]) or _WITH_UNITS.match(text[1:])):
            raise DurationError(f"{text} is negative", forms_fix(example))
        if _BARE.match(text):
            seconds = float(text)
        elif _WITH_UNITS.match(text):
            seconds = sum(
                float(number) * UNIT_SECONDS[unit.lower()] for number, unit in _PART.findall(text)
            )
        else:
            raise DurationError(f"{describe(value)} is not a duration", forms_fix(example))
    if math.isnan(seconds):
        raise DurationError(f"{shown(value)} is not a number", forms_fix(example))
    if math.isinf(seconds):
        raise DurationError(f"{shown(value)} is not a finite duration", forms_fix(example))
    if seconds < 0:
        raise DurationError(f"{shown(value)} is negative", forms_fix(example))
    return seconds


def format_duration(seconds: float) -> str:
    """The shortest exact text for ``seconds``: ``10ms``, ``1.5s``, ``10m``, ``1h30m``, ``7d``."""
    if seconds == 0:
        return "0s"
    if seconds < 1:
        return f"{seconds * 1000:g}ms"
    if seconds != int(seconds) or seconds < 60:
        return f"{seconds:g}s"
    parts: list[str] = []
    rest = int(seconds)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        count, rest = divmod(rest, size)
        if count:
            parts.append(f"{count}{unit}")
    return "".join(parts)

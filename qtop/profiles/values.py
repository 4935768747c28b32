"""The kinds of value a profile key takes, each with its limits, messages and JSON Schema.

A limit is stated once, here or in the key's declaration, and every message
and the docs quote it from there: the YAML and the command line give the same
message for the same value.
"""

from __future__ import annotations

import difflib
import math
import re
from typing import Any

from qtop.profiles.durations import (
    DURATION_PATTERN,
    DurationError,
    format_duration,
    is_bare_number,
    parse_duration,
    shown,
)
from qtop.profiles.issues import Invalid, describe
from qtop.profiles.schema import JsonContext, Kind, Spot

# C0 controls but tab (and newline where a key takes several lines), DEL and the C1
# controls: a NUL cannot cross the shell, an escape sequence must not reach a terminal.
_CONTROL_ONE_LINE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")
_CONTROL_LINES = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_JSON_ONE_LINE = r"^[^\u0000-\u0008\u000a-\u001f\u007f-\u009f]*$"
_JSON_LINES = r"^[^\u0000-\u0008\u000b-\u001f\u007f-\u009f]*$"
_INTEGER_TEXT = re.compile(r"^[+-]?\d{1,30}\Z")


def _control_problem(text: str, multiline: bool) -> Invalid | None:
    found = (_CONTROL_LINES if multiline else _CONTROL_ONE_LINE).search(text)
    if found is None:
        return None
    if found.group() == "\n":
        return Invalid(
            "must be one line, but it has a line break",
            "remove the line break (a '>' or '|' block adds one at the end: use '>-' or '|-')",
        )
    return Invalid(
        f"contains the control character U+{ord(found.group()):04X} at position {found.start()}",
        "remove it: control characters (NUL, escape, ...) cannot be passed on intact",
    )


class Text(Kind):
    """Text; a YAML integer is taken as its digits, a float must be quoted."""

    def __init__(
        self,
        *,
        multiline: bool = False,
        pattern: str | None = None,
        pattern_problem: str = "is not accepted here",
        pattern_fix: str = "",
        max_length: int = 4096,
    ) -> None:
        self.multiline = multiline
        self.pattern = re.compile(pattern) if pattern else None
        self.pattern_problem = pattern_problem
        self.pattern_fix = pattern_fix
        self.max_length = max_length

    def convert(self, raw: Any, spot: Spot) -> str:
        if isinstance(raw, float):
            raise Invalid(
                f"expected text, got the number {describe(raw)}",
                f"quote it ('{raw}'): YAML reads an unquoted 1.10 as the number 1.1",
            )
        if isinstance(raw, bool) or not isinstance(raw, str | int):
            fix = "quote it if you mean the text" if isinstance(raw, bool) else None
            if fix is None and spot.example:
                fix = f"write text, e.g. {spot.example}"
            raise Invalid(f"expected text, got {describe(raw)}", fix)
        text = str(raw)
        problem = _control_problem(text, self.multiline)
        if problem is not None:
            raise problem
        if not text.strip():
            example = f", e.g. {spot.example}" if spot.example else ""
            raise Invalid("is empty", f"give a value{example}, or delete the key")
        if len(text) > self.max_length:
            raise Invalid(
                f"is {len(text)} characters long; the most accepted is {self.max_length}",
                "shorten it (a long script belongs in a file on the device)",
            )
        if self.pattern is not None and not self.pattern.match(text):
            raise Invalid(f"{describe(text)} {self.pattern_problem}", self.pattern_fix)
        return text

    def placeholder(self) -> str:
        return ""

    def json_schema(self, context: JsonContext) -> dict[str, Any]:
        pattern = self.pattern.pattern if self.pattern else None
        if pattern is None:
            pattern = _JSON_LINES if self.multiline else _JSON_ONE_LINE
        schema: dict[str, Any] = {
            "type": ["string", "integer"],
            "minLength": 1,
            "maxLength": self.max_length,
        }
        schema["pattern"] = pattern
        return schema

    def accepts(self) -> str:
        return "text" + (" (several lines allowed)" if self.multiline else "")

    def show(self, value: Any) -> str:
        return f"`{value}`"


class Integer(Kind):
    """A whole number within [minimum, maximum]."""

    def __init__(self, minimum: int, maximum: int) -> None:
        self.minimum = minimum
        self.maximum = maximum

    def _fix(self, spot: Spot) -> str:
        return f"write a whole number from {self.minimum} to {self.maximum}" + (
            f", e.g. {spot.example}" if spot.example else ""
        )

    def convert(self, raw: Any, spot: Spot) -> int:
        value = raw
        if isinstance(raw, float) and math.isfinite(raw) and raw.is_integer():
            value = int(raw)
        if isinstance(value, bool) or not isinstance(value, int):
            raise Invalid(f"expected a whole number, got {describe(raw)}", self._fix(spot))
        if value < self.minimum:
            raise Invalid(f"{describe(raw)} is below the minimum, {self.minimum}", self._fix(spot))
        if value > self.maximum:
            raise Invalid(f"{describe(raw)} is above the maximum, {self.maximum}", self._fix(spot))
        return value

    def from_text(self, text: str, spot: Spot) -> int:
        if not _INTEGER_TEXT.match(text.strip()):
            raise Invalid(f"{describe(text)} is not a whole number", self._fix(spot))
        return self.convert(int(text), spot)

    def placeholder(self) -> int:
        return self.minimum

    def json_schema(self, context: JsonContext) -> dict[str, Any]:
        return {"type": "integer", "minimum": self.minimum, "maximum": self.maximum}

    def accepts(self) -> str:
        return f"whole number, {self.minimum}–{self.maximum}"


class Number(Kind):
    """A finite number within [minimum, maximum], in ``unit``."""

    def __init__(
        self,
        minimum: float,
        maximum: float,
        unit: str,
        warn_above: float | None = None,
        warning: str = "",
    ) -> None:
        self.minimum = minimum
        self.maximum = maximum
        self.unit = unit
        self.warn_above = warn_above
        self.warning = warning

    def _range(self) -> str:
        return f"{self.minimum:g} to {self.maximum:g} {self.unit}"

    def _fix(self, spot: Spot) -> str:
        return f"write a number from {self._range()}" + (
            f", e.g. {spot.example}" if spot.example else ""
        )

    def above_maximum_fix(self, value: float, spot: Spot) -> str:
        return self._fix(spot)

    def convert(self, raw: Any, spot: Spot) -> float:
        if isinstance(raw, bool) or not isinstance(raw, int | float):
            raise Invalid(f"expected a number, got {describe(raw)}", self._fix(spot))
        if isinstance(raw, float) and math.isnan(raw):
            raise Invalid(".nan is not a number", self._fix(spot))
        if isinstance(raw, int) and raw.bit_length() > 1000:
            raise Invalid(f"{describe(raw)} is above the maximum, {self.maximum:g}", None)
        value = float(raw)
        if value < self.minimum:
            raise Invalid(
                f"{describe(raw)} {self.unit} is below the minimum, {self.minimum:g} {self.unit}",
                self._fix(spot),
            )
        if value > self.maximum:
            raise Invalid(
                f"{describe(raw)} {self.unit} is above the maximum, {self.maximum:g} {self.unit}",
                self.above_maximum_fix(value, spot),
            )
        if self.warn_above is not None and value > self.warn_above:
            spot.warn(f"{value:g} {self.unit} {self.warning}", self._fix(spot))
        return value

    def from_text(self, text: str, spot: Spot) -> float:
        try:
            value = float(text)
        except ValueError:
            raise Invalid(f"{describe(text)} is not a number", self._fix(spot)) from None
        return self.convert(value, spot)

    def placeholder(self) -> float:
        return self.minimum

    def json_schema(self, context: JsonContext) -> dict[str, Any]:
        return {"type": "number", "minimum": self.minimum, "maximum": self.maximum}

    def accepts(self) -> str:
        return f"number, {self.minimum:g}–{self.maximum:g} {self.unit}"

    def show(self, value: Any) -> str:
        return f"`{value:g}`"


class Temperature(Number):
    """Degrees Celsius; the millidegrees sysfs speaks are caught with their fix."""

    def __init__(self, minimum: float, maximum: float, warn_above: float) -> None:
        super().__init__(
            minimum,
            maximum,
            "°C",
            warn_above,
            "is above where SoCs throttle or shut down: waiting to cool below it never waits",
        )

    def above_maximum_fix(self, value: float, spot: Spot) -> str:
        if self.minimum <= value / 1000 <= self.maximum:
            return f"{value:g} looks like millidegrees (as sysfs has them): write {value / 1000:g}"
        return self._fix(spot)


class Percent(Number):
    """A share in percent: ``5%``, or a bare number of percent (``5`` is 5%)."""

    def __init__(self, minimum: float, maximum: float) -> None:
        super().__init__(minimum, maximum, "%")

    def _range(self) -> str:
        return f"{self.minimum:g}% to {self.maximum:g}%"

    def convert(self, raw: Any, spot: Spot) -> float:
        if isinstance(raw, bool) or not isinstance(raw, str | int | float):
            raise Invalid(f"expected a percentage, got {describe(raw)}", self._fix(spot))
        text = str(raw).strip()
        number = text[:-1].strip() if text.endswith("%") else text
        try:
            value = float(number)
        except ValueError:
            raise Invalid(f"{describe(raw)} is not a percentage", self._fix(spot)) from None
        if not math.isfinite(value):
            raise Invalid(f"{describe(raw)} is not a finite percentage", self._fix(spot))
        shown_value = f"{number}%"
        if value < self.minimum:
            raise Invalid(f"{shown_value} is below the minimum, {self.minimum:g}%", self._fix(spot))
        if value > self.maximum:
            raise Invalid(f"{shown_value} is above the maximum, {self.maximum:g}%", self._fix(spot))
        return value

    def from_text(self, text: str, spot: Spot) -> float:
        return self.convert(text, spot)

    def json_schema(self, context: JsonContext) -> dict[str, Any]:
        return {
            "anyOf": [
                super().json_schema(context),
                {"type": "string", "pattern": r"^\s*[0-9]+(\.[0-9]+)?\s*%?\s*$"},
            ]
        }

    def accepts(self) -> str:
        return f"percentage, {self.minimum:g}–{self.maximum:g}% (`5%` or `5`)"

    def show(self, value: Any) -> str:
        return f"`{value:g}%`"


class Duration(Kind):
    """A duration within [minimum, maximum] seconds: ``90``, ``250ms``, ``10m``, ``1h30m``.

    ``warn_bare_above``: a bare number above it is probably a unit left out
    (``sample_interval: 100`` is 100 s), so it gets a warning naming the fix.
    """

    def __init__(
        self, minimum: float, maximum: float, warn_bare_above: float | None = None
    ) -> None:
        self.minimum = minimum
        self.maximum = maximum
        self.warn_bare_above = warn_bare_above

    def _range_fix(self, spot: Spot) -> str:
        low, high = format_duration(self.minimum), format_duration(self.maximum)
        return f"give a duration from {low} to {high}" + (
            f", e.g. {spot.example}" if spot.example else ""
        )

    def convert(self, raw: Any, spot: Spot) -> float:
        try:
            seconds = parse_duration(raw, spot.example)
        except DurationError as exc:
            raise Invalid(str(exc), exc.fix) from None
        if seconds < self.minimum:
            raise Invalid(
                f"{shown(raw)} is below the minimum, {format_duration(self.minimum)}",
                self._range_fix(spot),
            )
        if seconds > self.maximum:
            raise Invalid(
                f"{shown(raw)} is above the maximum, {format_duration(self.maximum)}",
                self._range_fix(spot),
            )
        if (
            self.warn_bare_above is not None
            and seconds > self.warn_bare_above
            and is_bare_number(raw)
        ):
            number = str(raw).strip()
            spot.warn(
                f"{shown(raw)} is unusually long here (a number without a unit is seconds)",
                f"did you mean {number}ms? write the unit"
                + (f", e.g. {spot.example}" if spot.example else ""),
            )
        return seconds

    def placeholder(self) -> float:
        return self.minimum

    def json_schema(self, context: JsonContext) -> dict[str, Any]:
        return {
            "anyOf": [
                {"type": "number", "minimum": self.minimum, "maximum": self.maximum},
                {"type": "string", "pattern": DURATION_PATTERN},
            ]
        }

    def accepts(self) -> str:
        return f"duration, {format_duration(self.minimum)}–{format_duration(self.maximum)}"

    def show(self, value: Any) -> str:
        return f"`{format_duration(value)}`"


class Choice(Kind):
    """One of a fixed set of words."""

    def __init__(self, *choices: str) -> None:
        self.choices = choices

    def convert(self, raw: Any, spot: Spot) -> str:
        if isinstance(raw, str) and raw in self.choices:
            return raw
        close = difflib.get_close_matches(str(raw)[:100], self.choices, n=1)
        fix = f"did you mean '{close[0]}'?" if close else f"use one of: {', '.join(self.choices)}"
        raise Invalid(f"{describe(raw)} is not one of {', '.join(self.choices)}", fix)

    def placeholder(self) -> str:
        return self.choices[0]

    def json_schema(self, context: JsonContext) -> dict[str, Any]:
        return {"enum": list(self.choices)}

    def accepts(self) -> str:
        return ", ".join(f"`{choice}`" for choice in self.choices)


def _names(raw: Any, what: str, fix: str) -> tuple[str, ...]:
    if not isinstance(raw, list):
        raise Invalid(f"expected a list of {what}, got {describe(raw)}", fix)
    if not raw:
        raise Invalid("is an empty list", fix)
    for item in raw:
        if not isinstance(item, str) or not item.strip():
            raise Invalid(f"expected a list of {what}, but one item is {describe(item)}", fix)
        problem = _control_problem(item, multiline=False)
        if problem is not None:
            raise problem
    return tuple(raw)


_NAME_LIST_JSON: dict[str, Any] = {
    "type": "array",
    "minItems": 1,
    "items": {"type": "string", "minLength": 1, "pattern": _JSON_ONE_LINE},
}


class Selection(Kind):
    """``all``, ``none`` or a list of names and shell patterns."""

    def __init__(self, example: str) -> None:
        self.fix = f"write all, none or a list, e.g. {example}"

    def convert(self, raw: Any, spot: Spot) -> str | tuple[str, ...]:
        if isinstance(raw, str) and raw.strip().lower() in ("all", "none"):
            return raw.strip().lower()
        if not isinstance(raw, list):
            raise Invalid(f"expected all, none or a list of names, got {describe(raw)}", self.fix)
        return _names(raw, "names or patterns", self.fix)

    def placeholder(self) -> str:
        return "all"

    def json_schema(self, context: JsonContext) -> dict[str, Any]:
        return {"anyOf": [{"enum": ["all", "none"]}, _NAME_LIST_JSON]}

    def accepts(self) -> str:
        return "`all`, `none` or a list of names/patterns"

    def show(self, value: Any) -> str:
        return f"`{value}`" if isinstance(value, str) else f"`{list(value)}`"


class Patterns(Kind):
    """A non-empty list of names and shell patterns."""

    def __init__(self, example: str) -> None:
        self.fix = f"list them, e.g. {example}"

    def convert(self, raw: Any, spot: Spot) -> tuple[str, ...]:
        return _names(raw, "names or patterns", self.fix)

    def placeholder(self) -> tuple[str, ...]:
        return ()

    def json_schema(self, context: JsonContext) -> dict[str, Any]:
        return dict(_NAME_LIST_JSON)

    def accepts(self) -> str:
        return "a list of names/patterns"

    def show(self, value: Any) -> str:
        return "`[" + ", ".join(f"'{item}'" for item in value) + "]`"

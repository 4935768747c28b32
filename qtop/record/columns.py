"""Columns: one field of a run of events, written once for the whole run.

A packed line (``iterations``, ``logs``) holds a run of events of one kind
field by field. Each field is a column of ``n`` values written in the
shortest of these forms (``docs/recording-format.md``, "Columns"):

* absent: every value is the field's default;
* a scalar: every value is that scalar;
* a list: one value per event;
* ``{"runs": [[value, count], ...]}``: each value repeated ``count`` times;
* ``{"steps": [[first, count], ...]}``: integers counting up by one from ``first``;
* ``{"micro": [integer, ...]}``: numbers in millionths (a latency of 2137 µs is
  ``2137``, meaning 0.002137).

Host times are written as the first one plus the integer differences from
each to the next in units of 100 ns (``host_dt``). Both scaled forms are
exact: a float whose shortest decimal has at most k decimals is the correctly
rounded quotient of that decimal's digits by 10^k, which is what a reader
computes. The encoder checks every value round-trips and otherwise writes
plain numbers, so nothing depends on that argument.
"""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

import msgspec

from qtop.events import Finite, Int64

HOST_UNITS_PER_S = 10_000_000
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_HOST_DECIMALS = 7


class ColumnError(ValueError):
    """A column that cannot be expanded into its ``n`` values."""


class Form(msgspec.Struct, forbid_unknown_fields=True):
    """The object forms of a column: repeated values or counting integers."""

    # Plain ints here: msgspec 0.23 crashed (segfault in the GC) on a constrained int inside a tuple
    # in a union; counts are checked against the run length, firsts below.
    runs: list[tuple[Any, int]] | None = None
    steps: list[tuple[int, int]] | None = None
    micro: list[int] | None = None


FloatColumn = Finite | list[Finite] | Form
IntColumn = Int64 | list[Int64] | Form
StrColumn = str | list[str] | Form
OptionalStrColumn = str | None | list[str | None] | Form
OptionalFloatColumn = Finite | None | list[Finite | None] | Form
OptionalBoolColumn = bool | None | list[bool | None] | Form


def _runs(values: Sequence[Any]) -> list[list[Any]]:
    runs: list[list[Any]] = []
    for value in values:
        if runs and identical(runs[-1][0], value):
            runs[-1][1] += 1
        else:
            runs.append([value, 1])
    return runs


def _steps(values: Sequence[int]) -> list[list[int]]:
    steps: list[list[int]] = []
    for value in values:
        if steps and steps[-1][0] + steps[-1][1] == value:
            steps[-1][1] += 1
        else:
            steps.append([value, 1])
    return steps


def identical(a: Any, b: Any) -> bool:
    """Equal, of one type, and for floats of one sign: -0.0 must read back as -0.0."""
    if type(a) is not type(b) or a != b:
        return False
    return not isinstance(a, float) or math.copysign(1.0, a) == math.copysign(1.0, b)


def encode(
    values: Sequence[Any], default: Any = None, integers: bool = False, millionths: bool = False
) -> Any:
    """The shortest form of a column; ``None`` when every value is the default (leave it out).

    Scalars only stand for simple values (strings, numbers, ``None``); a column
    of mappings is always a list. ``millionths`` tries the ``micro`` form.
    """
    first = values[0]
    if all(identical(value, default) for value in values):
        return None
    simple = first is None or isinstance(first, str | int | float)
    if simple and all(identical(value, first) for value in values):
        return first
    if integers:
        steps = _steps(values)
        if 2 * len(steps) < len(values):
            return {"steps": steps}
    if simple:
        runs = _runs(values)
        if 2 * len(runs) < len(values):
            return {"runs": runs}
    if millionths and all(type(value) is float for value in values):
        scaled = [_scaled(value, 6) for value in values]
        if all(unit is not None for unit in scaled):
            return {"micro": scaled}
    return list(values)


def decode(
    column: Any,
    n: int,
    default: Any,
    where: str,
    check: Callable[[Any], Any] | None = None,
    numbers: bool = False,
) -> list[Any]:
    """The ``n`` values of a column decoded by msgspec into one of the column types.

    ``check`` validates values that came from ``runs`` (their type is not
    known to the line's schema); it returns the value or raises.
    """
    if column is None:
        return [default] * n
    if isinstance(column, list):
        if len(column) != n:
            raise ColumnError(f"{where}: {len(column)} values for {n} events")
        return column
    if isinstance(column, Form):
        # A line's forms hold a run or two each: these loops run once per line read,
        # so the bounds are checked inline rather than by a call.
        out: list[Any] = []
        if column.runs is not None:
            for value, count in column.runs:
                if count < 1 or len(out) + count > n:
                    _bad_count(count, len(out), n, where)
                out.extend([check(value) if check else value] * count)
        elif column.steps is not None:
            for first, count in column.steps:
                if count < 1 or len(out) + count > n:
                    _bad_count(count, len(out), n, where)
                if not _INT64_MIN <= first <= _INT64_MAX - count:
                    raise ColumnError(f"{where}: {first} + {count} is beyond 64 bits")
                out.extend(range(first, first + count))
        elif column.micro is not None:
            if not numbers:
                raise ColumnError(f"{where}: millionths ('micro') in a column that is not numbers")
            try:
                out = list(map(operator.truediv, column.micro, itertools.repeat(1_000_000)))
            except OverflowError:
                raise ColumnError(f"{where}: a number beyond a float's range") from None
        else:
            raise ColumnError(f"{where}: an object column needs 'runs', 'steps' or 'micro'")
        if len(out) != n:
            raise ColumnError(f"{where}: {len(out)} values for {n} events")
        return out
    return [column] * n


def _bad_count(count: int, so_far: int, n: int, where: str) -> NoReturn:
    raise ColumnError(f"{where}: a run of {count} after {so_far} of {n} values")


_LARGEST = 1.7976931348623157e308
# Values of the usual type pass without a call into msgspec (a run's value is checked
# once per packed line); anything else is converted, or refused, by msgspec.
_FAST_CHECKS: dict[Any, Callable[[Any], bool]] = {
    str: lambda value: type(value) is str,
    str | None: lambda value: value is None or type(value) is str,
    Int64: lambda value: type(value) is int and _INT64_MIN <= value <= _INT64_MAX,
    Finite: lambda value: type(value) is float and -_LARGEST <= value <= _LARGEST,
}


def checker(kind: Any) -> Callable[[Any], Any]:
    """A validator of single values against a msgspec type (used for values of ``runs``)."""
    fast = _FAST_CHECKS.get(kind)

    def check(value: Any) -> Any:
        if fast is not None and fast(value):
            return value
        return msgspec.convert(value, kind)

    return check


# --- host times ---------------------------------------------------------------

_check_host = checker(Finite | None)
_check_step = checker(Int64)


def _scaled(value: float, decimals: int) -> int | None:
    """The digits of ``value``'s shortest decimal as an integer of 10^-decimals units,
    when that is exactly ``value`` again (``None`` otherwise)."""
    text = repr(value)
    if "e" in text or "n" in text or text == "-0.0":
        return None
    whole, _, fraction = text.partition(".")
    if len(fraction) > decimals:
        return None
    units = int(whole + fraction.ljust(decimals, "0"))
    if units / 10**decimals != value:
        return None
    return units


def encode_host_times(values: Sequence[float | None]) -> dict[str, Any]:
    """``host_t`` and ``host_dt`` fields for a run: exact integer steps when possible."""
    if all(value is None for value in values):
        return {}
    if len(values) == 1:
        return {"host_t": values[0]}
    if all(value is not None for value in values):
        units = [_scaled(value, _HOST_DECIMALS) for value in values]  # type: ignore[arg-type]
        if all(unit is not None for unit in units):
            steps = [b - a for a, b in itertools.pairwise(units)]  # type: ignore[operator]
            # A reader takes steps as 64-bit integers (anything wider is a damaged line).
            if all(_INT64_MIN <= step <= _INT64_MAX for step in steps):
                return {"host_t": values[0], "host_dt": encode(steps, integers=True)}
    return {"host_t": encode(values)}


def host_times(
    host_t: Any, host_dt: Any, n: int, where: str
) -> list[float | None] | Callable[[], list[float | None]]:
    """The ``n`` host times of a run (see ``encode_host_times``), checked now.

    With ``host_dt`` the times are returned as a function that adds the steps
    up when called: a reader that folds a whole file only needs the host times
    of the few events it keeps, and working out ``host_t``'s decimal units costs
    more than the rest of a line's host times.
    """
    if host_dt is None:
        return decode(host_t, n, None, f"{where}.host_t", _check_host)
    # The line's schema makes every number a float.
    if type(host_t) is not float:
        raise ColumnError(f"{where}.host_t: a number must go with host_dt")
    steps = decode(host_dt, n - 1, 0, f"{where}.host_dt", _check_step)

    def added_up() -> list[float | None]:
        unit = _scaled(host_t, _HOST_DECIMALS)
        if unit is None:
            # Not a time qtop writes (more decimals than host_dt counts in): the steps
            # still count from it, to a float's precision instead of to the bit.
            offsets = itertools.accumulate(steps, initial=0)
            return [host_t + offset / HOST_UNITS_PER_S for offset in offsets]
        # Steps are 64-bit and runs at most 2^16 long: the sums stay far inside a float.
        return [total / HOST_UNITS_PER_S for total in itertools.accumulate(steps, initial=unit)]

    return added_up


def decode_host_times(host_t: Any, host_dt: Any, n: int, where: str) -> list[float | None]:
    """The ``n`` host times of a run, as numbers."""
    found = host_times(host_t, host_dt, n, where)
    return found() if callable(found) else found

"""Frozen dataclasses to plain JSON dicts and back, driven by their type hints.

The codec of the parsed profiler reports (``qtop.profiling.model``): a report
is decoded when the ops pane or ``qtop ops`` needs it, about once per process,
so reflection is fast enough here. Events, which a reader decodes by the
million, use the msgspec decoders compiled from their definitions instead
(``qtop.events``).
What is left out is chosen per caller: fields equal to their default
(``omit="default"``, a report of a thousand ops stays small) or only fields
that are ``None`` (``omit="none"``, so a recording keeps ``exit_status: 0``
for readers such as jq). Decoding puts the left-out values back.

Supported hints: str, int, float, bool, ``int | float``, ``X | None``,
``Literal[...]``, ``tuple[X, ...]``, nested dataclasses, ``dict[str, str]``
(checked), and ``dict[str, Any]`` or any other dict (plain JSON, kept as is).
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from typing import Any, Literal

Omit = Literal["default", "none"]

_HINTS: dict[type, dict[str, Any]] = {}
_DEFAULTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    hints = _HINTS.get(cls)
    if hints is None:
        resolved = typing.get_type_hints(cls)
        hints = {f.name: resolved[f.name] for f in dataclasses.fields(cls)}
        _HINTS[cls] = hints
        defaults: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            if f.default is not dataclasses.MISSING:
                defaults[f.name] = f.default
            elif f.default_factory is not dataclasses.MISSING:
                defaults[f.name] = f.default_factory()
        _DEFAULTS[cls] = defaults
    return hints


def _encode(value: Any, omit: Omit) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return encode_dataclass(value, omit)
    if isinstance(value, tuple | list):
        return [_encode(item, omit) for item in value]
    if isinstance(value, dict):
        return {key: _encode(item, omit) for key, item in value.items()}
    return value


def encode_dataclass(obj: Any, omit: Omit = "default") -> dict[str, Any]:
    """A plain dict of the fields, without those ``omit`` names (see the module doc)."""
    cls = type(obj)
    hints = _hints(cls)
    defaults = _DEFAULTS[cls]
    out: dict[str, Any] = {}
    for name in hints:
        value = getattr(obj, name)
        if omit == "none" and value is None:
            continue
        if (
            omit == "default"
            and name in defaults
            and value == defaults[name]
            and type(value) is type(defaults[name])
        ):
            continue
        out[name] = _encode(value, omit)
    return out


def _decode_number(value: Any, where: str) -> int | float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{where}: expected a number, got {value!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{where}: expected a finite number, got {value!r}")
    return value


def _decode(hint: Any, value: Any, where: str) -> Any:
    origin = typing.get_origin(hint)
    if origin in (types.UnionType, typing.Union):
        members = typing.get_args(hint)
        if value is None and type(None) in members:
            return None
        rest = tuple(m for m in members if m is not type(None))
        if set(rest) == {int, float}:
            return _decode_number(value, where)
        return _decode(rest[0], value, where)
    if origin is tuple:
        if not isinstance(value, list | tuple):
            raise ValueError(f"{where}: expected a list, got {type(value).__name__}")
        item_hint = typing.get_args(hint)[0]
        return tuple(_decode(item_hint, item, f"{where}[{i}]") for i, item in enumerate(value))
    if origin is dict:
        if not isinstance(value, dict):
            raise ValueError(f"{where}: expected an object, got {type(value).__name__}")
        if typing.get_args(hint) == (str, str) and not all(
            isinstance(k, str) and isinstance(v, str) for k, v in value.items()
        ):
            raise ValueError(f"{where}: expected an object of strings")
        return dict(value)
    if origin is Literal:
        if value not in typing.get_args(hint):
            raise ValueError(f"{where}: {value!r} is not one of {typing.get_args(hint)}")
        return value
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return decode_dataclass(hint, value, where)
    if hint is bool:
        if not isinstance(value, bool):
            raise ValueError(f"{where}: expected true or false, got {value!r}")
        return value
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{where}: expected an integer, got {value!r}")
        return value
    if hint is float:
        return float(_decode_number(value, where))
    if hint is str:
        if not isinstance(value, str):
            raise ValueError(f"{where}: expected a string, got {value!r}")
        return value
    raise ValueError(f"{where}: cannot decode a {hint!r}")


def decode_dataclass(cls: type, data: Any, where: str) -> Any:
    """Build ``cls`` from an ``encode_dataclass`` dict; a ValueError names the bad field."""
    if not isinstance(data, dict):
        raise ValueError(f"{where}: expected an object, got {type(data).__name__}")
    hints = _hints(cls)
    kwargs: dict[str, Any] = {}
    for name, value in data.items():
        hint = hints.get(name)
        if hint is None:
            # Derived helper fields and fields of a newer writer are not part of the object.
            continue
        kwargs[name] = _decode(hint, value, f"{where}.{name}")
    try:
        return cls(**kwargs)
    except TypeError as exc:
        raise ValueError(f"{where}: {exc}") from None

"""Frozen dataclasses to plain JSON dicts and back, driven by their type hints.

Fields equal to their default are left out, so a report of a thousand ops
stays small in a recording; decoding puts the defaults back, which keeps the
round trip exact. Supported hints: str, int, float, bool, ``int | float``,
``X | None``, ``tuple[X, ...]``, ``dict[str, str]`` and nested dataclasses.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from typing import Any

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


def _encode(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return encode_dataclass(value)
    if isinstance(value, tuple | list):
        return [_encode(item) for item in value]
    if isinstance(value, dict):
        return {key: _encode(item) for key, item in value.items()}
    return value


def encode_dataclass(obj: Any) -> dict[str, Any]:
    """A plain dict of the fields that differ from their defaults."""
    cls = type(obj)
    hints = _hints(cls)
    defaults = _DEFAULTS[cls]
    out: dict[str, Any] = {}
    for name in hints:
        value = getattr(obj, name)
        if name in defaults and value == defaults[name] and type(value) is type(defaults[name]):
            continue
        out[name] = _encode(value)
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
        if not isinstance(value, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in value.items()
        ):
            raise ValueError(f"{where}: expected an object of strings")
        return dict(value)
    if dataclasses.is_dataclass(hint):
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

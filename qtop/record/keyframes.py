"""Keyframes as written: the model's snapshot made small, whole or as a patch.

A keyframe line carries either a whole state (``state``) or a patch on the
keyframe line at byte offset ``base`` (``patch``); a reader follows the bases
back to a whole one and applies the patches forward. Most of a model changes
little between keyframes a few seconds apart (the chart series only grow at
their end, the header and channels never change), so a patch is a small
fraction of the state.

Before that, the state is compacted, losslessly: a profiler report or the
header that is a line of the file becomes a reference to that line
(``{"@": offset}``); the model's recent log lines become the list of lines that
hold them when the file has exactly those (``{"lines": [offsets], "skip": k,
"n": n}``), and columns with their texts listed once otherwise (as the recent
failures and markers always are); and a chart series whose times are those of
a series before it (every channel sampled at the same ticks) says so
(``"t": {"as": channel}``), as do its lows and highs when they equal its means
(``{"as": "mean"}``: points that each hold one value).

Patches are JSON values tagged by their only key:

* ``{"=": 1}``: unchanged;
* ``{"v": value}``: replaced by ``value``;
* ``{"d": {key: patch}, "x": [removed keys], "o": [key order]}``: a mapping with
  those keys patched and removed (``o`` only when the order changed);
* ``{"l": [keep, items]}``: a list's first ``keep`` items, then ``items``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, TypeGuard

import msgspec

from qtop.events import EVENT_TYPES, Event, Log
from qtop.record import columns
from qtop.record.columns import ColumnError

SAME = {"=": 1}
_EVENT_LISTS = ("logs", "recent_failures", "markers")
# Fields whose values repeat a lot: listed once in ``texts`` and referred to by number.
_TEXT_FIELDS = frozenset({"text", "error", "note", "label", "detail", "stream", "level", "phase"})
_INTEGER_FIELDS = frozenset({"seq", "index", "exit_status", "attempt"})

encode_json = msgspec.json.Encoder().encode


class KeyframeError(ValueError):
    """A keyframe that cannot be turned back into a state."""


# --- compacting the state -------------------------------------------------------


def _pack_events(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """A list of event dicts as columns (the inverse is ``_unpack_events``)."""
    kind = rows[0].get("kind")
    fields = [name for name in _event_fields(kind) if any(name in row for row in rows)]
    packed: dict[str, Any] = {"kind": kind, "n": len(rows), "fields": fields}
    texts: dict[str, int] = {}
    for name in fields:
        values = [row.get(name) for row in rows]
        if name == "host_t":
            packed.update(columns.encode_host_times(values))
        elif name in _TEXT_FIELDS:
            ids = [None if v is None else texts.setdefault(v, len(texts)) for v in values]
            packed[name] = columns.encode(ids, None, integers=True)
        else:
            packed[name] = columns.encode(values, None, integers=name in _INTEGER_FIELDS)
    packed["texts"] = list(texts)
    return packed


def _event_fields(kind: Any) -> tuple[str, ...]:
    cls = EVENT_TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise KeyframeError(f"events of unknown kind {kind!r} in a keyframe")
    return ("t", "host_t", *(n for n in cls.__struct_fields__ if n not in ("t", "host_t")))


def _unpack_events(packed: Mapping[str, Any]) -> list[dict[str, Any]]:
    try:
        kind, n, fields, texts = packed["kind"], packed["n"], packed["fields"], packed["texts"]
        if not isinstance(n, int) or not 0 < n <= 1 << 20:
            raise KeyframeError(f"a keyframe's event list of {n!r}")
        known = _event_fields(kind)
        order = [name for name in known if name in fields]
        decoded: dict[str, list[Any]] = {}
        for name in order:
            if name == "host_t":
                decoded[name] = columns.decode_host_times(
                    _form(packed.get("host_t")), _form(packed.get("host_dt")), n, "keyframe"
                )
                continue
            column = _form(packed.get(name))
            values = columns.decode(column, n, None, f"keyframe.{name}", numbers=True)
            if name in _TEXT_FIELDS:
                values = [None if v is None else texts[v] for v in values]
            decoded[name] = values
    except (KeyError, IndexError, TypeError, ColumnError, msgspec.ValidationError) as exc:
        raise KeyframeError(f"a keyframe's event list is damaged ({exc})") from None
    rows = []
    for position in range(n):
        row: dict[str, Any] = {"kind": kind}
        for name in order:
            value = decoded[name][position]
            if value is not None:
                row[name] = value
        rows.append(row)
    return rows


class Lines(Protocol):
    """What expanding a keyframe reads from its file."""

    def event_dict_at(self, offset: int) -> dict[str, Any]: ...

    def events_in(self, offsets: list[int]) -> list[Event]: ...


def _form(column: Any) -> Any:
    """A column read from a keyframe (plain JSON) with its object form as the reader's type."""
    return msgspec.convert(column, columns.Form) if isinstance(column, dict) else column


def compact_state(state: dict[str, Any], references: Mapping[str, Any]) -> dict[str, Any]:
    """The state as written: event lists as columns, known lines as references.

    ``references`` maps ``"header"`` to the header line's offset,
    ``"profile_reports"`` to ``{key: offset}`` for reports written as lines, and
    ``"logs"`` to the lines holding the model's recent logs (or ``None``).
    """
    out = dict(state)
    for name in _EVENT_LISTS:
        rows = state.get(name)
        if isinstance(rows, list) and rows:
            out[name] = {"packed": _pack_events(rows)}
    if references.get("logs") and state.get("logs"):
        out["logs"] = references["logs"]
    series = state.get("channel_series")
    if isinstance(series, dict):
        out["channel_series"] = _shared_times(series)
    header_offset = references.get("header")
    if header_offset is not None and state.get("header") is not None:
        out["header"] = {"@": header_offset}
    reports = state.get("profile_reports")
    offsets = references.get("profile_reports") or {}
    if isinstance(reports, dict) and offsets:
        out["profile_reports"] = {
            key: {"@": offsets[key]} if key in offsets else value for key, value in reports.items()
        }
    return out


def _shared_times(series: dict[str, Any]) -> dict[str, Any]:
    """Series columns written once: times shared with an earlier series, and lows and
    highs that equal the means (points that each hold one value)."""
    out: dict[str, Any] = {}
    seen: list[tuple[str, list[float]]] = []
    for key, value in series.items():
        if not isinstance(value, dict) or not value.get("t"):
            out[key] = value
            continue
        value = dict(value)
        times = value["t"]
        same = next((name for name, other in seen if _identical(other, times)), None)
        if same is None:
            seen.append((key, times))
        else:
            value["t"] = {"as": same}
        for column in ("low", "high"):
            if _identical(value.get(column), value.get("mean")):
                value[column] = {"as": "mean"}
        out[key] = value
    return out


def _own_times(series: Any) -> Any:
    if not isinstance(series, dict):
        return series
    out: dict[str, Any] = {}
    for key, value in series.items():
        if isinstance(value, dict):
            value = dict(value)
            times = value.get("t")
            if isinstance(times, dict):
                source = out.get(times.get("as"))  # type: ignore[arg-type]
                if not isinstance(source, dict) or not isinstance(source.get("t"), list):
                    raise KeyframeError(f"series {key!r} shares the times of no series before it")
                value["t"] = source["t"]
            for column in ("low", "high"):
                if isinstance(value.get(column), dict):
                    value[column] = value.get("mean")
        out[key] = value
    return out


def expand_state(compact: dict[str, Any], lines: Lines) -> dict[str, Any]:
    """The model state a written keyframe stands for (a version 1 state is returned as is)."""
    out = dict(compact)
    for name in _EVENT_LISTS:
        value = compact.get(name)
        if isinstance(value, dict) and "packed" in value:
            out[name] = _unpack_events(value["packed"] or {})
    logs = compact.get("logs")
    if isinstance(logs, dict) and "lines" in logs:
        out["logs"] = _logs_from_lines(logs, lines)
    header = compact.get("header")
    if _is_reference(header):
        out["header"] = lines.event_dict_at(header["@"])
    reports = compact.get("profile_reports")
    if isinstance(reports, dict):
        out["profile_reports"] = {
            key: lines.event_dict_at(value["@"]) if _is_reference(value) else value
            for key, value in reports.items()
        }
    if "channel_series" in compact:
        out["channel_series"] = _own_times(compact["channel_series"])
    return out


def _logs_from_lines(reference: Mapping[str, Any], lines: Lines) -> list[dict[str, Any]]:
    offsets, skip, n = reference.get("lines"), reference.get("skip"), reference.get("n")
    if not isinstance(offsets, list) or not isinstance(skip, int) or not isinstance(n, int):
        raise KeyframeError("a keyframe's reference to its log lines is damaged")
    logs = [event for event in lines.events_in(offsets) if isinstance(event, Log)]
    if skip < 0 or len(logs) - skip != n:
        raise KeyframeError(
            f"a keyframe refers to {n} log events but its lines hold {len(logs) - skip}"
        )
    return [log.to_dict() for log in logs[skip:]]


def _is_reference(value: Any) -> TypeGuard[dict[str, int]]:
    return isinstance(value, dict) and len(value) == 1 and isinstance(value.get("@"), int)


# --- patches ----------------------------------------------------------------------


def _identical(a: Any, b: Any) -> bool:
    """Equal and written the same (``1`` and ``1.0`` are not)."""
    if a is b:
        return True
    if type(a) is not type(b) or a != b:
        return False
    return isinstance(a, str) or encode_json(a) == encode_json(b)


def diff(old: Any, new: Any) -> Any:
    """The patch that turns ``old`` into ``new``."""
    if _identical(old, new):
        return SAME
    if isinstance(old, dict) and isinstance(new, dict):
        changed = {}
        for key, value in new.items():
            if key in old:
                if not _identical(old[key], value):
                    changed[key] = diff(old[key], value)
            else:
                changed[key] = {"v": value}
        removed = [key for key in old if key not in new]
        node: dict[str, Any] = {"d": changed}
        if removed:
            node["x"] = removed
        kept = [key for key in old if key in new]
        if kept + [key for key in new if key not in old] != list(new):
            node["o"] = list(new)
        return node
    if isinstance(old, list) and isinstance(new, list):
        keep = _common_prefix(old, new)
        if keep:
            return {"l": [keep, new[keep:]]}
    return {"v": new}


def _common_prefix(old: list[Any], new: list[Any]) -> int:
    shortest = min(len(old), len(new))
    if old[:shortest] == new[:shortest]:
        keep = shortest
    else:
        keep = 0
        for a, b in zip(old, new, strict=False):
            if a != b:
                break
            keep += 1
    while keep and encode_json(old[:keep]) != encode_json(new[:keep]):
        keep //= 2
    return keep


def patch(old: Any, node: Any) -> Any:
    """``old`` with ``node`` applied; raises KeyframeError for a patch that does not fit."""
    if not isinstance(node, dict) or len(node) not in (1, 2, 3):
        raise KeyframeError("a keyframe patch is not a tagged object")
    if "=" in node:
        return old
    if "v" in node:
        return node["v"]
    if "l" in node:
        return _extended(old, node["l"])
    if "d" in node:
        changes = node["d"]
        if not isinstance(old, dict) or not isinstance(changes, dict):
            raise KeyframeError("a mapping patch on something that is not a mapping")
        out = dict(old)
        for key in node.get("x") or ():
            out.pop(key, None)
        for key, change in changes.items():
            if key not in old:
                out[key] = _added(change)
            elif type(change) is dict and len(change) == 1 and "v" in change:
                # The two commonest patches, applied here rather than by a call each.
                out[key] = change["v"]
            elif type(change) is dict and len(change) == 1 and "l" in change:
                out[key] = _extended(old[key], change["l"])
            else:
                out[key] = patch(old[key], change)
        order = node.get("o")
        if order is not None:
            if not isinstance(order, list) or set(order) != set(out):
                raise KeyframeError("a mapping patch's key order does not match its keys")
            out = {key: out[key] for key in order}
        return out
    raise KeyframeError(f"unknown keyframe patch {sorted(node)}")


def patch_owned(old: Any, node: Any) -> Any:
    """``patch``, changing ``old``'s own mappings and lists instead of copying them: for a
    state nothing else holds (one just read from its line). A chain of patches then
    costs what the patches hold, not a copy of every series each one extends."""
    if not isinstance(node, dict) or len(node) not in (1, 2, 3):
        raise KeyframeError("a keyframe patch is not a tagged object")
    if "=" in node:
        return old
    if "v" in node:
        return node["v"]
    if "l" in node:
        return _extended_owned(old, node["l"])
    if "d" in node:
        changes = node["d"]
        if not isinstance(old, dict) or not isinstance(changes, dict):
            raise KeyframeError("a mapping patch on something that is not a mapping")
        removed = node.get("x") or ()
        for key, change in changes.items():
            if key not in old:
                old[key] = _added(change)
            elif type(change) is dict and len(change) == 1 and "v" in change:
                old[key] = change["v"]
            elif type(change) is dict and len(change) == 1 and "l" in change:
                old[key] = _extended_owned(old[key], change["l"])
            else:
                old[key] = patch_owned(old[key], change)
        # After the changes, as ``patch`` decides a key's change by the mapping before
        # its removals.
        for key in removed:
            if key not in changes:
                old.pop(key, None)
        order = node.get("o")
        if order is not None:
            if not isinstance(order, list) or set(order) != set(old):
                raise KeyframeError("a mapping patch's key order does not match its keys")
            return {key: old[key] for key in order}
        return old
    raise KeyframeError(f"unknown keyframe patch {sorted(node)}")


def _list_change(old: Any, change: Any) -> tuple[int, list[Any]]:
    if not isinstance(change, list) or len(change) != 2:
        raise KeyframeError("a list patch is not [keep, items]")
    keep, items = change
    if not isinstance(old, list) or not isinstance(items, list):
        raise KeyframeError("a list patch on something that is not a list")
    if not isinstance(keep, int) or not 0 <= keep <= len(old):
        raise KeyframeError(f"a list patch keeps {keep!r} of {len(old)} items")
    return keep, items


def _extended(old: Any, change: Any) -> list[Any]:
    keep, items = _list_change(old, change)
    return old[:keep] + items  # type: ignore[no-any-return]


def _extended_owned(old: Any, change: Any) -> list[Any]:
    keep, items = _list_change(old, change)
    del old[keep:]
    old.extend(items)
    return old  # type: ignore[no-any-return]


def _added(change: Any) -> Any:
    if not isinstance(change, dict) or "v" not in change:
        raise KeyframeError("a key added by a patch needs its value")
    return change["v"]

"""Mappings in a profile: sections of keys, lists of sections, and environments.

``build`` turns one YAML mapping into its dataclass, reporting every problem
it finds (unknown keys with the likely one, missing keys, bad values,
duplicates) rather than stopping at the first, and standing in a placeholder
for a bad value so that the rest can still be checked.
"""

from __future__ import annotations

import difflib
import re
from typing import Any

from qtop.profiles.issues import Invalid, describe
from qtop.profiles.loader import line_dict
from qtop.profiles.schema import JsonContext, Kind, Spot, schema_fields
from qtop.profiles.values import Text

ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\Z")
# The device agent's own variables (plan.sh) and shell variables.
RESERVED_ENV_PREFIXES = ("QTOP_", "qtop_")
# Where sh, mkdir, sleep and kill live: Linux, and Android's toybox.
SYSTEM_BIN_DIRS = ("/usr/bin", "/bin", "/system/bin")
_VARIABLE_REFERENCE = re.compile(r"\$\{?[A-Za-z_]")


def _report_duplicates(data: Any, spot: Spot) -> None:
    for name, line, first in getattr(data, "duplicates", ()):
        spot.at(name, line).error(
            f"appears twice (first on line {first}); YAML would keep the last one unseen",
            "keep one of them",
        )


def _line_of(data: Any, name: str) -> int | None:
    return getattr(data, "key_lines", {}).get(name) or getattr(data, "line", None)


def build(cls: type, data: Any, spot: Spot, given: dict[str, Any] | None = None) -> Any:
    """``cls`` from the mapping ``data``; problems are reported at ``spot``, not raised."""
    _report_duplicates(data, spot)
    fields = list(schema_fields(cls))
    by_name = {field.name: field for field in fields}
    suggested: set[str] = set()
    for name in data:
        if name in by_name:
            continue
        close = difflib.get_close_matches(str(name)[:100], list(by_name), n=1, cutoff=0.6)
        if close:
            suggested.add(close[0])
            fix = f"did you mean '{close[0]}'?"
        else:
            fix = "known keys here: " + ", ".join(by_name)
        spot.at(str(name)[:100], _line_of(data, name)).error("unknown key", fix)
    values: dict[str, Any] = dict(given or {})
    for field in fields:
        child = spot.at(field.name, _line_of(data, field.name), field.key)
        if field.name not in data or data[field.name] is None:
            if field.name in data:
                example = f", e.g. {field.name}: {child.example}" if child.example else ""
                child.error("has no value", f"give it one{example}, or delete the line")
            elif field.key.required:
                spot.report.bad.add(child.path)
                if field.name not in suggested:
                    example = f", e.g. {field.name}: {child.example}" if child.example else ""
                    spot.error(f"missing required key '{field.name}'", f"add it{example}")
            if not field.has_default and field.attribute not in values:
                values[field.attribute] = field.key.kind.placeholder()
            continue
        value, accepted = child.convert(data[field.name])
        if accepted:
            values[field.attribute] = value
        elif not field.has_default and field.attribute not in values:
            values[field.attribute] = field.key.kind.placeholder()
    return cls(**values)


def _placeholder(cls: type) -> Any:
    return cls(
        **{
            field.attribute: field.key.kind.placeholder()
            for field in schema_fields(cls)
            if not field.has_default
        }
    )


def _section_schema(cls: type, context: JsonContext) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    required: list[str] = []
    for field in schema_fields(cls):
        schema = field.key.kind.json_schema(context)
        schema["description"] = field.key.doc
        if field.has_default and _json_plain(field.default):
            schema["default"] = _json_default(field)
        if field.key.example is not None:
            schema["examples"] = [field.key.example]
        properties[field.name] = schema
        if field.key.required:
            required.append(field.name)
    section: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "additionalProperties": False,
    }
    if required:
        section["required"] = required
    extra = context.extra_for(cls)
    if extra:
        section["allOf"] = extra
    return section


def _json_plain(value: Any) -> bool:
    if isinstance(value, dict):
        return not value
    return isinstance(value, str | int | float | tuple) and not isinstance(value, bool)


def _json_default(field: Any) -> Any:
    from qtop.profiles.values import Duration

    if isinstance(field.key.kind, Duration):
        from qtop.profiles.durations import format_duration

        return format_duration(field.default)
    if isinstance(field.default, tuple):
        return list(field.default)
    return field.default


class Section(Kind):
    """A mapping of keys: the dataclass ``cls``, whose fields declare them."""

    def __init__(self, cls: type) -> None:
        self.cls = cls

    def convert(self, raw: Any, spot: Spot) -> Any:
        if not isinstance(raw, dict):
            raise Invalid(
                f"expected a mapping of keys, got {describe(raw)}",
                "indent its keys under it" + (f", e.g. {spot.example}" if spot.example else ""),
            )
        return build(self.cls, raw, spot)

    def placeholder(self) -> Any:
        return _placeholder(self.cls)

    def json_schema(self, context: JsonContext) -> dict[str, Any]:
        return _section_schema(self.cls, context)

    def accepts(self) -> str:
        return "mapping (below)"

    def show(self, value: Any) -> str:
        return "—"


class SectionList(Kind):
    """A list of sections; ``shorthand`` lets a bare text item stand for that key alone."""

    def __init__(
        self,
        cls: type,
        *,
        shorthand: str | None = None,
        unique: str | None = None,
        max_items: int = 1000,
    ) -> None:
        self.cls = cls
        self.shorthand = shorthand
        self.unique = unique
        self.max_items = max_items

    def convert(self, raw: Any, spot: Spot) -> tuple[Any, ...]:
        fix = "write a list of mappings" + (f", e.g. {spot.example}" if spot.example else "")
        if not isinstance(raw, list):
            raise Invalid(f"expected a list, got {describe(raw)}", fix)
        if not raw:
            raise Invalid("is an empty list", f"{fix}, or delete the key")
        if len(raw) > self.max_items:
            raise Invalid(f"has {len(raw)} items; the most accepted is {self.max_items}", None)
        lines = getattr(raw, "item_lines", [spot.line] * len(raw))
        items: list[Any] = []
        seen: dict[str, int | None] = {}
        for index, item in enumerate(raw):
            item_spot = spot.at(f"[{index}]", lines[index])
            if self.shorthand and isinstance(item, str | int) and not isinstance(item, bool):
                item = line_dict(lines[index] or 0, **{self.shorthand: item})
            if not isinstance(item, dict):
                item_spot.error(f"expected a mapping, got {describe(item)}", fix)
                continue
            built = build(self.cls, item, item_spot)
            items.append(built)
            if self.unique and not spot.report.is_bad(f"{item_spot.path}.{self.unique}"):
                name = getattr(built, self.unique)
                line = _line_of(item, self.unique)
                if name in seen:
                    item_spot.at(self.unique, line).error(
                        f"{name!r} appears twice (first on line {seen[name]})",
                        f"give each item its own {self.unique}",
                    )
                seen.setdefault(name, line)
        return tuple(items)

    def placeholder(self) -> tuple[Any, ...]:
        return ()

    def json_schema(self, context: JsonContext) -> dict[str, Any]:
        item = _section_schema(self.cls, context)
        if self.shorthand:
            shorthand = next(f for f in schema_fields(self.cls) if f.name == self.shorthand)
            item = {"anyOf": [shorthand.key.kind.json_schema(context), item]}
        schema = {"type": "array", "minItems": 1, "maxItems": self.max_items, "items": item}
        if self.unique:
            # Catches the same item twice; the same name with different keys JSON Schema
            # cannot see.
            schema["uniqueItems"] = True
        return schema

    def accepts(self) -> str:
        return "list of mappings (below)"

    def show(self, value: Any) -> str:
        return "—"


class Env(Kind):
    """Environment variables for the device: ``NAME: value``, passed literally."""

    _value = Text()

    def convert(self, raw: Any, spot: Spot) -> dict[str, str]:
        if not isinstance(raw, dict):
            raise Invalid(
                f"expected a mapping of NAME: value, got {describe(raw)}",
                "e.g. {LD_LIBRARY_PATH: /usr/lib}",
            )
        _report_duplicates(raw, spot)
        env: dict[str, str] = {}
        for name, value in raw.items():
            entry = spot.at(str(name)[:100], _line_of(raw, name))
            if not ENV_NAME.match(name):
                entry.error(
                    f"{describe(name)} is not a valid environment variable name",
                    "use letters, digits and _ (not starting with a digit)",
                )
                continue
            if name.startswith(RESERVED_ENV_PREFIXES):
                entry.error(
                    "names starting with QTOP_ or qtop_ belong to qtop's device agent",
                    "rename the variable",
                )
                continue
            if value is None:
                entry.error("has no value", f"write {name}: '' for an empty value")
                continue
            try:
                text = self._value.convert(value, entry) if value != "" else ""
            except Invalid as exc:
                entry.error(exc.message, exc.fix)
                continue
            if name == "PATH":
                problem = _path_problem(text)
                if problem is not None:
                    entry.error(*problem)
                    continue
            if _VARIABLE_REFERENCE.search(text):
                entry.warn(
                    "values are passed literally: a $NAME in it is not expanded on the device",
                    "write the whole value out",
                )
            env[name] = text
        return env

    def placeholder(self) -> dict[str, str]:
        return {}

    def json_schema(self, context: JsonContext) -> dict[str, Any]:
        reserved = "|".join(RESERVED_ENV_PREFIXES)
        system = "|".join(re.escape(d) for d in SYSTEM_BIN_DIRS)
        value = Text().json_schema(context)
        return {
            "type": "object",
            "propertyNames": {"pattern": f"^(?!{reserved})[A-Za-z_][A-Za-z0-9_]*$"},
            "properties": {"PATH": {"type": "string", "pattern": f"(^|:)({system})/?(:|$)"}},
            "additionalProperties": {"anyOf": [value, {"const": ""}]},
        }

    def accepts(self) -> str:
        return "mapping `NAME: value`"

    def show(self, value: Any) -> str:
        return "`{}`"


def _path_problem(text: str) -> tuple[str, str] | None:
    directories = [d.rstrip("/") or "/" for d in text.split(":")]
    if any(d in SYSTEM_BIN_DIRS for d in directories):
        return None
    missing = ", ".join(SYSTEM_BIN_DIRS)
    problem = "is empty" if not text else f"has none of {missing}"
    return (
        f"{problem}: the device agent could not find sh, mkdir or sleep, so the run "
        "would never start",
        "keep the system directories after yours, e.g. PATH: /opt/qnn/bin:/usr/bin:/bin "
        "($PATH is not expanded: values are passed literally)",
    )

"""The schema's vocabulary: a key declared once, the kind of value it takes, where a value sits.

Every profile key is one dataclass field declared with ``key(...)`` in
``model.py``: its kind (type, unit, limits), its default, its documentation and
an example. Validation, the error messages, the tables in ``docs/profiles.md``
and the JSON Schema are all derived from those fields, so a key is added or
changed in exactly one place.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from qtop.profiles.issues import ERROR, WARNING, Invalid, Issue

_METADATA = "qtop.profile_key"


class Kind:
    """What a key accepts; subclasses convert, describe and export it."""

    def convert(self, raw: Any, spot: Spot) -> Any:
        """The value for ``raw`` as loaded from YAML; raises ``Invalid`` or reports at ``spot``."""
        raise NotImplementedError

    def from_text(self, text: str, spot: Spot) -> Any:
        """The value for a command-line argument (always text)."""
        return self.convert(text, spot)

    def json_schema(self, context: JsonContext) -> dict[str, Any]:
        raise NotImplementedError

    def accepts(self) -> str:
        """What the docs table shows in its 'accepts' column (markdown)."""
        raise NotImplementedError

    def show(self, value: Any) -> str:
        """A default value as the docs show it (markdown)."""
        return f"`{value}`"

    def placeholder(self) -> Any:
        """A stand-in for a required value that was missing or bad (never used further)."""
        return None


class JsonContext:
    """What a kind needs from the JSON Schema generator: the cross-key rules of a section."""

    def __init__(self, extra_for: Callable[[type], list[dict[str, Any]]]) -> None:
        self.extra_for = extra_for


@dataclass(frozen=True, slots=True)
class Key:
    """One profile key: everything the validator, the docs and the JSON Schema need."""

    kind: Kind
    doc: str
    yaml_name: str | None = None
    required: bool = False
    default_text: str | None = None
    example: Any = None


@dataclass(frozen=True, slots=True)
class SchemaField:
    """A dataclass field that is a profile key."""

    attribute: str
    name: str
    key: Key
    default: Any

    @property
    def has_default(self) -> bool:
        return self.default is not dataclasses.MISSING


def key(
    kind: Kind,
    doc: str,
    *,
    default: Any = dataclasses.MISSING,
    default_factory: Callable[[], Any] | Any = dataclasses.MISSING,
    name: str | None = None,
    required: bool = False,
    default_text: str | None = None,
    example: Any = None,
) -> Any:
    """A dataclass field that is a profile key (``name`` when the YAML name differs)."""
    metadata = {_METADATA: Key(kind, doc, name, required, default_text, example)}
    if default_factory is not dataclasses.MISSING:
        return dataclasses.field(default_factory=default_factory, metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


def schema_fields(cls: type) -> Iterator[SchemaField]:
    """The profile keys of a section class, in declaration order."""
    for field in dataclasses.fields(cls):
        declared = field.metadata.get(_METADATA)
        if declared is None:
            continue
        default: Any = field.default
        if field.default_factory is not dataclasses.MISSING:
            default = field.default_factory()
        yield SchemaField(field.name, declared.yaml_name or field.name, declared, default)


def field_named(cls: type, attribute: str) -> SchemaField:
    for field in schema_fields(cls):
        if field.attribute == attribute:
            return field
    raise KeyError(attribute)


def example_text(value: Any) -> str:
    """An example value as it would be written in YAML."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(example_text(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {example_text(v)}" for k, v in value.items()) + "}"
    return str(value)


class Report:
    """The issues found so far, and the key paths whose values are bad."""

    def __init__(self) -> None:
        self.issues: list[Issue] = []
        self.bad: set[str] = set()

    @property
    def error_count(self) -> int:
        return sum(1 for issue in self.issues if issue.is_error)

    def is_bad(self, path: str) -> bool:
        """Whether ``path``, a key inside it or the section holding it had an error."""
        for bad in self.bad:
            if bad == path or not bad or path.startswith((bad + ".", bad + "[")):
                return True
            if bad.startswith((path + ".", path + "[")):
                return True
        return False


class Spot:
    """Where a value sits (file, line, dotted key) and what its key is."""

    def __init__(
        self,
        report: Report,
        source: str,
        line: int | None,
        path: str = "",
        key: Key | None = None,
        label: str | None = None,
    ) -> None:
        self.report = report
        self.source = source
        self.line = line
        self.path = path
        self.key = key
        # How the key is shown: the dotted path in a profile, the option on the command line.
        self.label = path if label is None else label

    def at(self, name: str, line: int | None, key: Key | None = None) -> Spot:
        if name.startswith("["):
            path = f"{self.path}{name}"
        else:
            path = f"{self.path}.{name}" if self.path else name
        return Spot(self.report, self.source, line or self.line, path, key)

    @property
    def example(self) -> str | None:
        if self.key is None or self.key.example is None:
            return None
        return example_text(self.key.example)

    def error(self, message: str, fix: str | None = None) -> None:
        self.report.bad.add(self.path)
        self._add(ERROR, message, fix)

    def warn(self, message: str, fix: str | None = None) -> None:
        self._add(WARNING, message, fix)

    def _add(self, severity: str, message: str, fix: str | None) -> None:
        self.report.issues.append(Issue(severity, self.source, self.line, self.label, message, fix))

    def convert(self, raw: Any, from_text: bool = False) -> tuple[Any, bool]:
        """``raw`` through this spot's key: (value, True), or (None, False) when refused.

        A section with a bad key inside still gives its value, so that checks of
        its other keys can run; the error is in the report either way.
        """
        assert self.key is not None
        try:
            if from_text:
                return self.key.kind.from_text(raw, self), True
            return self.key.kind.convert(raw, self), True
        except Invalid as exc:
            self.error(exc.message, exc.fix)
            return None, False

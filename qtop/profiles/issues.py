"""What validation finds: errors and warnings, each with file:line:key and a fix."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from qtop.errors import UsageError

ERROR = "error"
WARNING = "warning"
_SHOWN_TEXT = 40
_LONGEST_SHOWN_INT_BITS = 128


@dataclass(frozen=True, slots=True)
class Issue:
    """One problem with a profile or an option: where it is, what it is, how to fix it."""

    severity: str
    source: str  # the profile file; empty for a command-line option
    line: int | None
    key: str  # a dotted profile key (run.warmup) or an option (--duration)
    message: str
    fix: str | None = None

    @property
    def is_error(self) -> bool:
        return self.severity == ERROR

    def text(self) -> str:
        where = self.source
        if where and self.line:
            where = f"{where}:{self.line}"
        return ": ".join(part for part in (where, self.key, self.message) if part)

    def with_fix(self, indent: str = "") -> str:
        return f"{indent}{self.text()}" + (f"\n{indent}  fix: {self.fix}" if self.fix else "")

    def to_json(self) -> dict[str, Any]:
        return {
            "severity": self.severity,
            "file": self.source or None,
            "line": self.line,
            "key": self.key,
            "message": self.message,
            "fix": self.fix,
        }


class ProfileError(UsageError):
    """A profile (or a plan from the command line) that cannot be used.

    With one problem, ``problem`` and ``fix`` are that problem's; with several,
    ``problem`` lists them all, each with its own fix.
    """

    def __init__(self, problem: str, fix: str | None = None, issues: Sequence[Issue] = ()) -> None:
        super().__init__(problem, fix)
        self.issues = tuple(issues)

    @classmethod
    def from_issues(cls, issues: Sequence[Issue]) -> ProfileError:
        errors = [issue for issue in issues if issue.is_error]
        if len(errors) == 1:
            return cls(errors[0].text(), errors[0].fix, issues)
        sources = sorted({issue.source for issue in errors if issue.source})
        head = f"{', '.join(sources)}: " if sources else ""
        lines = [f"{head}{len(errors)} errors"]
        lines += [issue.with_fix("  ") for issue in errors]
        return cls("\n".join(lines), None, issues)


class Invalid(ValueError):
    """A value a key does not accept; the validator adds where it is."""

    def __init__(self, message: str, fix: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.fix = fix


def describe(value: Any) -> str:
    """A short, safe rendering of a value for a message (never the whole of a huge one)."""
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, float) and not math.isfinite(value):
        return ".nan" if math.isnan(value) else ("-.inf" if value < 0 else ".inf")
    if isinstance(value, int) and value.bit_length() > _LONGEST_SHOWN_INT_BITS:
        # repr() of a huge int is slow, and refused past 4300 digits.
        return f"a number of about {int(value.bit_length() * 0.30103)} digits"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        text = value if len(value) <= _SHOWN_TEXT else value[:_SHOWN_TEXT] + "…"
        return repr(text)
    return f"a {type(value).__name__}"

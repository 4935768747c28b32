"""Profiles from files and text, and plans changed by command-line options, all checked.

Every problem is found in one pass and reported together, each with
file:line:key (or the option) and its fix. Warnings (a value that is almost
surely a unit mistake, a plan whose result reports will call not valid) do
not stop anything; they are handed to ``on_warning``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from qtop.profiles.issues import ERROR, Issue, ProfileError
from qtop.profiles.loader import MAX_PROFILE_BYTES, parse_yaml, refuse
from qtop.profiles.model import DeviceProfile, Profile, RunProfile
from qtop.profiles.rules import findings
from qtop.profiles.schema import Report, Spot, field_named
from qtop.profiles.sections import build

WarningHandler = Callable[[Issue], None]
_PATH_PART = re.compile(r"([^.\[]+)|\[(\d+)\]")


@dataclass(frozen=True, slots=True)
class Checked:
    """A profile's check: the profile when it has no errors, and everything found."""

    source: str
    profile: Profile | None
    issues: tuple[Issue, ...]

    @property
    def errors(self) -> tuple[Issue, ...]:
        return tuple(issue for issue in self.issues if issue.is_error)

    @property
    def warnings(self) -> tuple[Issue, ...]:
        return tuple(issue for issue in self.issues if not issue.is_error)


def line_of(data: Any, path: str) -> int | None:
    """The line of a dotted key path (``run.variants[1].name``) in the loaded YAML."""
    line = getattr(data, "line", None)
    for name, index in _PATH_PART.findall(path):
        if name:
            if not isinstance(data, dict) or name not in data:
                break
            line = getattr(data, "key_lines", {}).get(name, line)
            data = data[name]
        else:
            position = int(index)
            if not isinstance(data, list) or position >= len(data):
                break
            item_lines = getattr(data, "item_lines", [])
            line = item_lines[position] if position < len(item_lines) else line
            data = data[position]
    return line


def check_profile_text(text: str, source: str = "<profile>") -> Checked:
    """Every error and warning in a profile given as YAML text."""
    try:
        data = parse_yaml(text, source)
    except ProfileError as exc:
        return Checked(source, None, exc.issues)
    if data is None:
        issue = Issue(ERROR, source, None, "", "the file is empty", "see docs/profiles.md")
        return Checked(source, None, (issue,))
    if not isinstance(data, dict):
        issue = Issue(
            ERROR,
            source,
            getattr(data, "line", 1),
            "",
            "the profile must be a mapping of keys to values",
            "start with 'run:' (see docs/profiles.md for an example)",
        )
        return Checked(source, None, (issue,))
    report = Report()
    profile: Profile = build(Profile, data, Spot(report, source, 1), given={"source": source})
    if "name" not in data:
        profile = replace(profile, name=Path(source).stem)
    for finding in findings(profile, report.is_bad):
        primary = finding.keys[0]
        report.issues.append(
            Issue(
                finding.severity,
                source,
                line_of(data, primary),
                primary,
                finding.message,
                finding.fix,
            )
        )
    issues = tuple(sorted(report.issues, key=lambda issue: issue.line or 0))
    if any(issue.is_error for issue in issues):
        return Checked(source, None, issues)
    return Checked(source, profile, issues)


def _read(path: Path) -> str:
    try:
        with path.open("rb") as file:
            data = file.read(MAX_PROFILE_BYTES + 1)
    except FileNotFoundError:
        raise refuse(
            str(path), None, "no such profile file", "run 'qtop profiles' to list them"
        ) from None
    except IsADirectoryError:
        raise refuse(str(path), None, "is a directory, not a profile file") from None
    except OSError as exc:
        raise refuse(str(path), None, f"cannot read: {exc.strerror}") from None
    if len(data) > MAX_PROFILE_BYTES:
        raise refuse(
            str(path),
            None,
            f"more than {MAX_PROFILE_BYTES // 1024} KiB, more than a profile can be",
            "a profile is a page of YAML: check that this is the right file",
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise refuse(
            str(path), None, f"not UTF-8 text ({exc.reason} at byte {exc.start})"
        ) from None


def check_profile(path: str | os.PathLike[str]) -> Checked:
    """Every error and warning in one profile file."""
    try:
        text = _read(Path(path))
    except ProfileError as exc:
        return Checked(str(path), None, exc.issues)
    return check_profile_text(text, str(path))


def _loaded(checked: Checked, on_warning: WarningHandler | None) -> Profile:
    if checked.profile is None:
        raise ProfileError.from_issues(checked.issues)
    if on_warning is not None:
        for issue in checked.warnings:
            on_warning(issue)
    return checked.profile


def load_profile_text(
    text: str, source: str = "<profile>", on_warning: WarningHandler | None = None
) -> Profile:
    """Validate a profile given as YAML text; ``source`` names it in errors."""
    return _loaded(check_profile_text(text, source), on_warning)


def load_profile(path: str | os.PathLike[str], on_warning: WarningHandler | None = None) -> Profile:
    """Load and validate one profile file."""
    return _loaded(check_profile(path), on_warning)


@dataclass(frozen=True, slots=True)
class PlanOption:
    """A command-line option that sets one profile key, checked by that key's rules."""

    flag: str
    section: str  # "run" or "device"
    attribute: str
    clears: tuple[str, ...] = ()  # attributes it unsets (--iterations replaces a duration)

    @property
    def section_class(self) -> type:
        return RunProfile if self.section == "run" else DeviceProfile

    @property
    def path(self) -> str:
        return self._path(self.attribute)

    @property
    def replaces(self) -> tuple[str, ...]:
        """The profile keys whose values this option makes moot: its own and those it unsets."""
        return (self.path, *(self._path(attribute) for attribute in self.clears))

    def _path(self, attribute: str) -> str:
        return f"{self.section}.{field_named(self.section_class, attribute).name}"


def apply_options(
    profile: Profile,
    given: Sequence[tuple[PlanOption, str]],
    on_warning: WarningHandler | None = None,
) -> Profile:
    """``profile`` with options applied; bad values and plans that cannot work are refused."""
    report = Report()
    changes: dict[str, dict[str, Any]] = {"run": {}, "device": {}}
    flags: dict[str, str] = {}
    for option, text in given:
        schema_field = field_named(option.section_class, option.attribute)
        spot = Spot(report, "", None, option.path, schema_field.key, label=option.flag)
        value, accepted = spot.convert(text, from_text=True)
        if accepted:
            section = changes[option.section]
            section.update(dict.fromkeys(option.clears))
            section[option.attribute] = value
            flags[option.path] = option.flag
    if report.error_count:
        raise ProfileError.from_issues(report.issues)
    if changes["run"]:
        profile = profile.replace_run(**changes["run"])
    if changes["device"]:
        profile = profile.replace_device(**changes["device"])
    for finding in findings(profile, lambda path: False):
        touched = [flags[key] for key in finding.keys if key in flags]
        if touched:
            report.issues.append(
                Issue(finding.severity, "", None, touched[0], finding.message, finding.fix)
            )
    if report.error_count:
        raise ProfileError.from_issues(report.issues)
    if on_warning is not None:
        for issue in report.issues:
            on_warning(issue)
    return profile

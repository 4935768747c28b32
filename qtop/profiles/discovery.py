"""Where profiles live: ./profiles, the user's, and the ones shipped with qtop.

A name is looked up in that order, so a profile in the current directory
hides a shipped one of the same name; ``resolve`` says which file it took and
what it hid. ``builtin_profile`` never looks anywhere but the shipped ones: a
command that runs a profile of its own (``qtop demo``) must not run a file
that happens to sit in the directory it was started from.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from qtop.profiles.issues import ProfileError

_PACKAGE_DIR = Path(__file__).resolve().parent.parent


def builtin_profile_dir() -> Path:
    """The profiles shipped with qtop (the wheel's copy, or the repository's profiles/)."""
    packaged = _PACKAGE_DIR / "_profiles"
    if packaged.is_dir():
        return packaged
    return _PACKAGE_DIR.parent / "profiles"


def builtin_profile(name: str) -> Path:
    """A profile shipped with qtop, by name; never one from ./profiles or the user's."""
    path = builtin_profile_dir() / f"{name}.yaml"
    if not path.is_file():
        raise ProfileError(
            f"qtop's shipped profile {name!r} is missing from {builtin_profile_dir()}",
            "reinstall qtop",
        )
    return path


def user_profile_dir() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
    return Path(base) / "qtop" / "profiles"


def profile_dirs() -> tuple[Path, ...]:
    """Searched in order: ./profiles, the user's, the built-in ones."""
    dirs = [Path.cwd() / "profiles", user_profile_dir(), builtin_profile_dir()]
    unique: list[Path] = []
    for directory in dirs:
        if directory.is_dir() and directory.resolve() not in [d.resolve() for d in unique]:
            unique.append(directory)
    return tuple(unique)


def _all_profile_files() -> Iterator[Path]:
    for directory in profile_dirs():
        yield from sorted(directory.glob("*.y*ml"))


def iter_profile_files() -> Iterator[Path]:
    """One file per profile name: the first found in search order."""
    seen: set[str] = set()
    for path in _all_profile_files():
        if path.stem not in seen:
            seen.add(path.stem)
            yield path


@dataclass(frozen=True, slots=True)
class Resolved:
    """The file a profile reference names, and how it was found."""

    reference: str
    path: Path
    by_name: bool
    hidden: tuple[Path, ...] = ()

    def describe(self) -> str:
        """One line saying which file a name resolved to (and what it hides)."""
        text = f"profile {self.reference}: {self.path}"
        if self.hidden:
            text += " (it hides " + ", ".join(str(path) for path in self.hidden) + ")"
        return text


def resolve(name_or_path: str) -> Resolved:
    """The profile file for a path or a name (``iq9075-qwen-netrun``)."""
    candidate = Path(name_or_path).expanduser()
    if candidate.is_file():
        return Resolved(name_or_path, candidate, by_name=False)
    matches = [path for path in _all_profile_files() if path.stem == name_or_path]
    if matches:
        return Resolved(name_or_path, matches[0], by_name=True, hidden=tuple(matches[1:]))
    names = [path.stem for path in iter_profile_files()]
    close = difflib.get_close_matches(name_or_path, names, n=1)
    fix = f"did you mean '{close[0]}'?" if close else "run 'qtop profiles' to list them"
    raise ProfileError(f"no profile file or profile named {name_or_path!r}", fix)


def resolve_profile(name_or_path: str) -> Path:
    """A profile path from a path or a name (``iq9075-qwen-netrun``)."""
    return resolve(name_or_path).path

"""The one place that turns arguments into a shell command line for the device.

Everything qtop runs remotely is a string a POSIX shell parses, so every
argument that is not a fixed word of qtop's own goes through ``quote``. Single
quotes keep every byte literal except the single quote itself, which is
closed, escaped and reopened; that is the only rule, and it holds for dash,
bash, busybox ash and toybox sh alike.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

_SAFE = re.compile(r"^[A-Za-z0-9_@%+=:,./-]+\Z")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\Z")


class CommandError(ValueError):
    """An argument that no shell command line can carry."""


def quote(argument: str) -> str:
    """``argument`` as one shell word that expands to exactly itself."""
    if "\x00" in argument:
        raise CommandError(f"{argument!r}: a NUL byte cannot be passed in a shell command line")
    if argument and _SAFE.match(argument):
        return argument
    return "'" + argument.replace("'", "'\\''") + "'"


def join(argv: Iterable[str]) -> str:
    """A command line running ``argv`` with every word quoted."""
    words = [quote(word) for word in argv]
    if not words:
        raise CommandError("an empty command cannot be run")
    return " ".join(words)


def check_env_name(name: str) -> str:
    if not _ENV_NAME.match(name):
        raise CommandError(
            f"{name!r} is not a valid environment variable name (letters, digits and _)"
        )
    return name


def assignment(name: str, value: str) -> str:
    """``NAME='value'``: a shell variable assignment with the value quoted."""
    return f"{check_env_name(name)}={quote(value)}"


def exports(env: Mapping[str, str]) -> str:
    """Shell lines exporting ``env``, one variable per line, in the mapping's order."""
    return "".join(f"export {assignment(name, value)}\n" for name, value in env.items())


def build(
    argv: Sequence[str],
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
) -> str:
    """A command line that runs ``argv`` in ``cwd`` with ``env`` added, everything quoted."""
    parts: list[str] = []
    if cwd is not None:
        parts.append(f"cd {quote(cwd)} &&")
    if env:
        parts.extend(assignment(name, value) for name, value in env.items())
    parts.append(join(argv))
    return " ".join(parts)

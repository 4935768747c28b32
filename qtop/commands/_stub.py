"""A registered subcommand whose implementation has not landed yet."""

from __future__ import annotations

from qtop.errors import UsageError


def not_available(command: str, issue: str) -> UsageError:
    return UsageError(
        f"'qtop {command}' is not available in this build yet ({issue})",
        "use a build where it has landed; see README.md for what works today",
    )

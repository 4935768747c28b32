"""Errors that reach the user as one or two lines, never as a traceback.

Every failure a user can cause or fix (bad YAML, an unreachable host, a torn
recording) is raised as a ``QtopError`` that names the problem and the fix. The
command line maps the class to the exit code of the contract: 2 for bad usage
or input, 1 for a run or gate that failed.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


class QtopError(Exception):
    """A problem the user can act on: what is wrong, and how to fix it."""

    exit_code = EXIT_USAGE

    def __init__(self, problem: str, fix: str | None = None) -> None:
        super().__init__(problem)
        self.problem = problem
        self.fix = fix

    def __str__(self) -> str:
        return self.problem if not self.fix else f"{self.problem}\n  fix: {self.fix}"


class UsageError(QtopError):
    """Bad command-line usage or bad input file (exit 2)."""


class RunFailed(QtopError):
    """The device run, a connection or a gate failed (exit 1)."""

    exit_code = EXIT_FAILED

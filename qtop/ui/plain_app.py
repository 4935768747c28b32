"""The base of qtop's apps: every toast is plain text, never markup."""

from __future__ import annotations

from typing import TypeVar

from textual.app import App
from textual.notifications import SeverityLevel

from qtop.textsafe import clean

ReturnType = TypeVar("ReturnType")


class PlainApp(App[ReturnType]):
    """An ``App`` whose notifications are cleaned: error messages quote device text."""

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = False,
    ) -> None:
        """A toast; its text is always plain."""
        super().notify(
            clean(message, keep_newlines=True),
            title=clean(title),
            severity=severity,
            timeout=timeout,
            markup=False,
        )

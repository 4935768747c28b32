"""Several sessions shown together: one per device of ``qtop run A B``, or per recording.

The combined view (``qtop.ui.devices``) reads only this: a name for each device and
its ``Session``, or why it has none (it failed before its run started). Each session
is exactly what a single-device run or replay has, so nothing about recording,
analysis or replay differs when devices run side by side.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from qtop.session import Session
from qtop.textsafe import plain


@dataclass(slots=True)
class DeviceSession:
    """One device of a set: its display name and its session (None when it never started)."""

    name: str
    session: Session | None
    error: str | None = None


def distinct_names(names: Iterable[str]) -> list[str]:
    """The names made plain and told apart: a repeated name gets ``#2``, ``#3``, ..."""
    out: list[str] = []
    seen: dict[str, int] = {}
    for raw in names:
        name = plain(raw) or "device"
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name}#{seen[name]}")
    return out

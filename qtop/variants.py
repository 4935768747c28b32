"""Variant names as events carry them: a repetition of a run is ``<variant>#<k>``.

With ``run.repeat: N`` the whole plan runs N times in one session, and every
iteration and phase change of repetition k (from 1) carries the variant name
``<name>#<k>`` (``#<k>`` for a run without variants). A profile's variant
names cannot contain ``#``, so the split is unambiguous. Reports show each
repetition on its own; ``compare`` puts them back together and uses the
spread between them.
"""

from __future__ import annotations

import re

REPETITION_MARK = "#"
_REPEATED = re.compile(r"^(?P<name>.*)#(?P<k>[1-9][0-9]{0,8})\Z", re.DOTALL)


def repetition_name(variant: str, repetition: int) -> str:
    """The name repetition ``repetition`` (from 1) of ``variant`` carries in events."""
    return f"{variant}{REPETITION_MARK}{repetition}"


def split_repetition(name: str) -> tuple[str, int | None]:
    """``w8a8#2`` -> ("w8a8", 2); a name without a repetition -> (name, None)."""
    match = _REPEATED.match(name)
    if match is None:
        return name, None
    return match["name"], int(match["k"])

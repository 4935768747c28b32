"""Analysis results as plain JSON types, for ``--format json`` and CI tooling."""

from __future__ import annotations

import dataclasses
import math
from typing import Any


def to_plain(value: Any) -> Any:
    """Dataclasses to dicts, tuples to lists, NaN and infinities to None.

    Fields declared with ``metadata={"export": False}`` (raw samples kept for
    ``compare``) are left out.
    """
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: to_plain(getattr(value, f.name))
            for f in dataclasses.fields(value)
            if f.metadata.get("export", True)
        }
    if isinstance(value, list | tuple):
        return [to_plain(item) for item in value]
    if isinstance(value, dict):
        return {str(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value

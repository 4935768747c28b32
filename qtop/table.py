"""Plain-text and Markdown tables, and number formatting shared by every report."""

from __future__ import annotations

import math
from collections.abc import Sequence

MISSING = "—"


def fmt(value: float | int | None, digits: int = 2, missing: str = MISSING) -> str:
    """A number for a table cell; ``None`` and NaN show as a dash, never as zero."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return missing
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return f"{value:.{digits}f}"


def _is_numeric(cell: str) -> bool:
    stripped = cell.strip().rstrip("%").replace(",", "").lstrip("+-")
    return stripped.replace(".", "", 1).isdigit() or cell.strip() == MISSING


def text_table(headers: Sequence[str], rows: Sequence[Sequence[str]], indent: str = "") -> str:
    """Columns padded to their widest cell; numeric columns right-aligned."""
    widths = [len(h) for h in headers]
    for row in rows:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], len(cell))
    numeric = [bool(rows) and all(_is_numeric(row[i]) for row in rows) for i in range(len(headers))]

    def line(cells: Sequence[str]) -> str:
        parts = [
            cell.rjust(widths[i]) if numeric[i] else cell.ljust(widths[i])
            for i, cell in enumerate(cells)
        ]
        return (indent + "  ".join(parts)).rstrip()

    out = [line(headers), indent + "  ".join("-" * w for w in widths)]
    out.extend(line(row) for row in rows)
    return "\n".join(out)


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    numeric = [bool(rows) and all(_is_numeric(row[i]) for row in rows) for i in range(len(headers))]

    def escape(cell: str) -> str:
        return cell.replace("|", "\\|")

    out = ["| " + " | ".join(escape(h) for h in headers) + " |"]
    out.append("|" + "|".join("---:" if n else "---" for n in numeric) + "|")
    out.extend("| " + " | ".join(escape(c) for c in row) + " |" for row in rows)
    return "\n".join(out)

"""Braille line plots as rows of styled text runs, with no Textual in sight.

Each terminal cell holds a 2x4 grid of braille dots, so a 60x10 cell plot has
120x40 dots. Lines are drawn column by column: every dot column gets the span
from the lowest to the highest point that falls in it, joined to the previous
column, so a thousand points cost about as much as the plot is wide and a
single spike still shows. ``LineChart`` turns the rows into strips; tests read
the rows directly.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from qtop.ui.format import nice_step, smaller_step, tick_label

# Bit of each dot in a braille cell, by (row within the cell, column within the cell).
_DOTS = ((0x01, 0x08), (0x02, 0x10), (0x04, 0x20), (0x40, 0x80))
_BRAILLE_BASE = 0x2800
MARK_CHAR = "┊"
MIN_WIDTH = 8
MIN_HEIGHT = 3

Run = tuple[str, str]
"""A run of text and the name of its style (``axis``, ``line-0``, ``rule-1``, ``mark``, ``""``)."""


@dataclass(frozen=True, slots=True)
class Line:
    """A polyline of (x, y) points in ascending x, drawn in style ``line-<colour>``.

    Consecutive points further apart than ``max_gap`` in x are not joined, so a
    hole in the data stays a hole.
    """

    points: Sequence[tuple[float, float]]
    colour: int = 0
    axis: str = "left"
    max_gap: float | None = None


@dataclass(frozen=True, slots=True)
class Rule:
    """A dotted horizontal reference line (a percentile, a trip point) with a short label."""

    y: float
    colour: int = 0
    label: str = ""
    axis: str = "left"


@dataclass(frozen=True, slots=True)
class Mark:
    """A vertical marker at x (throttling onset, a user's note) with a label on the top row."""

    x: float
    label: str = ""


def _plain_number(value: float) -> str:
    return f"{value:g}"


@dataclass(frozen=True, slots=True)
class Figure:
    """Everything one chart shows; the y ranges fit the data unless given."""

    lines: tuple[Line, ...] = ()
    rules: tuple[Rule, ...] = ()
    marks: tuple[Mark, ...] = ()
    x_range: tuple[float, float] | None = None
    y_range: tuple[float, float] | None = None
    y2_range: tuple[float, float] | None = None
    y_unit: str = ""
    y2_unit: str = ""
    x_format: Callable[[float], str] = field(default=_plain_number)

    @property
    def has_data(self) -> bool:
        return any(line.points for line in self.lines)


@dataclass(frozen=True, slots=True)
class _Axis:
    low: float
    high: float
    ticks: tuple[float, ...]
    labels: tuple[str, ...]

    def dot(self, value: float, dots: int) -> int:
        span = self.high - self.low
        position = (self.high - value) / span * (dots - 1) if span > 0 else dots / 2
        return min(dots - 1, max(0, round(position)))


# A range narrower than this share of its values is noise around a level, not a scale:
# it is widened, so a steady 3 ms latency reads 2.95-3.05 ms, not 2.9985-3.0015.
MIN_RELATIVE_SPAN = 0.05
# Snapping the ends out to whole ticks may add this much room, no more.
SNAP_ROOM = 0.5


def _axis(values: list[float], fixed: tuple[float, float] | None, unit: str, rows: int) -> _Axis:
    if fixed is not None:
        low, high = fixed
    elif values:
        low, high = min(values), max(values)
    else:
        low, high = 0.0, 1.0
    span = max(high - low, abs(high + low) / 2 * MIN_RELATIVE_SPAN) or 1.0
    if fixed is None and span > high - low:
        middle = (high + low) / 2
        low, high = middle - span / 2, middle + span / 2
    count = max(2, min(6, rows // 2 + 1))
    step = nice_step((high - low) / (count - 1))
    # Two labels at least, so the scale can be read.
    while len(_multiples(low, high, step)) < 2:
        step = smaller_step(step)
    if fixed is None:
        snapped_low = math.floor(low / step + 1e-9) * step
        snapped_high = math.ceil(high / step - 1e-9) * step
        if snapped_high - snapped_low <= (high - low) * (1 + SNAP_ROOM):
            low, high = snapped_low, snapped_high
    ticks = _multiples(low, high, step)
    suffix = f" {unit}" if unit else ""
    labels = tuple(tick_label(t, step) + suffix for t in ticks)
    return _Axis(low, high, tuple(ticks), labels)


def _multiples(low: float, high: float, step: float) -> list[float]:
    """The multiples of ``step`` from low to high (rounded to the step's grain)."""
    first = math.ceil(low / step - 1e-9)
    last = math.floor(high / step + 1e-9)
    return [round(k * step, 12) for k in range(first, last + 1)]


def _values(figure: Figure, axis: str) -> list[float]:
    out = [y for line in figure.lines if line.axis == axis for _, y in line.points]
    out.extend(rule.y for rule in figure.rules if rule.axis == axis)
    return [v for v in out if math.isfinite(v)]


class _Canvas:
    """Braille bits and a style per cell."""

    def __init__(self, columns: int, rows: int) -> None:
        self.columns, self.rows = columns, rows
        self.width, self.height = columns * 2, rows * 4
        self.bits = bytearray(columns * rows)
        self.styles = [""] * (columns * rows)

    def dot(self, x: int, y: int, style: str) -> None:
        cell = (y >> 2) * self.columns + (x >> 1)
        self.bits[cell] |= _DOTS[y & 3][x & 1]
        self.styles[cell] = style

    def span(self, x: int, y0: int, y1: int, style: str) -> None:
        if y0 > y1:
            y0, y1 = y1, y0
        for y in range(y0, y1 + 1):
            self.dot(x, y, style)


def _draw_line(canvas: _Canvas, line: Line, x_range: tuple[float, float], axis: _Axis) -> None:
    style = f"line-{line.colour}"
    x0, x1 = x_range
    x_scale = (canvas.width - 1) / (x1 - x0)
    x_top = canvas.width - 1
    y_span = axis.high - axis.low
    y_scale = (canvas.height - 1) / y_span if y_span > 0 else 0.0
    y_top = canvas.height - 1
    high = axis.high
    isfinite = math.isfinite
    # Per dot column: lowest, highest, first and last dot row, and the x of its last point.
    columns: dict[int, list[float]] = {}
    order: list[int] = []
    for x, y in line.points:
        if not (isfinite(x) and isfinite(y)):
            continue
        dx = int((x - x0) * x_scale + 0.5)
        dx = 0 if dx < 0 else (x_top if dx > x_top else dx)
        dy = int((high - y) * y_scale + 0.5)
        dy = 0 if dy < 0 else (y_top if dy > y_top else dy)
        column = columns.get(dx)
        if column is None:
            columns[dx] = [dy, dy, dy, dy, x, x]
            order.append(dx)
        else:
            if dy < column[0]:
                column[0] = dy
            elif dy > column[1]:
                column[1] = dy
            column[3] = dy
            column[5] = x
    previous: list[float] | None = None
    previous_dx = 0
    for dx in order:
        low, top, first, _, x_first, _ = columns[dx]
        canvas.span(dx, int(low), int(top), style)
        joined = previous is not None and (
            line.max_gap is None or x_first - previous[5] <= line.max_gap
        )
        if previous is not None and joined:
            start_y, steps = int(previous[3]), dx - previous_dx
            for k in range(1, steps + 1):
                y = round(start_y + (first - start_y) * k / steps)
                y_before = round(start_y + (first - start_y) * (k - 1) / steps)
                canvas.span(previous_dx + k, y_before, y, style)
        previous, previous_dx = columns[dx], dx


def _runs(cells: Sequence[tuple[str, str]]) -> list[Run]:
    runs: list[Run] = []
    for char, style in cells:
        if runs and runs[-1][1] == style:
            runs[-1] = (runs[-1][0] + char, style)
        else:
            runs.append((char, style))
    return runs


def _placed(labels: list[tuple[int, str]], width: int) -> str:
    """Labels at column positions on one line, skipping any that would overlap."""
    row = [" "] * width
    taken = -1
    for column, label in labels:
        start = max(0, min(column - len(label) // 2, width - len(label)))
        if start <= taken or start + len(label) > width:
            continue
        row[start : start + len(label)] = label
        taken = start + len(label)
    return "".join(row)


def plot(figure: Figure, width: int, height: int) -> list[list[Run]]:
    """The chart as ``height`` rows of styled runs, each row ``width`` cells wide."""
    if width <= 0 or height <= 0:
        return []
    if width < MIN_WIDTH or height < MIN_HEIGHT:
        return [[(" " * width, "")] for _ in range(height)]
    uses_right = any(line.axis == "right" for line in figure.lines)
    rows = height - 1
    left = _axis(_values(figure, "left"), figure.y_range, figure.y_unit, rows)
    right = (
        _axis(_values(figure, "right"), figure.y2_range, figure.y2_unit, rows)
        if uses_right
        else None
    )
    left_width = max(len(label) for label in left.labels)
    rule_labels = [rule.label for rule in figure.rules if rule.label]
    right_width = 0
    if right is not None:
        right_width = max(len(label) for label in right.labels) + 1
    elif rule_labels:
        right_width = max(len(label) for label in rule_labels) + 1
    columns = width - left_width - 1 - right_width
    if columns < 4 or rows < 2:
        return [[(" " * width, "")] for _ in range(height)]
    canvas = _Canvas(columns, rows)
    xs = [x for line in figure.lines for x, _ in line.points if math.isfinite(x)]
    x0, x1 = figure.x_range or ((min(xs), max(xs)) if xs else (0.0, 1.0))
    if not x1 > x0:
        x1 = x0 + 1.0

    def x_of(x: float) -> int:
        return min(canvas.width - 1, max(0, round((x - x0) / (x1 - x0) * (canvas.width - 1))))

    def axis_of(name: str) -> _Axis:
        return right if name == "right" and right is not None else left

    rule_rows: dict[int, tuple[str, str]] = {}
    for rule in figure.rules:
        if not math.isfinite(rule.y):
            continue
        axis = axis_of(rule.axis)
        if not axis.low <= rule.y <= axis.high:
            continue
        dy = axis.dot(rule.y, canvas.height)
        for dx in range(0, canvas.width, 3):
            canvas.dot(dx, dy, f"rule-{rule.colour}")
        if rule.label:
            rule_rows.setdefault(dy >> 2, (rule.label, f"rule-{rule.colour}"))
    for line in figure.lines:
        axis = axis_of(line.axis)
        _draw_line(canvas, line, (x0, x1), axis)
    mark_columns: dict[int, str] = {}
    for mark in figure.marks:
        if math.isfinite(mark.x) and x0 <= mark.x <= x1:
            mark_columns[x_of(mark.x) >> 1] = mark.label

    def tick_rows(axis: _Axis) -> dict[int, str]:
        """Row of each label; where two ticks share a row, the first keeps it."""
        rows: dict[int, str] = {}
        for tick, label in zip(axis.ticks, axis.labels, strict=True):
            rows.setdefault(axis.dot(tick, canvas.height) >> 2, label)
        return rows

    left_ticks = tick_rows(left)
    right_ticks = tick_rows(right) if right is not None else {}
    out: list[list[Run]] = []
    for row in range(rows):
        cells: list[tuple[str, str]] = []
        label = left_ticks.get(row)
        cells.append(((label or "").rjust(left_width), "axis"))
        cells.append(("┤" if label else "│", "axis"))
        base = row * columns
        for column in range(columns):
            bits = canvas.bits[base + column]
            if bits:
                cells.append((chr(_BRAILLE_BASE + bits), canvas.styles[base + column]))
            elif column in mark_columns:
                cells.append((MARK_CHAR, "mark"))
            else:
                cells.append((" ", ""))
        if row == 0:
            for column, text in sorted(mark_columns.items()):
                for k, char in enumerate(text[: max(0, columns - column - 1)]):
                    cells[2 + column + 1 + k] = (char, "mark")
        if right is not None:
            text = right_ticks.get(row, "")
            cells.append(((" " + text).ljust(right_width), "axis-2"))
        elif right_width:
            text, style = rule_rows.get(row, ("", ""))
            cells.append(((" " + text).ljust(right_width), style))
        out.append(_runs(cells))
    x_labels = [(0, figure.x_format(x0)), (columns - 1, figure.x_format(x1))]
    if columns >= 40:
        x_labels.insert(1, (columns // 2, figure.x_format((x0 + x1) / 2)))
    if columns >= 80:
        x_labels.insert(1, (columns // 4, figure.x_format(x0 + (x1 - x0) / 4)))
        x_labels.insert(3, (3 * columns // 4, figure.x_format(x0 + 3 * (x1 - x0) / 4)))
    bottom = " " * left_width + "└" + _placed(x_labels, columns) + " " * right_width
    out.append([(bottom, "axis")])
    return out


def text_of(rows: list[list[Run]]) -> list[str]:
    """The plain text of plotted rows (for tests and the tmux check)."""
    return ["".join(text for text, _ in row) for row in rows]


_EIGHTHS = " ▁▂▃▄▅▆▇█"


def bars(counts: Sequence[int], height: int) -> list[str]:
    """Vertical bars (one column per count) in eighth blocks, top row first."""
    if height <= 0:
        return []
    peak = max(counts, default=0)
    if peak <= 0:
        return [" " * len(counts) for _ in range(height)]
    levels = [round(count / peak * height * 8) if count else 0 for count in counts]
    # A bin that holds anything gets at least the lowest block, so it is not mistaken for empty.
    levels = [max(level, 1) if count else 0 for level, count in zip(levels, counts, strict=True)]
    rows = []
    for row in range(height):
        floor = (height - 1 - row) * 8
        rows.append("".join(_EIGHTHS[min(8, max(0, level - floor))] for level in levels))
    return rows


GAP_FACTOR = 3.0


def gap_limit(xs: Sequence[float]) -> float | None:
    """Three times the typical spacing of ``xs``: a wider step is a hole in the data."""
    steps = sorted(b - a for a, b in itertools.pairwise(xs) if b > a)
    return GAP_FACTOR * steps[len(steps) // 2] if steps else None

"""The pure drawing and formatting code under the widgets."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from qtop.ui.format import clock, ellipsize, nice_step, smaller_step, sparkline, tick_label
from qtop.ui.plot import MARK_CHAR, Figure, Line, Mark, Rule, bars, gap_limit, plot, text_of
from qtop.ui.widgets.histogram import spread
from qtop.ui.widgets.ratio_bar import Ratio, ratio_text
from qtop.ui.widgets.timeline_bar import MARK_GLYPH, Progress, bar_cells


def test_a_flat_line_sits_on_one_row_with_its_axis_label():
    figure = Figure(lines=(Line([(0.0, 10.0), (1.0, 10.0)]),), y_range=(0.0, 20.0), y_unit="ms")
    rows = text_of(plot(figure, 30, 6))
    assert len(rows) == 6 and all(len(row) == 30 for row in rows)
    labels = [row.split("┤")[0].strip() for row in rows if "┤" in row]
    assert labels[0] == "20 ms" and labels[-1] == "0 ms"
    # 5 plot rows = 20 dot rows; 10 ms is dot row round(0.5 * 19) = 10, in cell row 2.
    line_rows = [i for i, row in enumerate(rows[:-1]) if any("⠀" < ch <= "⣿" for ch in row)]
    assert line_rows == [2]


def test_points_beyond_max_gap_are_not_joined():
    points = [(0.0, 0.0), (1.0, 0.0), (9.0, 10.0), (10.0, 10.0)]
    joined = text_of(plot(Figure(lines=(Line(points),)), 30, 8))
    apart = text_of(plot(Figure(lines=(Line(points, max_gap=2.0),)), 30, 8))

    def dots(rows: list[str]) -> int:
        return sum(1 for row in rows for ch in row if "⠀" < ch <= "⣿")

    assert dots(apart) < dots(joined)
    middle = [row[len(row) // 2] for row in apart[:-1]]
    assert all(ch == " " for ch in middle)


def test_rules_are_labelled_in_the_gutter_and_marks_on_the_top_row():
    figure = Figure(
        lines=(Line([(0.0, 1.0), (10.0, 3.0)]),),
        rules=(Rule(2.0, 1, "P95"),),
        marks=(Mark(5.0, "onset"),),
        y_range=(0.0, 4.0),
    )
    rows = text_of(plot(figure, 40, 10))
    assert any(row.rstrip().endswith("P95") for row in rows)
    assert "onset" in rows[0]
    assert sum(row.count(MARK_CHAR) for row in rows) >= 5


def test_a_second_axis_gets_its_own_labels():
    figure = Figure(
        lines=(Line([(0.0, 20.0), (1.0, 30.0)]), Line([(0.0, 40.0), (1.0, 90.0)], 1, "right")),
        y_unit="ms",
        y2_unit="C",
    )
    rows = text_of(plot(figure, 50, 10))
    assert any(row.rstrip().endswith(" C") for row in rows)
    assert any("ms┤" in row for row in rows)


def axis_labels(rows: list[str]) -> list[str]:
    return [row.split("┤")[0].strip() for row in rows if "┤" in row]


def test_axis_labels_have_the_decimals_their_step_needs_and_at_least_two():
    # A steady 3 ms latency: widened to 5% of its level, labelled in 0.05 ms, not 0.0025.
    steady = Figure(lines=(Line([(0.0, 2.999), (1.0, 3.001)]),), y_unit="ms")
    assert axis_labels(text_of(plot(steady, 40, 10))) == [
        "3.10 ms", "3.05 ms", "3.00 ms", "2.95 ms", "2.90 ms"
    ]  # fmt: skip
    # Temperatures over three rows: two labels at least, never one lone "0 C".
    heat = Figure(lines=(Line([(0.0, 42.2), (1.0, 105.6)]),), y_unit="C")
    labels = axis_labels(text_of(plot(heat, 40, 4)))
    assert len(labels) >= 2 and "0 C" not in labels


def test_too_small_a_chart_is_blank_not_garbage():
    rows = text_of(plot(Figure(lines=(Line([(0.0, 1.0), (1.0, 2.0)]),)), 8, 2))
    assert rows == [" " * 8, " " * 8]


@given(
    st.lists(
        st.tuples(st.floats(-1e6, 1e6), st.floats(-1e6, 1e6, allow_nan=False)),
        max_size=50,
    ),
    st.integers(1, 120),
    st.integers(1, 30),
)
def test_any_data_gives_rows_of_exactly_the_size_asked(points, width, height):
    points = sorted(points)
    rows = text_of(plot(Figure(lines=(Line(points),), y_unit="ms"), width, height))
    assert len(rows) == height
    assert all(len(row) == width for row in rows)


def test_bars_scale_to_the_tallest_and_never_hide_a_non_empty_bin():
    assert bars([0, 1, 8, 4], 2) == ["  █ ", " ▂██"]
    assert bars([0, 1, 200], 1) == [" ▁█"]


def test_spread_gives_each_bin_equal_columns_with_gaps():
    assert spread((1, 2), 8) == [1, 1, 1, 0, 2, 2, 2, 0]
    assert spread((1, 2, 3), 4) == [1, 2, 3]


def test_sparkline_buckets_keep_their_maximum():
    assert sparkline([0, 0, 0, 8, 0, 0], 3) == "▁█▁"
    assert sparkline([1, 2], 10) == "▁█"
    assert sparkline([5, 5, 5], 3) == "▁▁▁"


def test_gap_limit_is_three_typical_steps():
    assert math.isclose(gap_limit([0.0, 0.1, 0.2, 0.3, 5.0]), 0.3)
    assert gap_limit([1.0]) is None


def test_round_steps_labels_and_clock():
    assert [nice_step(raw) for raw in (25, 5.3, 0.075, 0.3)] == [20, 5, 0.1, 0.5]
    assert [smaller_step(step) for step in (5, 2, 1, 0.1)] == [2, 1, 0.5, 0.05]
    assert [tick_label(v, s) for v, s in ((2.5, 0.5), (0.3, 0.1), (100, 50), (-0.0, 1))] == [
        "2.5", "0.3", "100", "0"
    ]  # fmt: skip
    assert clock(65) == "1:05" and clock(3725) == "1:02:05" and clock(None) == "—"
    assert ellipsize("abcdef", 4) == "abc…" and ellipsize("abc", 4) == "abc"


def test_timeline_bar_cells_and_ratio_text():
    cells = bar_cells(Progress("▶ 1x", 5.0, 10.0, ((0.25, "phase"),)), 8)
    assert [c for c, _ in cells] == ["━", "━", MARK_GLYPH, "━", "─", "─", "─", "─"]
    assert cells[2][1] == "phase"
    assert ratio_text(Ratio(0.885), 20) == ("compute 11.5%", 2, 18, "88.5% wait")
    assert ratio_text(Ratio(None), 20) == ("compute ?", 0, 0, "? wait")

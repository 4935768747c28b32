"""The breakdown model: wait share, warm-up, per-op median/P95, growing shares, sorting."""

from __future__ import annotations

import pytest
from profiler_fixtures import read

from qtop.parsers import parse
from qtop.profiling.aggregate import breakdown, sort_ops


def _breakdown(name: str, kind: str, warmup: int = 1):
    return breakdown(parse(kind, read(name), name), warmup=warmup)


def test_seed_wait_share_is_88_5_percent_and_gather_is_on_dma():
    result = _breakdown("seed_linting_excerpt.txt", "qnn-viewer-text")

    (graph,) = result.graphs
    (execute,) = graph.executes
    assert execute.warmup is False  # the only execute is kept
    assert (execute.accelerator_us, execute.excluding_wait_us, execute.wait_us) == (
        1384,
        159,
        1225,
    )
    assert round(execute.wait_share * 100, 1) == 88.5
    assert execute.critical_path_cycles == 12875
    gather = next(op for op in graph.ops if op.key == "OpId_21")
    assert (gather.name, gather.cycles_median, gather.wait_median) == ("/Gather", 7411, 420)
    assert gather.resources == ("DMA",)
    assert round(gather.share_median, 4) == round(7411 / 12369, 4)
    assert result.notes == ()


def test_linting_graph_medians_p95_and_growing_share():
    result = _breakdown("viewer_linting_multigraph.txt", "qnn-viewer-text")

    graph = result.graph("token_ar1_cl4096_1_of_6")
    assert graph is not None
    assert [(row.index, row.warmup) for row in graph.executes] == [
        (1, True),
        (3, False),
        (5, False),
        (6, False),
    ]
    assert (graph.warmup, graph.measured) == (1, 3)
    assert graph.accelerator_us_median == 1000
    assert graph.wait_us_median == 700
    assert graph.wait_share_median == pytest.approx(0.7)
    assert graph.wait_share_p95 == pytest.approx(0.79)  # 0.7 + 0.9 x (0.8 - 0.7)
    ops = {op.key: op for op in graph.ops}
    gather = ops["OpId_21"]
    assert (gather.wait_median, gather.wait_p95) == (500, 590)
    assert (gather.cycles_median, gather.overlap_median) == (7000, 320)
    softmax = ops["OpId_40"]
    assert (softmax.early_share, softmax.late_share) == pytest.approx((0.1, 0.3))
    assert softmax.share_growth == pytest.approx(0.2)
    assert ops["OpId_3"].share_growth == pytest.approx(-0.1)
    assert graph.growing == ("OpId_40",)


def test_second_graph_keeps_repeated_names_apart_by_op_id():
    result = _breakdown("viewer_linting_multigraph.txt", "qnn-viewer-text")

    graph = result.graph("token_ar1_cl4096_2_of_6")
    assert graph is not None
    assert graph.measured == 1
    assert graph.wait_share_median == 0.25
    adds = [(op.key, op.name, op.cycles_median) for op in graph.ops if op.name.endswith("Add")]
    assert adds == [
        ("OpId_80", "/model/layers.1/mlp/Add", 400),
        ("OpId_81", "/model/layers.1/mlp/Add", 500),
    ]


def test_warmup_count_changes_what_is_measured():
    none = _breakdown("viewer_detailed_2_45.txt", "qnn-viewer-text", warmup=0).graphs[0]
    one = _breakdown("viewer_detailed_2_45.txt", "qnn-viewer-text", warmup=1).graphs[0]

    assert none.measured == 3
    assert none.accelerator_us_median == 55
    assert one.measured == 2
    assert one.accelerator_us_median == 48
    assert one.accelerator_us_p95 == pytest.approx(54.3)
    assert one.wait_share_median == pytest.approx((23 / 55 + 12 / 41) / 2)
    inp = next(op for op in one.ops if op.key == "OpId_2")
    assert (inp.cycles_median, inp.cycles_p95) == (20967, pytest.approx(21545.7))


def test_warmup_larger_than_the_run_keeps_the_last_execute_and_says_so():
    result = _breakdown("viewer_detailed_2_45.txt", "qnn-viewer-text", warmup=5)

    graph = result.graphs[0]
    assert graph.measured == 1
    assert [row.warmup for row in graph.executes] == [True, True, False]
    assert result.notes == (
        "graph (unnamed): 3 execute(s), so 2 warm-up execute(s) left out instead of 5",
    )


def test_basic_report_average_becomes_a_graph():
    result = _breakdown("viewer_basic_2_13.txt", "qnn-viewer-text")

    (graph,) = result.graphs
    assert (graph.name, graph.source) == ("model", "average")
    assert graph.accelerator_us_median == 2492
    assert graph.wait_share_median is None  # 2.13 prints no 'excluding wait' root


def test_csv_breakdown_uses_microsecond_roots():
    graph = _breakdown("viewer_detailed.csv", "qnn-viewer-csv").graphs[0]

    assert graph.name == "tiny_block_decode"
    assert [row.wait_share for row in graph.executes] == [0.8, 0.5, 0.4]
    assert graph.wait_share_median == pytest.approx(0.45)
    concat = next(op for op in graph.ops if op.key == "OpId_130")
    assert concat.cycles_median == 84500


def test_ai_hub_estimate_against_its_own_runs():
    hub = _breakdown("ai_hub_profile.json", "ai-hub").ai_hub

    assert hub is not None
    assert (hub.estimated_us, hub.min_us, hub.runs, hub.warmup) == (281, 281, 10, 1)
    assert hub.median_us == 300
    assert hub.p95_us == pytest.approx(338.8)


def test_sort_by_wait_or_cycles():
    graph = _breakdown("viewer_linting_multigraph.txt", "qnn-viewer-text").graphs[0]

    assert [op.key for op in sort_ops(graph.ops, "wait")] == [
        "OpId_21",
        "OpId_3",
        "OpId_40",
        "OpId_2",
    ]
    assert [op.key for op in sort_ops(graph.ops, "cycles")] == [
        "OpId_21",
        "OpId_40",
        "OpId_3",
        "OpId_2",
    ]
    with pytest.raises(ValueError, match="sort key"):
        sort_ops(graph.ops, "name")


def test_breakdown_to_dict_is_json_ready():
    data = _breakdown("seed_linting_excerpt.txt", "qnn-viewer-text").to_dict()

    graph = data["graphs"][0]
    assert graph["executes"][0]["wait_share"] == pytest.approx(1225 / 1384)
    assert graph["ops"][1]["resources"] == ["DMA"]
    assert graph["ops"][1]["early_share"] == pytest.approx(7411 / 12369)

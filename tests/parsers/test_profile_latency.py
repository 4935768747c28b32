"""Per-inference latency and Genie figures taken from parsed profiler files."""

from pathlib import Path

import pytest

from qtop.parsers import parse_auto
from qtop.profiling.latency import execute_latencies, genie_figures

PROFILER = Path(__file__).parents[1] / "fixtures" / "profiler"


def parsed(name):
    return parse_auto((PROFILER / name).read_text(encoding="utf-8"), name)


def test_detailed_text_gives_one_latency_per_execute_from_the_qnn_execute_time():
    latencies = execute_latencies(parsed("viewer_detailed_2_45.txt"))
    assert [(item.index, item.latency_s) for item in latencies] == [
        (1, 0.003955),
        (2, 0.002674),
        (3, 0.002677),
    ]
    assert {item.metric for item in latencies} == {"qnn execute"}


def test_multigraph_executes_come_out_in_the_order_they_ran():
    latencies = execute_latencies(parsed("viewer_linting_multigraph.txt"))
    indexes = [item.index for item in latencies]
    assert indexes == sorted(indexes)
    assert {item.graph for item in latencies} >= {"token_ar1_cl4096_1_of_6"}


def test_csv_and_standardized_json_give_the_same_kind_of_latency():
    assert execute_latencies(parsed("viewer_detailed.csv"))[0].latency_s == pytest.approx(0.003278)
    assert execute_latencies(parsed("viewer_standardized.json"))[0].latency_s == pytest.approx(
        0.003001
    )


def test_genie_profile_figures():
    first = genie_figures(parsed("genie_profile.json"))[0]
    assert first.latency_s == pytest.approx(0.531665 + 5.191579)
    assert first.ttft_s == pytest.approx(0.531665)
    assert first.prefill_tok_s == pytest.approx(1547.9876708984375)
    assert first.decode_tok_s == pytest.approx(38.52525329589844)
    assert first.metrics()["generated_tokens"] == 200.0


def test_the_seed_genie_variant_with_scalar_counts():
    (query,) = genie_figures(parsed("genie_profile_seed.json"))
    assert query.ttft_s == pytest.approx(0.166485)
    assert query.latency_s == pytest.approx(0.166485 + 0.097013)
    assert query.prompt_tokens == 8.0
    assert query.decode_tok_s == pytest.approx(20.62)


def test_files_without_executes_give_no_latencies():
    assert execute_latencies(parsed("genie_profile.json")) == []
    assert genie_figures(parsed("viewer_detailed_2_45.txt")) == []

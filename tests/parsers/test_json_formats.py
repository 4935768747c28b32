"""Viewer standardized JSON, optrace chrometrace, runtrace, QHAS, Genie, AI Hub."""

from __future__ import annotations

import json

import pytest
from profiler_fixtures import read

from qtop.parsers import ai_hub, genie, optrace, qnn_viewer_json
from qtop.profiling.model import Metric, OpRow, op_join_key


def test_standardized_json_messages_and_sub_events():
    profile = qnn_viewer_json.parse(read("viewer_standardized.json"))

    assert profile.info == {"appName": "qnn-net-run", "appVersion": "v2.49.0.260730134355"}
    assert [(s.name, s.metrics) for s in profile.sections] == [
        ("BACKEND_CREATE_FROM_BINARY", (Metric("QNN (load binary) time", 9009, "us"),)),
        ("BACKEND_DEINIT", (Metric("QNN (deinit) time", 19359, "us"),)),
    ]
    (graph,) = profile.graphs
    first = graph.executes[0]
    assert first.metrics == (
        Metric("Accelerator (execute excluding wait) time", 77, "us"),
        Metric("Accelerator (execute) time", 1734, "us"),
        Metric("QNN (execute) time", 3001, "us"),
        Metric("Accelerator (execute) time (cycles)", 29239, "cycles"),
    )
    assert first.ops == (
        OpRow(name="fc", op_id=17, cycles=6137),
        OpRow(name="/model/layers.0/mlp/act_fn/Gelu_token_2", op_id=18, cycles=23102),
    )
    assert [e.index for e in graph.executes] == [1, 2, 3]


def test_optrace_dedupes_tracks_and_sums_htp_ops_per_qnn_op():
    profile = optrace.parse_chrometrace(read("optrace_chrometrace.json"))

    (execute,) = profile.graphs[0].executes
    assert execute.metrics == (
        Metric("Op trace span", 78132, "cycles"),
        Metric("HTP op instances", 5, "count"),
    )
    inp, relu, out = execute.ops
    assert inp == OpRow(
        name="Input",
        op_id=2,
        cycles=2770,
        dominant_path_cycles=2770,
        resources=("DMA",),
        flags=("dma", "dma_set"),
        thread_types=("HMX",),
        op_type="Input",
        instances=2,
    )
    assert (relu.key, relu.name, relu.cycles, relu.instances) == (
        "OpId_24",
        "/model/conv1/Relu:0",
        35714,
        2,
    )
    assert (relu.flags, relu.resources, relu.thread_types) == (("uses_hvx",), ("HVX",), ("HVX",))
    assert (out.key, out.cycles, out.flags, out.resources) == (
        "OpId_3",
        56166,
        ("dma_wait",),
        ("DMA",),
    )


def test_optrace_thread_types_come_from_metadata_not_tid_numbers():
    events = [
        {"ph": "M", "name": "thread_name", "pid": 0, "tid": 256, "args": {"name": "Type: DMA"}},
        {
            "name": "q::Op",
            "ph": "X",
            "tid": 256,
            "pid": 0,
            "ts": 0,
            "dur": 10,
            "args": {"ID": "0x10", "QNN Op Name": "Op", "Flags": []},
        },
    ]

    profile = optrace.parse_chrometrace(json.dumps({"traceEvents": events}))

    (op,) = profile.graphs[0].executes[0].ops
    assert (op.key, op.thread_types, op.cycles) == ("OpId_16", ("DMA",), 10)


def test_runtrace_ticks_and_microseconds_per_inference():
    profile = optrace.parse_runtrace(read("runtrace.json"))

    (graph,) = profile.graphs
    assert graph.name == "model"
    first, second, third = graph.executes
    by_name = {m.name: m for m in first.metrics}
    assert by_name["QNN DSP Execute"] == Metric("QNN DSP Execute", 410.885, "us")
    assert by_name["QNN DSP Execute (ticks)"] == Metric("QNN DSP Execute (ticks)", 7889, "ticks")
    assert by_name["Resource Power On"].value == 309.167
    assert by_name["Resource Power On (ticks)"].value == 5936
    assert by_name["Graph Execute HTP clock"] == Metric("Graph Execute HTP clock", 1.93873, "GHz")
    assert {m.name: m.value for m in second.metrics}["Resource Power On"] == 0.520833
    assert third.index == 3


def test_runtrace_without_summary_converts_ticks_and_says_so():
    events = [{"name": "QNN DSP Execute", "ph": "X", "ts": 0, "dur": 1920, "args": {}}]

    profile = optrace.parse_runtrace(json.dumps({"traceEvents": events}))

    metric = profile.graphs[0].executes[0].metrics[0]
    assert (metric.value, metric.unit, metric.note) == (100.0, "us", "computed as ticks / 19.2")


def test_qhas_summary_resources_and_flagged_ops():
    profile = optrace.parse_qhas(read("qhas_summary.json"))

    (execute,) = profile.graphs[0].executes
    assert profile.graphs[0].name == "model"
    assert Metric("graph_execute_us", 56, "us", source="HTP 0") in execute.metrics
    assert Metric("percent_utilization", 97.35, "%", source="HTP 0") in execute.metrics
    hmx = profile.sections[0]
    assert hmx.name == "HTP resource HMX (tid 256)"
    assert Metric("utilization", 59.874, "%", source="HTP 0") in hmx.metrics
    matmul, inp = execute.ops
    assert (matmul.key, matmul.name, matmul.cycles, matmul.flags, matmul.resources) == (
        "OpId_35",
        "MatMul_2",
        67827,
        ("uses_hvx",),
        ("HVX",),
    )
    assert (inp.key, inp.cycles, inp.flags, inp.dominant_path_cycles) == (
        "OpId_2",
        20324,
        ("dma_wait",),
        111,
    )


def test_genie_profile_events_found_by_type():
    profile = genie.parse_profile(read("genie_profile.json"))

    first, second = profile.queries
    assert first.component == "dialog0"
    assert first.value("num-prompt-tokens") == 823
    assert first.time_us("time-to-first-token") == 531665
    assert first.value("token-generation-rate") == 38.52525329589844
    assert [(s.name, s.graph) for s in profile.sections] == [
        ("GenieDialog_create", "dialog0"),
        ("GenieDialog_free", "dialog0"),
    ]
    assert profile.sections[0].metrics == (
        Metric("duration", 1124864, "us"),
        Metric("init-time", 1124713, "us"),
    )
    # QAIRT 2.49 style: rates and times, no counts; 1500 toks/s x 0.1 s = 150 tokens.
    assert second.value("num-prompt-tokens") == 150
    assert second.value("num-generated-tokens") == 80
    recomputed = [m for m in second.metrics if m.note]
    assert [m.name for m in recomputed] == ["num-prompt-tokens", "num-generated-tokens"]


def test_genie_seed_variant_scalars_keyed_by_type():
    profile = genie.parse_profile(read("genie_profile_seed.json"))

    (query,) = profile.queries
    assert query.value("num-prompt-tokens") == 8
    assert query.time_us("time-to-first-token") == 166485
    assert query.value("prompt-processing-rate") == 48.05
    assert query.value("num-generated-tokens") == 2
    assert query.time_us("token-generation-time") == 97013
    assert all(not m.note for m in query.metrics)


def test_genie_seed_rates_are_recomputed_from_count_and_time_when_left_out():
    document = json.loads(read("genie_profile_seed.json"))
    del document["GenieDialog_query"]["prompt-processing-rate"]
    del document["GenieDialog_query"]["token-generation-rate"]

    (query,) = genie.parse_profile(json.dumps(document)).queries

    # The seed printed 48.05 and 20.62: 8 tokens in 166485 us, 2 tokens in 97013 us.
    assert query.value("prompt-processing-rate") == 48.05
    assert query.value("token-generation-rate") == 20.62
    assert all(m.note for m in query.metrics if m.key.endswith("rate"))


def test_genie_rate_recomputed_from_count_and_time():
    doc = {
        "GenieDialog_query": {
            "num-generated-tokens": 10,
            "token-generation-time": {"value": 500000, "unit": "us"},
        }
    }

    (query,) = genie.parse_profile(json.dumps(doc)).queries

    assert query.value("token-generation-rate") == 20.0


def test_genie_stdout_with_old_kpis_block():
    profile = genie.parse_stdout(read("genie_stdout_kpis.txt"))

    assert profile.info == {"libGenie version": "1.1.0"}
    assert profile.sections[0].metrics == (Metric("Init Time", 6549034, "us"),)
    (query,) = profile.queries
    assert query.response == "\\n\\nFrance's capital is Paris."
    assert query.time_us("Prompt Processing Time") == 196067
    assert query.value("Token Generation Rate") == 12.152884
    assert query.value("num-prompt-tokens") == 17  # 86.70771 toks/s x 0.196067 s
    assert query.value("num-generated-tokens") == 9  # 12.152884 toks/s x 0.740568 s
    assert profile.unknown_lines == 0


def test_genie_stdout_new_style_keeps_log_lines_out_of_the_response():
    profile = genie.parse_stdout(read("genie_stdout_new.txt"))

    assert profile.info == {"pid": "4242", "libGenie version": "1.17.0"}
    (query,) = profile.queries
    assert query.complete is True
    assert query.response == (
        "Gravity is the force that pulls objects toward each other,\n"
        "keeping planets in orbit around the sun."
    )


def test_genie_stdout_without_end_is_an_unfinished_query():
    profile = genie.parse_stdout("[BEGIN]: The answer is")

    (query,) = profile.queries
    assert (query.complete, query.response) == (False, "The answer is")
    assert [w.code for w in profile.warnings] == ["unfinished_query"]


def test_ai_hub_summary_layers_and_the_minimum_trap():
    profile = ai_hub.parse(read("ai_hub_profile.json"))

    summary = profile.ai_hub
    assert summary is not None
    assert Metric("estimated_inference_time", 281, "us") in summary.metrics
    assert Metric("inference_memory_peak_range max", 1708040, "bytes") in summary.metrics
    assert summary.inference_times_us == (1995, 350, 321, 322, 300, 298, 281, 287, 290, 310)
    assert summary.first_load_times_us == (2495537,)
    assert [w.code for w in profile.warnings] == ["estimate_is_minimum"]
    layers = profile.graphs[0].executes[0].ops
    assert layers[1] == OpRow(
        name="/features/features.0/features.0.2/Clip",
        cycles=382150,
        time_us=181,
        op_type="Clip",
        compute_unit="NPU",
    )
    assert (layers[3].compute_unit, layers[3].cycles, layers[3].time_us) == ("CPU", None, 40)


@pytest.mark.parametrize(
    ("device", "cloud"),
    [
        (
            "/features/features.0/features.0.2/Clip:OpId_12",
            "/features/features.0/features.0.2/Clip",
        ),
        ("/resnet/embedder/Conv_token_1_2:OpId_24 (cycles)", "/resnet/embedder/Conv"),
        ("Input OpId_2", "Input"),
    ],
)
def test_op_join_key_matches_device_and_ai_hub_names(device, cloud):
    assert op_join_key(device) == op_join_key(cloud)

"""qnn-profile-viewer text: basic (2.13 and 2.45 headings), detailed, linting, seed, SNPE."""

from __future__ import annotations

import pytest
from profiler_fixtures import read

from qtop.parsers.common import TICKS_CAVEAT, ProfilerParseError, split_op_identifier
from qtop.parsers.qnn_viewer_text import QnnViewerTextError, parse
from qtop.profiling.model import Metric, OpRow


def test_seed_linting_excerpt_gives_ops_waits_and_dma():
    profile = parse(read("seed_linting_excerpt.txt"), "seed.txt")

    (graph,) = profile.graphs
    assert graph.name == "token_ar1_cl4096_1_of_6"
    (execute,) = graph.executes
    assert execute.index == 1
    assert execute.metrics == (
        Metric("Number of HVX threads used", 4, ""),
        Metric("Accelerator (critical path execute)", 12875, "cycles"),
        Metric("Accelerator (execute) time", 1384, "us"),
        Metric("Accelerator (execute excluding wait)", 159, "us"),
        Metric("QNN (execute) time", 2271, "us"),
    )
    assert execute.ops == (
        OpRow(name="Input", op_id=2, cycles=0, wait_cycles=0),
        OpRow(name="/Gather", op_id=21, cycles=7411, wait_cycles=420, resources=("DMA",)),
        OpRow(name="Output", op_id=3, cycles=4958, wait_cycles=86, resources=("DMA",)),
    )
    assert profile.unknown_lines == 0
    assert profile.warnings == ()


def test_basic_report_with_dash_headings_qnn_2_13():
    profile = parse(read("viewer_basic_2_13.txt"))

    assert profile.graphs == ()
    names = [(s.name, s.graph) for s in profile.sections]
    assert names == [
        ("Init Stats", ""),
        ("Compose Graphs Stats", ""),
        ("Finalize Stats", "model"),
        ("De-Init Stats", ""),
        ("Execute Stats (Average)", "model"),
        ("Execute Stats (Overall)", ""),
    ]
    average = profile.sections[4].metrics
    assert average[0] == Metric("NetRun", 2952, "us", source="NetRun")
    assert average[1] == Metric("Number of HVX threads used", 4, "count", source="Backend")
    assert average[4] == Metric("Accelerator (execute) time", 2492, "us", source="Backend")
    assert profile.sections[5].metrics == (
        Metric("NetRun IPS", 214.8888, "inf/sec", source="NetRun"),
    )
    assert profile.unknown_lines == 0


def test_detailed_qnn_2_45_underlined_headings_and_executes():
    profile = parse(read("viewer_detailed_2_45.txt"))

    assert profile.info["qnn-profile-viewer"] == "v2.45.0.260326154327"
    assert profile.info["Time Scale"] == "1e-06"
    assert [s.name for s in profile.sections] == [
        "Init Stats",
        "Compose Graphs Stats",
        "De-Init Stats",
        "Create From Binary Stats",
    ]
    assert profile.sections[3].metrics[0] == Metric("RPC (load binary) time", 8480, "us")
    (graph,) = profile.graphs
    assert [e.index for e in graph.executes] == [1, 2, 3]
    first = graph.executes[0]
    assert [(op.key, op.name, op.cycles) for op in first.ops] == [
        ("OpId_2", "Input", 19874),
        ("OpId_24", "/resnet/embedder/embedder/convolution/Conv_token_1_2", 60000),
        ("OpId_16", "MatMul_0_pre_reshape", 0),
        ("OpId_31", "model.layers.0/self_attn:q_proj", 124418),
        ("OpId_3", "Output", 47682),
    ]
    assert sum(op.cycles for op in first.ops) == 251974
    # 'Unknown event type :   object' is a known opaque optrace event, not an unknown line.
    assert profile.unknown_lines == 0


def test_ticks_labelled_us_are_flagged_not_trusted():
    profile = parse(read("viewer_detailed_2_45.txt"))

    first = profile.graphs[0].executes[0]
    power_on = next(m for m in first.metrics if m.name.startswith("Time for HVX + HMX"))
    assert power_on.value == 5936
    assert power_on.unit == "us"
    assert power_on.caveat == TICKS_CAVEAT
    assert power_on.in_us() is None
    rpc = next(m for m in first.metrics if m.name == "RPC (execute) time")
    assert rpc.caveat == ""
    assert rpc.in_us() == 3161
    (warning,) = profile.warnings
    assert warning.code == "ticks_labelled_us"
    assert warning.message.startswith("6 value(s)")


def test_linting_layout_with_sub_lines_overlap_lists_and_graphs():
    profile = parse(read("viewer_linting_multigraph.txt"))

    assert [(g.name, [e.index for e in g.executes]) for g in profile.graphs] == [
        ("token_ar1_cl4096_1_of_6", [1, 3, 5, 6]),
        ("token_ar1_cl4096_2_of_6", [2, 4]),
    ]
    first = profile.graphs[0].executes[0]
    assert first.metrics[1] == Metric(
        "Accelerator (critical path execute) time (cycles)", 12875, "cycles"
    )
    assert first.ops[0] == OpRow(name="Input", op_id=2, cycles=0, wait_cycles=0, resources=())
    assert first.ops[1] == OpRow(
        name="/model/embed_tokens/Gather",
        op_id=21,
        cycles=7411,
        wait_cycles=420,
        overlap_cycles=300,
        overlap_wait_cycles=120,
        resources=("DMA",),
        overlap_ops=("Output OpId_3",),
        overlap_wait_ops=("/model/layers.0/self_attn/Softmax:OpId_40",),
    )
    assert first.ops[2].resources == ("HVX", "HMX")
    second_graph_ops = profile.graphs[1].executes[0].ops
    assert [(op.key, op.name) for op in second_graph_ops] == [
        ("OpId_2", "Input"),
        ("OpId_80", "/model/layers.1/mlp/Add"),
        ("OpId_81", "/model/layers.1/mlp/Add"),
        ("OpId_77", "/model/layers.1/mlp/down_proj.weight_token_3"),
        ("OpId_3", "Output"),
    ]
    assert profile.unknown_lines == 0


def test_snpe_diagview_layer_times_variant():
    profile = parse(read("snpe_diagview_linting.txt"))

    assert profile.sections[0].metrics == (Metric("HTP Subnet 0", 4327266, "cycles"),)
    (execute,) = profile.graphs[0].executes
    conv, sub = execute.ops
    assert (conv.key, conv.name, conv.cycles) == ("OpId_21", "model_convStart_Conv2D", 147075)
    assert (conv.wait_cycles, conv.overlap_cycles, conv.overlap_wait_cycles) == (32, 85292, 32)
    assert conv.overlap_ops == ("model_sub_sub:OpId_57", "Output OpId_3")
    assert conv.overlap_wait_ops == ("model_convStart_Conv2D:OpId_21",)
    assert conv.resources == ("HVX", "HMX", "DMA")
    assert (sub.key, sub.cycles, sub.wait_cycles, sub.resources) == ("OpId_57", 2048, 7, ("HVX",))


@pytest.mark.parametrize(
    "line",
    [
        "/Gather:OpId_21 : 7411 cycles Wait(Scheduler) 420 Resources: DMA",
        "    /Gather:OpId_21 (cycles) : 7411  cycles Wait (Scheduler) time : 420  cycles "
        "Resources : DMA",
        "/Gather:OpId_21 : 7411 cycles Wait(Scheduler): 420 cycles Resources:DMA",
    ],
)
def test_both_inline_spellings_of_wait_and_resources(line):
    profile = parse(f"Execute Stat 1\n{line}\n")

    (op,) = profile.graphs[0].executes[0].ops
    assert (op.key, op.cycles, op.wait_cycles, op.resources) == ("OpId_21", 7411, 420, ("DMA",))


def test_both_spellings_of_excluding_wait_share_one_key():
    official = parse("Execute Stat 1\nAccelerator (execute excluding wait) time : 56  us\n")
    seed = parse("Execute Stat 1\nAccelerator (execute excluding wait) : 56 us\n")

    (a,) = official.graphs[0].executes[0].metrics
    (b,) = seed.graphs[0].executes[0].metrics
    assert a.key == b.key == "accelerator execute excluding wait"
    assert a.value == b.value == 56


@pytest.mark.parametrize(
    ("identifier", "expected"),
    [
        ("Input OpId_2 (cycles)", (2, "Input")),
        ("Output OpId_3", (3, "Output")),
        ("MatMul_0:OpId_25 (cycles)", (25, "MatMul_0")),
        (
            "/resnet/embedder/embedder/convolution/Conv_token_1_2:OpId_24 (cycles)",
            (24, "/resnet/embedder/embedder/convolution/Conv_token_1_2"),
        ),
        ("model.layers.0/attn:q:OpId_9", (9, "model.layers.0/attn:q")),
        ("x:OpId_5_copy:OpId_9 (cycles)", (9, "x:OpId_5_copy")),
        ("OpId_7", (7, "OpId_7")),
        ("  2: model_convStart_Conv2D:OpId_21 (cycles)", (21, "model_convStart_Conv2D")),
        ("fc (cycles)", (None, "fc")),
    ],
)
def test_op_identifiers_keep_odd_names_as_labels(identifier, expected):
    assert split_op_identifier(identifier) == expected


def test_bom_and_crlf_give_the_same_result():
    text = read("viewer_linting_multigraph.txt")

    windows = parse("\ufeff" + text.replace("\n", "\r\n"), "win.txt")

    assert windows.graphs == parse(text, "win.txt").graphs


def test_unknown_lines_are_counted_not_fatal():
    text = "Execute Stat 1\nthis is noise\nAccelerator (execute) time : 5  us\n@@@ : ???\n"

    profile = parse(text)

    assert profile.unknown_lines == 2
    assert profile.unknown_samples == ("line 2: this is noise", "line 4: @@@ : ???")
    assert profile.graphs[0].executes[0].metrics == (Metric("Accelerator (execute) time", 5, "us"),)


def test_cut_last_line_is_not_read_as_a_smaller_number():
    profile = parse("Execute Stat 1\nInput OpId_2 : 19874 cycles Wait(Scheduler) 42")

    assert profile.graphs[0].executes[0].ops == ()
    assert [w.code for w in profile.warnings] == ["cut_line"]


def test_unterminated_last_line_ending_in_a_unit_is_whole():
    profile = parse("Execute Stat 1\nQNN (execute) time : 2271 us")

    assert profile.graphs[0].executes[0].metrics == (Metric("QNN (execute) time", 2271, "us"),)
    assert profile.warnings == ()


@pytest.mark.parametrize("text", ["", "\n\n", "hello world\n", "{}"])
def test_nothing_usable_raises_its_own_error(text):
    with pytest.raises(QnnViewerTextError) as caught:
        parse(text, "board.txt")

    assert isinstance(caught.value, ProfilerParseError)
    assert str(caught.value).startswith("board.txt: no qnn-profile-viewer stats")
    assert caught.value.exit_code == 2


def test_underlined_average_section_with_graph_subheadings():
    # The 2.45 underlined style applied to the average section (not yet seen on a board).
    text = (
        "Execute Stats (Average):\n------------------------\n"
        "Total Inference Time:\n---------------------\n"
        "Graph 0 (model):\n"
        "    NetRun: 2952 us\n"
        "    Backend (Accelerator (execute) time): 2492 us\n\n"
        "Execute Stats (Overall):\n------------------------\n"
        "    NetRun IPS (includes IO and misc. time): 214.8888 inf/sec\n"
    )

    profile = parse(text)

    assert [(s.name, s.graph, s.metrics) for s in profile.sections] == [
        (
            "Execute Stats (Average)",
            "model",
            (
                Metric("NetRun", 2952, "us", source="NetRun"),
                Metric("Accelerator (execute) time", 2492, "us", source="Backend"),
            ),
        ),
        (
            "Execute Stats (Overall)",
            "",
            (
                Metric(
                    "NetRun IPS (includes IO and misc. time)",
                    214.8888,
                    "inf/sec",
                    source="NetRun",
                ),
            ),
        ),
    ]

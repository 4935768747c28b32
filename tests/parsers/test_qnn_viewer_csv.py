"""qnn-profile-viewer CSV, and the refusal of ONNX Runtime's look-alike."""

from __future__ import annotations

import pytest
from profiler_fixtures import read

from qtop.parsers.qnn_viewer_csv import OnnxRuntimeCsvError, QnnViewerCsvError, parse
from qtop.profiling.model import Metric, OpRow

VIEWER_HEADER = (
    "Msg Timestamp, Message, Time, Unit of Measurement, Timing Source, Event Level, "
    "Event Identifier"
)


def test_preamble_header_and_one_group_per_inference():
    profile = parse(read("viewer_detailed.csv"), "profile.csv")

    assert profile.info["qnn-profile-viewer"] == "v2.47.0.260601120000"
    assert profile.info["Time Scale"] == "1e-06"
    (graph,) = profile.graphs
    assert graph.name == "tiny_block_decode"
    assert [e.index for e in graph.executes] == [1, 2, 3]
    first = graph.executes[0]
    assert first.metrics == (
        Metric("Number of HVX threads used", 4, "count", source="BACKEND"),
        Metric("NetRun", 3301, "us", source="NETRUN"),
        Metric("QNN accelerator (execute) time", 1851, "us", source="BACKEND"),
        Metric("Accelerator (execute) time (cycles)", 149241, "cycles", source="BACKEND"),
        Metric("Accelerator (execute) time", 1500, "us", source="BACKEND"),
        Metric("Accelerator (execute excluding wait) time", 300, "us", source="BACKEND"),
        Metric("QNN (execute) time", 3278, "us", source="BACKEND"),
    )
    assert first.ops == (
        OpRow(name="_Transpose_3", op_id=119, cycles=13807),
        OpRow(name="_MatMul_3", op_id=120, cycles=7492),
        OpRow(name="_Softmax", op_id=127, cycles=6984),
        OpRow(name="/model/Concat_1,2", op_id=130, cycles=120958),
    )
    assert profile.unknown_lines == 0


def test_stage_rows_become_sections_and_compile_stages_are_skipped():
    profile = parse(read("viewer_detailed.csv"))

    sections = {(s.name, s.graph): s.metrics for s in profile.sections}
    assert sections[("Init Stats", "")] == (
        Metric("NetRun", 331158, "us", source="NETRUN"),
        Metric("RPC (load binary) time", 4922, "us", source="BACKEND"),
    )
    assert sections[("Finalize Stats", "tiny_block_decode")] == (
        Metric("NetRun", 256372, "us", source="NETRUN"),
    )
    assert sections[("Execute Stats (Overall)", "")] == (
        Metric("NetRun IPS", 302.9, "inf/sec", source="NETRUN"),
    )
    assert sections[("De-Init Stats", "")] == (Metric("NetRun", 15810, "us", source="NETRUN"),)


def test_tutorial_rows_without_timestamp_or_header_split_on_repeat():
    profile = parse(read("viewer_tutorial_rows.csv"))

    (graph,) = profile.graphs
    assert graph.name == "tiny_block_decode"
    first, second = graph.executes
    assert [m.value for m in first.metrics] == [3301, 1851, 149241, 3278]
    assert [(op.key, op.cycles) for op in first.ops] == [
        ("OpId_119", 13807),
        ("OpId_120", 7492),
        ("OpId_127", 6984),
    ]
    assert [m.value for m in second.metrics] == [3012, 1702, 130000, 2990]
    assert [op.cycles for op in second.ops] == [12000, 7000, 9000]


def test_onnxruntime_csv_is_refused_by_its_header():
    with pytest.raises(OnnxRuntimeCsvError) as caught:
        parse(read("onnxruntime_qnn_ep.csv"), "qnn-profiling-data.csv")

    message = str(caught.value)
    assert message.startswith("qnn-profiling-data.csv:1: this is ONNX Runtime's QNN EP")
    assert "no space after the commas" in message
    assert "qnn-profile-viewer --input_log" in message
    assert caught.value.exit_code == 2


@pytest.mark.parametrize(
    ("text", "reason", "line"),
    [
        (
            VIEWER_HEADER + ", ONNX Source Ops\n0, EXECUTE, 3100, US, BACKEND, ROOT, x, y\n",
            "'ONNX Source Ops' column",
            1,
        ),
        (
            VIEWER_HEADER + "\nUNKNOWN, EXECUTE, 3100, US, BACKEND, ROOT, QNN (execute) time\n",
            "Msg Timestamp is UNKNOWN",
            2,
        ),
        ("0, NODE, 6000, CYCLES, BACKEND, SUB-EVENT, MatMul:OpId_5\n", "Message is NODE", 1),
    ],
)
def test_onnxruntime_csv_is_refused_by_any_sign(text, reason, line):
    with pytest.raises(OnnxRuntimeCsvError) as caught:
        parse(text, "x.csv")

    assert reason in str(caught.value)
    assert caught.value.line == line


def test_bom_and_crlf_give_the_same_result():
    text = read("viewer_detailed.csv")

    assert parse("\ufeff" + text.replace("\n", "\r\n")).graphs == parse(text).graphs


def test_cut_last_row_is_dropped_with_a_warning():
    text = VIEWER_HEADER + "\n0, EXECUTE, 1500, US, BACKEND, ROOT, Accelerator (execute) time\n"
    cut = text + "0, EXECUTE, 29, US, BACKEND, ROOT, Accelerator (execute excl"

    profile = parse(cut)

    assert profile.graphs[0].executes[0].metrics == (
        Metric("Accelerator (execute) time", 1500, "us", source="BACKEND"),
    )
    assert [w.code for w in profile.warnings] == ["cut_line"]


def test_rows_without_meaning_raise_its_own_error():
    with pytest.raises(QnnViewerCsvError, match="no qnn-profile-viewer CSV rows"):
        parse(VIEWER_HEADER + "\nfoo, bar\n", "x.csv")

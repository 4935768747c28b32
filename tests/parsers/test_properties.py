"""Properties: broken input raises only the parser's own error; a cut file keeps what is whole."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from profiler_fixtures import KIND_OF, read

from qtop.parsers import (
    UnknownProfilerKind,
    ai_hub,
    detect_kind,
    genie,
    optrace,
    parse,
    qnn_viewer_csv,
    qnn_viewer_json,
    qnn_viewer_text,
)
from qtop.parsers.common import ProfilerParseError
from qtop.profiling.aggregate import breakdown
from qtop.profiling.model import Metric, OpRow, ParsedProfile
from qtop.profiling.render import render

PARSERS: list[tuple[Callable[[str, str], ParsedProfile], type[ProfilerParseError]]] = [
    (qnn_viewer_text.parse, qnn_viewer_text.QnnViewerTextError),
    (qnn_viewer_csv.parse, qnn_viewer_csv.QnnViewerCsvError),
    (qnn_viewer_json.parse, qnn_viewer_json.QnnViewerJsonError),
    (optrace.parse_chrometrace, optrace.OptraceError),
    (optrace.parse_runtrace, optrace.OptraceError),
    (optrace.parse_qhas, optrace.OptraceError),
    (genie.parse_profile, genie.GenieError),
    (genie.parse_stdout, genie.GenieError),
    (ai_hub.parse, ai_hub.AiHubError),
]
FIXTURE_TEXTS = [read(name) for name in sorted(KIND_OF)]
JSON_KEYS = [
    "traceEvents", "messages", "profilingEvents", "identifier", "value", "unit", "sub-events",
    "type", "ph", "args", "QNN Op Name", "ID", "dur", "ts", "name", "tid", "pid", "components",
    "events", "GenieDialog_query", "execution_summary", "execution_detail", "all_inference_times",
    "data", "htp_overall_summary", "htp_op_instances", "qnn_op_instances_nodes", "qnn_op",
    "cycles", "op_id", "header", "artifact_type", "metadata", "method", "compute_unit",
    "execution_time", "execution_cycles", "summary_time_us", "graph_name", "Flags",
    "Duration (cycles)", "htp_resources", "model_id", "time-to-first-token",
]  # fmt: skip
PROPERTY_SETTINGS = settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**400), max_value=10**400)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.sampled_from(["X", "M", "NODE", "us", "CYCLES", "Input OpId_2", "0x10", "GenieDialog_q"])
    | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.sampled_from(JSON_KEYS) | st.text(max_size=6), children, max_size=5)
    ),
    max_leaves=25,
)


@st.composite
def damaged_fixtures(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(FIXTURE_TEXTS))
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        start = draw(st.integers(min_value=0, max_value=len(text)))
        end = draw(st.integers(min_value=start, max_value=min(len(text), start + 40)))
        action = draw(st.sampled_from(["cut", "delete", "insert", "replace"]))
        noise = draw(st.text(max_size=12))
        if action == "cut":
            text = text[:start]
        elif action == "delete":
            text = text[:start] + text[end:]
        elif action == "insert":
            text = text[:start] + noise + text[start:]
        else:
            text = text[:start] + noise + text[end:]
    return text


hostile_text = st.one_of(
    st.text(max_size=300),
    damaged_fixtures(),
    json_values.map(json.dumps),
    st.lists(st.sampled_from([*FIXTURE_TEXTS[0].splitlines(), "Execute Stat 9", "---"])).map(
        "\n".join
    ),
)


def _check_usable(profile: ParsedProfile) -> None:
    data = profile.to_dict()
    assert ParsedProfile.from_dict(json.loads(json.dumps(data, allow_nan=False))) == profile
    result = breakdown(profile)
    json.dumps(result.to_dict(), allow_nan=False)
    render(profile, result)


@pytest.mark.parametrize(("parser", "error"), PARSERS, ids=lambda p: getattr(p, "__qualname__", ""))
@PROPERTY_SETTINGS
@given(text=hostile_text)
def test_broken_input_raises_only_the_parsers_own_error(parser, error, text):
    try:
        profile = parser(text, "fuzz")
    except error as exc:
        assert str(exc).startswith("fuzz")
        return
    _check_usable(profile)


@PROPERTY_SETTINGS
@given(text=hostile_text)
def test_detection_raises_only_its_own_error(text):
    try:
        kind = detect_kind(text, "fuzz")
    except UnknownProfilerKind:
        return
    with contextlib.suppress(ProfilerParseError):
        _check_usable(parse(kind, text, "fuzz"))


def _prefix_of(cut: tuple[Metric, ...], full: tuple[Metric, ...]) -> bool:
    return cut == full[: len(cut)]


def _op_consistent(cut: OpRow, full: OpRow, summed: bool) -> None:
    """Every figure in the cut op is the full file's, or absent (or, for sums, not larger)."""
    assert cut.name == full.name
    assert cut.op_id in (None, full.op_id)
    for field in (
        "cycles",
        "wait_cycles",
        "overlap_cycles",
        "overlap_wait_cycles",
        "dominant_path_cycles",
        "time_us",
        "instances",
    ):
        part, whole = getattr(cut, field), getattr(full, field)
        if part is None:
            continue
        if summed:
            assert whole is not None and part <= whole, field
        else:
            assert part == whole, field
    for field in ("resources", "flags", "thread_types", "overlap_ops", "overlap_wait_ops"):
        part, whole = getattr(cut, field), getattr(full, field)
        assert set(part) <= set(whole), field


def _assert_cut_consistent(cut: ParsedProfile, full: ParsedProfile, summed: bool) -> None:
    full_graphs = {graph.name: graph for graph in full.graphs}
    for graph in cut.graphs:
        whole = full_graphs[graph.name]
        assert len(graph.executes) <= len(whole.executes)
        for part_ex, whole_ex in zip(graph.executes, whole.executes, strict=False):
            assert part_ex.index == whole_ex.index
            if not summed:
                assert _prefix_of(part_ex.metrics, whole_ex.metrics)
            whole_ops = {op.key: op for op in whole_ex.ops}
            by_name = {op.name: op for op in whole_ex.ops}
            for op in part_ex.ops:
                # An op id is a figure like any other: the cut may not have reached it yet.
                whole_op = whole_ops[op.key] if op.op_id is not None else by_name[op.name]
                _op_consistent(op, whole_op, summed)
    full_sections = {(s.name, s.graph): s.metrics for s in full.sections}
    for section in cut.sections:
        whole_metrics = full_sections[(section.name, section.graph)]
        assert set(section.metrics) <= set(whole_metrics)
    for part_q, whole_q in zip(cut.queries, full.queries, strict=False):
        given_metrics = {m.name: m.value for m in whole_q.metrics if not m.note}
        for metric in part_q.metrics:
            if not metric.note:
                assert given_metrics[metric.name] == metric.value
    if cut.ai_hub is not None and full.ai_hub is not None:
        times = cut.ai_hub.inference_times_us
        assert times == full.ai_hub.inference_times_us[: len(times)]


SUMMED_KINDS = {"optrace", "qhas"}


@pytest.mark.parametrize(("name", "kind"), sorted(KIND_OF.items()))
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_a_file_cut_anywhere_parses_what_is_complete(name, kind, data):
    text = read(name)
    full = parse(kind, text, name)
    at = data.draw(st.integers(min_value=0, max_value=len(text)))
    try:
        cut = parse(kind, text[:at], name)
    except ProfilerParseError:
        return
    _assert_cut_consistent(cut, full, summed=kind in SUMMED_KINDS)
    _check_usable(cut)


@pytest.mark.parametrize(("name", "kind"), sorted(KIND_OF.items()))
def test_a_file_cut_at_each_line_end_keeps_every_complete_execute(name, kind):
    text = read(name)
    full = parse(kind, text, name)
    ends = [i + 1 for i, char in enumerate(text) if char == "\n"]
    for at in ends:
        try:
            cut = parse(kind, text[:at], name)
        except ProfilerParseError:
            continue
        _assert_cut_consistent(cut, full, summed=kind in SUMMED_KINDS)
    assert parse(kind, text[: ends[-1]], name) == full

"""Hostile files built from the real fixtures: every entry point reads them or refuses cleanly.

The strategies reach the classes a capped generator cannot: integers past 64
bits and past a float (10**170, 10**400, 5,000 digits), denormals and NaN /
Infinity tokens, lists and objects where ids and tids belong, nesting
thousands deep, cut files, duplicated blocks and invalid UTF-8. Each example
goes through the same targets as the long run (bench/fuzz_parsers.py, which
runs these entry points a million times each): a parser and everything that
reads its result, ``qtop ops``, and the live profiler hooks.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import math
from typing import Any

import pytest
from fuzz_support import (
    BAD_BYTES,
    HOSTILE_JSON,
    HOSTILE_LINES,
    HOSTILE_NUMBERS,
    TARGETS,
    _nodes,
    dump_with_raw,
    seeds,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from qtop.live.profiler_timing import deinit_s, inference_latencies
from qtop.parsers import ProfilerParseError, qnn_viewer_text
from qtop.profiling.model import ParsedProfile

# Values the parsers hash, compute with or show: where a hostile value hurts most.
IDENTITY_KEYS = frozenset(
    {"tid", "pid", "ID", "name", "ph", "ts", "dur", "args", "value", "unit", "identifier",
     "type", "QNN Op Name", "Duration (cycles)", "Dominant Path Cycles", "Flags", "op_id",
     "cycles", "qnn_op", "execution_time", "execution_cycles", "all_inference_times",
     "summary_time_us", "graph_name", "sub-events", "profilingEvents", "traceEvents"}
)  # fmt: skip
JSON_KINDS = ("qnn-viewer-json", "optrace", "runtrace", "qhas", "genie-profile", "ai-hub")
TEXT_KINDS = ("qnn-viewer-text", "qnn-viewer-csv", "genie-stdout")
FUZZ = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _float_token(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return repr(value)


# Raw number tokens, beyond what json.dumps would write.
number_tokens = st.one_of(
    st.sampled_from(HOSTILE_NUMBERS),
    st.integers(min_value=2**64, max_value=10**400).map(str),
    st.integers(min_value=-(10**400), max_value=-(10**309)).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(_float_token),
    st.floats(min_value=-1e-300, max_value=1e-300).map(_float_token),
)
unhashable = st.recursive(
    st.lists(st.none() | st.integers() | st.text(max_size=4), max_size=3)
    | st.dictionaries(st.text(max_size=4), st.none() | st.integers(), max_size=3),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=4), children, max_size=3)
    ),
    max_leaves=8,
)
nesting = st.integers(min_value=1, max_value=3000).flatmap(
    lambda depth: st.sampled_from(["[" * depth + "]" * depth, '{"a":' * depth + "1" + "}" * depth])
)
# A replacement: ("raw", token) goes into the text as it is; ("json", value) is encoded.
replacements = st.one_of(
    number_tokens.map(lambda token: ("raw", token)),
    nesting.map(lambda token: ("raw", token)),
    unhashable.map(lambda value: ("json", value)),
    # A copy: _replace writes into the document, and a later replacement may land
    # inside this value; the shared constant must stay as it is for the next example.
    st.sampled_from(HOSTILE_JSON).map(lambda value: ("json", copy.deepcopy(value))),
)


def _replace(document: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    parent = document
    for step in path[:-1]:
        parent = parent[step]
    parent[path[-1]] = new
    return document


@st.composite
def hostile_json(draw: st.DrawFn, kinds: tuple[str, ...] = JSON_KINDS) -> bytes:
    """A JSON fixture with one to three values replaced, maybe cut."""
    kind = draw(st.sampled_from(kinds))
    document = json.loads(draw(st.sampled_from(seeds(kind))))
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        paths = _nodes(document)
        keyed = [path for path in paths if path and path[-1] in IDENTITY_KEYS]
        if keyed and draw(st.booleans()):
            paths = keyed  # half the time, a value code uses as a key, a number or a name
        path = paths[draw(st.integers(min_value=0, max_value=len(paths) - 1))]
        how, value = draw(replacements)
        document = _replace(document, path, f"\ue000{value}\ue000" if how == "raw" else value)
    data = dump_with_raw(document).encode("utf-8")
    if draw(st.booleans()):
        data = data[: draw(st.integers(min_value=0, max_value=len(data)))]
    return data


@st.composite
def hostile_text(draw: st.DrawFn, kinds: tuple[str, ...] = TEXT_KINDS) -> bytes:
    """A text fixture with numbers replaced, lines duplicated and inserted, maybe cut."""
    kind = draw(st.sampled_from(kinds))
    lines = draw(st.sampled_from(seeds(kind))).decode("utf-8").split("\n")
    for _ in range(draw(st.integers(min_value=0, max_value=3))):
        at = draw(st.integers(min_value=0, max_value=len(lines) - 1))
        words = lines[at].split(" ")
        numeric = [i for i, word in enumerate(words) if any(c.isdigit() for c in word)]
        if numeric:
            words[draw(st.sampled_from(numeric))] = draw(number_tokens)
            lines[at] = " ".join(words)
    if draw(st.booleans()):
        start = draw(st.integers(min_value=0, max_value=len(lines) - 1))
        block = lines[start : start + draw(st.integers(min_value=1, max_value=8))]
        lines[start:start] = block * draw(st.integers(min_value=1, max_value=200))
    for _ in range(draw(st.integers(min_value=0, max_value=2))):
        line = draw(st.sampled_from(HOSTILE_LINES)).replace("{n}", draw(number_tokens))
        lines.insert(draw(st.integers(min_value=0, max_value=len(lines))), line)
    data = "\n".join(lines).encode("utf-8")
    if draw(st.booleans()):
        at = draw(st.integers(min_value=0, max_value=len(data)))
        data = data[:at] + draw(st.sampled_from(BAD_BYTES)) + data[at:]
    if draw(st.booleans()):
        data = data[: draw(st.integers(min_value=0, max_value=len(data)))]
    return data


@pytest.mark.parametrize("kind", JSON_KINDS)
@FUZZ
@given(data=st.data())
def test_json_parsers_read_or_refuse_hostile_json(kind, data):
    TARGETS[f"parser:{kind}"](data.draw(hostile_json((kind,))))


@pytest.mark.parametrize("kind", TEXT_KINDS)
@FUZZ
@given(data=st.data())
def test_text_parsers_read_or_refuse_hostile_text(kind, data):
    TARGETS[f"parser:{kind}"](data.draw(hostile_text((kind,))))


@FUZZ
@given(data=st.one_of(hostile_json(), hostile_text()))
def test_qtop_ops_reads_or_refuses_any_hostile_file(data):
    TARGETS["ops"](data)


@FUZZ
@given(data=hostile_text(("qnn-viewer-text",)))
def test_the_execute_stats_hook_survives_hostile_viewer_text(data):
    TARGETS["hook:execute_stats"](data)


@FUZZ
@given(data=hostile_json(("genie-profile",)))
def test_the_genie_hook_survives_a_hostile_profile(data):
    TARGETS["hook:genie"](data)


@FUZZ
@given(data=st.one_of(hostile_json(), hostile_text()))
def test_the_report_hook_survives_any_hostile_file(data):
    TARGETS["hook:file"](data)


def _without_ops(profile: ParsedProfile) -> ParsedProfile:
    graphs = tuple(
        dataclasses.replace(
            graph, executes=tuple(dataclasses.replace(ex, ops=()) for ex in graph.executes)
        )
        for graph in profile.graphs
    )
    return dataclasses.replace(profile, graphs=graphs, unknown_lines=0, unknown_samples=())


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=hostile_text(("qnn-viewer-text",)))
def test_the_live_timing_parse_equals_the_full_parse_on_any_text(data):
    text = data.decode("utf-8", errors="replace")
    try:
        full = qnn_viewer_text.parse(text, "log")
    except ProfilerParseError:
        with pytest.raises(ProfilerParseError):
            qnn_viewer_text.parse(text, "log", ops=False)
        return

    timing = qnn_viewer_text.parse(text, "log", ops=False)

    assert _without_ops(timing) == _without_ops(full)
    assert inference_latencies([timing]) == inference_latencies([full])
    assert deinit_s([timing]) == deinit_s([full])

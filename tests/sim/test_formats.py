"""The simulated viewer's renders: golden files, and the shapes formats.md documents.

Regenerate the golden files after a deliberate change with
``QTOP_UPDATE_GOLDEN=1 .venv/bin/pytest tests/sim/test_formats.py``.
"""

from __future__ import annotations

import csv
import json
import os
import re
import time
from pathlib import Path

import pytest

from qtop.sim.config import LatencyConfig
from qtop.sim.tools.executes import execute_stat
from qtop.sim.tools.models import CONV_RELU, QWEN_DECODE, GraphSpec
from qtop.sim.tools.profiling_log import ProfilingLog, StageStat, decode, encode
from qtop.sim.tools.render_files import render_csv, render_json, render_optrace
from qtop.sim.tools.render_text import render_text

GOLDEN = Path(__file__).parent / "golden"
LATENCY = LatencyConfig(distribution="fixed", warmup_extra_us=(), sigma=0.0)


class _NoJitter:
    def gauss(self, mu: float, sigma: float) -> float:
        return mu


def make_log(graph: GraphSpec, level: str, optrace: bool = False, states=(0, 0, 3)) -> ProfilingLog:
    executes = tuple(
        execute_stat(
            graph,
            0,
            round(graph.median_us * (1 + 0.08 * s)),
            s,
            1 + 0.08 * s,
            LATENCY,
            _NoJitter(),
            i,
        )
        for i, s in enumerate(states)
    )
    return ProfilingLog(
        created_epoch_us=1777307899187320,
        steady_clock_us=865951363683,
        level=level,
        optrace=optrace,
        graphs=(graph.name,),
        init=StageStat(17795, 8480, 8313, 8032, 17769),
        deinit=StageStat(2577, 922, 851, 770, 2551),
        executes=executes,
        ips=214.8888,
        extra={"htp_ops": {graph.name: [op.htp_op for op in graph.ops]}},
    )


@pytest.fixture(autouse=True)
def utc(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()


def check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("QTOP_UPDATE_GOLDEN"):
        path.write_text(text)
    assert text == path.read_text(), f"{name} differs from its golden file"


RENDERS = {
    "basic.txt": lambda: render_text(
        make_log(QWEN_DECODE, "basic"), "out/qnn-profiling-data_0.log", linting_reader=False
    ),
    "detailed.txt": lambda: render_text(
        make_log(CONV_RELU, "detailed"), "out/qnn-profiling-data_0.log", linting_reader=False
    ),
    "linting.txt": lambda: render_text(
        make_log(QWEN_DECODE, "linting"),
        "qnn-profiling-data-qwen_decode_0.log",
        linting_reader=True,
    ),
    "profile.csv": lambda: render_csv(make_log(CONV_RELU, "detailed"), "qnn-profiling-data_0.log"),
    "standardized.json": lambda: render_json(make_log(CONV_RELU, "detailed")),
    "optrace_chrometrace.json": lambda: render_optrace(
        make_log(CONV_RELU, "detailed", optrace=True), [op.htp_op for op in CONV_RELU.ops]
    ),
}


@pytest.mark.parametrize("name", sorted(RENDERS))
def test_renders_match_their_golden_files(name: str) -> None:
    check_golden(name, RENDERS[name]())


def test_the_log_round_trips_through_its_binary_form() -> None:
    log = make_log(QWEN_DECODE, "linting")
    data = encode(log)
    assert data[:10] == b"QNNSIMPROF" and b"NetRun" not in data
    assert decode(data) == log


PREAMBLE = [
    r"^Input Log File Location: \S+$",
    r"^Log File Created: \w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d \d{4}$",
    r"^Time Scale: 1e-06$",
    r"^Epoch Timestamp: \d+ Steady Clock Timestamp: \d+$",
    r"^Generated using: $",
    r"^qnn-profile-viewer: v\d+\.\d+\.\d+\.\d+$",
    r"^qnn-net-run: v\d+\.\d+\.\d+\.\d+$",
    r"^Backend: v\d+\.\d+\.\d+\.\d+$",
]
BASIC_LINE = re.compile(
    r"^    (NetRun|Backend)( \(.+\))?( IPS \(.+\))?: \d+(\.\d+)? (us|count|inf/sec)$"
)
ROOT_LINE = re.compile(r"^(.*?) : (\d+)  (us|cycles|count)$")
OP_LINE = re.compile(r"^    (.+\(cycles\)) : (\d+)  cycles$")
MICROSOFT_OP = re.compile(r"(.+?)(?:\s+|:)OpId_(\d+)\s*\(cycles\)")
LINT_SUB = re.compile(
    r"^        (Wait \(Scheduler\) time|Overlap time|Overlap \(wait\) time) : (\d+)  cycles$"
)
RESOURCES = re.compile(r"^        Resources :\s*(.*)$")


def test_text_renders_have_the_documented_line_shapes() -> None:
    for name in ("basic.txt", "detailed.txt", "linting.txt"):
        lines = RENDERS[name]().splitlines()
        for pattern, line in zip(PREAMBLE, lines, strict=False):
            assert re.match(pattern, line), (name, line)
        basic_end = (
            lines.index("Printing All Data Received From Back End")
            if ("Printing All Data Received From Back End" in lines)
            else len(lines)
        )
        for line in lines[len(PREAMBLE) : basic_end]:
            if line.startswith("    "):
                assert BASIC_LINE.match(line), (name, line)
        for line in lines[basic_end + 1 :]:
            if not line or line.startswith(("Execute Stat", "Create From Binary", "Unknown event")):
                continue
            if line.startswith("            "):
                continue  # names of the ops that overlapped (linting)
            if line.startswith("        "):
                assert LINT_SUB.match(line) or RESOURCES.match(line), (name, line)
            elif line.startswith("    "):
                assert OP_LINE.match(line) and MICROSOFT_OP.search(line), (name, line)
            else:
                assert ROOT_LINE.match(line), (name, line)


def test_the_linting_render_matches_the_seed_shape() -> None:
    text = RENDERS["linting.txt"]()
    assert "Execute Stat 1 (graph token_ar1_cl4096_1_of_6)\n" in text
    # seed 000, first execute: the cool decode graph
    assert (
        "    /Gather:OpId_21 (cycles) : 7411  cycles\n        Wait (Scheduler) time : 420" in text
    )
    assert "Accelerator (critical path execute) time (cycles) : 12875  cycles\n" in text
    assert "Accelerator (execute) time : 1385  us\n" in text
    assert "QNN (execute) time : 2268  us\n" in text


def test_a_heated_execute_waits_longer() -> None:
    cool, _, heated = make_log(QWEN_DECODE, "linting").executes
    cool_wait = next(op.wait_cycles for op in cool.ops if op.name == "/Gather:OpId_21")
    hot_wait = next(op.wait_cycles for op in heated.ops if op.name == "/Gather:OpId_21")
    assert (cool_wait, hot_wait) == (420, round(420 * 1.45))
    assert heated.accel_excl_wait_us / heated.accel_us < cool.accel_excl_wait_us / cool.accel_us


def test_the_csv_has_a_preamble_a_spaced_header_and_one_group_per_execute() -> None:
    text = RENDERS["profile.csv"]()
    lines = text.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("Msg Timestamp,"))
    assert header > 0
    assert lines[header] == (
        "Msg Timestamp, Message, Time, Unit of Measurement, Timing Source, "
        "Event Level, Event Identifier"
    )
    rows = list(csv.DictReader(lines[header:]))
    assert {len(row) for row in rows} == {7}
    assert {row[" Message"] for row in rows} == {
        "INIT",
        "COMPOSE GRAPHS",
        "EXECUTE",
        "DE-INIT",
        "EXECUTE IPS",
    }
    assert {row[" Unit of Measurement"] for row in rows} <= {"US", "CYCLES", "COUNT", "INF/SEC"}
    starts = [r for r in rows if r[" Event Identifier"] == "Number of HVX threads used"]
    graphs = [r for r in rows if r[" Event Identifier"].startswith("Graph ")]
    assert len(starts) == len(graphs) == 3
    assert graphs[0][" Event Identifier"] == "Graph 0: convReluModel"
    ops = [r for r in rows if r[" Event Level"] == "SUB-EVENT"]
    assert len(ops) == 3 * len(CONV_RELU.ops)
    assert all(r[" Event Identifier"].endswith(" (cycles)") for r in ops)


def test_the_standardized_json_has_messages_events_and_sub_events() -> None:
    document = json.loads(RENDERS["standardized.json"]())
    assert document["metadata"] == {"appName": "qnn-net-run", "appVersion": "v2.45.0.260326154327"}
    methods = [m["method"] for m in document["messages"]]
    assert methods == ["BACKEND_CREATE_FROM_BINARY"] + ["BACKEND_EXECUTE"] * 3 + ["BACKEND_DEINIT"]
    execute = document["messages"][1]["profilingEvents"]
    assert {e["unit"] for e in execute} <= {"MICROSEC", "CYCLES", "COUNT"}
    cycles = next(e for e in execute if e["identifier"] == "Accelerator (execute) time (cycles)")
    assert [s["identifier"] for s in cycles["sub-events"]] == [op.name for op in CONV_RELU.ops]
    assert {s["type"] for s in cycles["sub-events"]} == {"NODE"}


def test_the_optrace_trace_duplicates_events_and_names_every_thread() -> None:
    trace = json.loads(RENDERS["optrace_chrometrace.json"]())
    assert trace["header"]["artifact_type"] == "OP_TRACE"
    events = trace["traceEvents"]
    ops = [e for e in events if e["ph"] == "X" and e["name"].startswith("q::")]
    unique = {(e["args"]["ID"], e["tid"], e["ts"], e["dur"]) for e in ops}
    assert len(ops) == 2 * len(unique) == 2 * 3 * len(CONV_RELU.ops)
    named = {(e["pid"], e["tid"]) for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    assert {(e["pid"], e["tid"]) for e in ops} <= named
    counters = [e for e in events if e["ph"] == "C"]
    assert counters and all(list(e["args"]) == [""] for e in counters)
    assert {"dma_wait"} == set(
        next(e for e in ops if e["name"] == "q::*OutputSlice")["args"]["Flags"]
    )


def test_golden_files_are_not_stale() -> None:
    assert sorted(p.name for p in GOLDEN.iterdir()) == sorted(RENDERS)

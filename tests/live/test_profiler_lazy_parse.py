"""The live hook reads each process's timing only; what it reports equals the full parse's."""

import dataclasses

import pytest

from qtop.events import Iteration, Log, ProfileReport
from qtop.live import profiler_hook_base
from qtop.live.profiler_hooks import ExecuteStatsHook
from qtop.live.profiler_timing import deinit_s, inference_latencies, place_back_to_back
from qtop.parsers import qnn_viewer_text
from qtop.profiles import load_profile_text
from qtop.profiling.model import ParsedProfile

from .fake_device import FakeDevice, golden, ok, process

RENDERS = ("linting.txt", "detailed.txt", "basic.txt")


def hook(run: str = "warmup: 1, iterations: 30") -> ExecuteStatsHook:
    return ExecuteStatsHook(
        load_profile_text(
            "name: lazy\nrun: {command: x, "
            f"{run}, latency_source: execute_stats, profiler: {{kind: qnn_log, path: /out}}}}\n",
            "lazy.yaml",
        )
    )


def without_ops(profile: ParsedProfile) -> ParsedProfile:
    graphs = tuple(
        dataclasses.replace(
            graph,
            executes=tuple(dataclasses.replace(ex, ops=()) for ex in graph.executes),
        )
        for graph in profile.graphs
    )
    return dataclasses.replace(profile, graphs=graphs, unknown_lines=0, unknown_samples=())


@pytest.mark.parametrize("name", RENDERS)
def test_the_timing_parse_is_the_full_parse_without_its_ops(name):
    text = golden(name)

    timing = qnn_viewer_text.parse(text, "log", ops=False)
    full = qnn_viewer_text.parse(text, "log")

    assert without_ops(timing) == without_ops(full)
    assert all(not ex.ops for graph in timing.graphs for ex in graph.executes)
    assert inference_latencies([timing]) == inference_latencies([full])
    assert deinit_s([timing]) == deinit_s([full])


async def test_iterations_and_reports_are_those_of_the_full_parse(monkeypatch):
    full_parses = []
    parse = qnn_viewer_text.parse

    def counting(text: str, source: str = "", ops: bool = True) -> ParsedProfile:
        if ops:
            full_parses.append(source)
        return parse(text, source, ops)

    monkeypatch.setattr(qnn_viewer_text, "parse", counting)
    text = golden("linting.txt")
    full = parse(text, "/out/qnn-profiling-data_0.log")
    expected, _ = inference_latencies([full])
    live = hook()
    device = FakeDevice(viewer=lambda script: ok(text))

    results = [
        await live(process(n, 100.0 + n, 101.0 + n), device) for n in range(5)
    ]  # reports: the first process, then one per 30 s of device time

    for number, result in enumerate(results):
        iterations = [event for event in result.events if isinstance(event, Iteration)]
        assert [i.latency_s for i in iterations] == expected
        spans = place_back_to_back(expected, 100.0 + number, 101.0 + number, deinit_s([full]))
        assert [(i.start, i.end) for i in iterations] == spans
    reports = [e for r in results for e in r.events if isinstance(e, ProfileReport)]
    assert [report.report for report in reports] == [full.to_dict()]
    assert full_parses == ["/out/qnn-profiling-data_0.log"]  # only for the report


async def test_a_render_too_big_to_parse_is_a_warning_and_a_failed_iteration(monkeypatch):
    monkeypatch.setattr(profiler_hook_base, "MAX_PROFILE_CHARS", 1000)
    device = FakeDevice(viewer=lambda script: ok(golden("linting.txt")))

    result = await hook()(process(0, 100.0, 101.0), device)

    (log,) = [event for event in result.events if isinstance(event, Log)]
    assert "more than the 0.001 MB qtop parses; it was not read" in log.text
    (iteration,) = [event for event in result.events if isinstance(event, Iteration)]
    assert iteration.exit_status == -1
    assert "could not be parsed" in (iteration.error or "")

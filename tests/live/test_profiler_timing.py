"""Inferences from executes, their place in time, and how a process ended, in words."""

import itertools

from hypothesis import given
from hypothesis import strategies as st

from qtop.live.profiler_timing import (
    deinit_s,
    describe_exit,
    inference_latencies,
    place_back_to_back,
    process_status,
)
from qtop.live.translate import ProcessExit
from qtop.profiling.model import Execute, Graph, Metric, ParsedProfile, Section


def log(*graphs: tuple[str, list[int]], deinit_us: int | None = None) -> ParsedProfile:
    """A parsed log whose graphs ran these QNN (execute) times (µs), numbered in turn."""
    built, number = [], 1
    for name, times in graphs:
        executes = []
        for time_us in times:
            executes.append(Execute(number, (Metric("QNN (execute) time", time_us, "us"),)))
            number += 1
        built.append(Graph(name, tuple(executes)))
    sections = ()
    if deinit_us is not None:
        sections = (Section("De-Init Stats", "", (Metric("NetRun", deinit_us, "us"),)),)
    return ParsedProfile(kind="qnn-viewer-text", graphs=tuple(built), sections=sections)


def exit_with(status=0, timed_out=False):
    return ProcessExit("/r", 3, "measure", "", 1, 0, 10.0, 11.0, 1.0, status, timed_out, ())


def test_one_graph_gives_one_inference_per_execute():
    assert inference_latencies([log(("g", [2000, 2500]))]) == ([0.002, 0.0025], "")


def test_split_graphs_add_up_per_inference_across_logs():
    latencies, note = inference_latencies([log(("a", [1000, 1100])), log(("b", [300, 400]))])
    assert latencies == [0.0013, 0.0015] and note == ""


def test_graphs_that_cannot_be_paired_count_each_execute_and_say_so():
    latencies, note = inference_latencies([log(("a", [1000, 1100]), ("b", [300]))])
    assert latencies == [0.001, 0.0011, 0.0003]
    assert note == (
        "the graphs ran different numbers of executes (a (2), b (1)), so they cannot be paired "
        "into inferences: each execute counts as one iteration"
    )


def test_no_executes_no_inferences():
    assert inference_latencies([]) == ([], "")


def test_executes_end_where_the_de_init_begins():
    assert deinit_s([log(("g", [1]), deinit_us=2600)]) == 0.0026
    spans = place_back_to_back([0.25, 0.25], 10.0, 11.0, 0.5)
    assert spans == [(10.0, 10.25), (10.25, 10.5)]


def test_latencies_longer_than_the_process_start_with_it_and_stop_at_its_end():
    assert place_back_to_back([0.75, 0.75], 10.0, 11.0) == [(10.0, 10.75), (10.75, 11.0)]


@given(
    st.lists(st.floats(0, 5, allow_nan=False), max_size=30),
    st.floats(0, 1e6, allow_nan=False),
    st.floats(0, 100, allow_nan=False),
    st.floats(0, 10, allow_nan=False),
)
def test_spans_stay_inside_the_process_and_in_order(latencies, start, length, tail):
    end = start + length
    spans = place_back_to_back(latencies, start, end, tail)
    assert len(spans) == len(latencies)
    for (first, last), (next_first, _) in itertools.pairwise(spans):
        assert start <= first <= last <= end and last <= next_first
    for first, last in spans:
        assert start <= first <= last <= end


def test_how_a_process_ended():
    assert describe_exit(exit_with(), None) == "exited cleanly (status 0)"
    assert describe_exit(exit_with(1), None) == "exited with status 1"
    assert describe_exit(exit_with(137), None) == "was killed by SIGKILL (exit status 137)"
    assert describe_exit(exit_with(0, True), 5.0) == (
        "timed out after 5 s and was stopped (SIGINT, then SIGTERM, then SIGKILL)"
    )
    assert describe_exit(exit_with(130, True), None).endswith(", exit status 130")


def test_a_timed_out_process_that_exited_cleanly_still_fails():
    assert process_status(exit_with(0, True)) == 124
    assert process_status(exit_with(0)) == 0
    assert process_status(exit_with(2, True)) == 2

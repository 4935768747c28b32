"""The profiler hooks against a fake device: numbering, throttling, failures explained."""

import itertools
import json

import pytest

from qtop.events import Iteration, Log, ProfileReport
from qtop.live.profiler_hooks import ExecuteStatsHook, GenieHook, ReportHook, profiler_hook_for
from qtop.profiles import load_profile_text
from qtop.transport.base import LinkDown

from .fake_device import FakeDevice, failed, golden, ok, process

# The linting golden render: three executes of QNN (execute) 2268, 2268 and 2813 µs.
GOLDEN_US = [2268, 2268, 2813]
GENIE = {
    "header": {"artifact_type": "GENIE_PROFILE"},
    "components": [{"name": "dialog0", "type": "dialog", "events": [
        {"type": "GenieDialog_query", "duration": 560000, "start": 5, "stop": 560005,
         "num-prompt-tokens": {"value": 8, "unit": ""},
         "prompt-processing-rate": {"value": 48.05, "unit": "toks/sec"},
         "time-to-first-token": {"value": 166485, "unit": "us"},
         "num-generated-tokens": {"value": 8, "unit": ""},
         "token-generation-rate": {"value": 20.62, "unit": "toks/sec"},
         "token-generation-time": {"value": 388000, "unit": "us"}},
        {"type": "GenieDialog_free", "duration": 30000, "start": 560010, "stop": 590010}]}],
}  # fmt: skip


def profile(run: str):
    return load_profile_text(f"name: hooktest\nrun: {{command: x, {run}}}\n", "hooktest.yaml")


def execute_stats(run: str = "warmup: 1, iterations: 4", reader: str = "libR.so"):
    return ExecuteStatsHook(
        profile(
            f"{run}, latency_source: execute_stats, "
            f"profiler: {{kind: qnn_log, path: /out, reader: {reader}}}"
        )
    )


def of(result, kind):
    return [e for e in result.events if isinstance(e, kind)]


def test_the_registry_gives_each_latency_source_its_hook():
    assert isinstance(profiler_hook_for(execute_stats().profile), ExecuteStatsHook)
    genie = profile(
        "latency_source: genie, profiler: {kind: genie_profile, path: /g.json}, "
        "warmup: 0, iterations: 1"
    )
    assert isinstance(profiler_hook_for(genie), GenieHook)
    reports = profile("warmup: 0, iterations: 1, profiler: {kind: qnn_log, path: /o}")
    assert isinstance(profiler_hook_for(reports), ReportHook)
    assert profiler_hook_for(profile("warmup: 0, iterations: 1")) is None


async def test_each_inference_is_an_iteration_placed_before_the_de_init():
    hook = execute_stats()
    result = await hook(process(0, 100.0, 101.0), FakeDevice())
    iterations = of(result, Iteration)
    assert [(i.seq, i.index, i.phase) for i in iterations] == [
        (0, 0, "warmup"),
        (1, 0, "measure"),
        (2, 1, "measure"),
    ]
    assert [round(i.latency_s * 1e6) for i in iterations] == GOLDEN_US
    # Back to back, the last ending at the process end minus the log's 2577 µs de-init.
    assert iterations[-1].end == pytest.approx(101.0 - 0.002577)
    assert iterations[0].start == pytest.approx(iterations[-1].end - sum(GOLDEN_US) / 1e6)
    assert all(a.end == pytest.approx(b.start) for a, b in itertools.pairwise(iterations))
    assert not result.advance
    (report,) = of(result, ProfileReport)
    assert (report.source_kind, report.path, report.t) == (
        "qnn-viewer-text",
        "/out/qnn-profiling-data_0.log",
        101.0,
    )
    assert report.report["graphs"][0]["name"] == "token_ar1_cl4096_1_of_6"


async def test_the_variant_advances_with_its_measured_count_and_drops_the_rest():
    hook = execute_stats("warmup: 1, iterations: 3")
    device = FakeDevice()
    first = await hook(process(0, 100.0, 101.0), device)
    second = await hook(process(1, 101.0, 102.0), device)
    assert second.advance and not first.advance
    measured = [i for r in (first, second) for i in of(r, Iteration) if i.phase == "measure"]
    assert [(i.seq, i.index) for i in measured] == [(1, 0), (2, 1), (4, 2)]
    assert [log.text for log in of(second, Log)] == [
        "1 inference(s) of process 1 beyond the 3 measured ones of variant (default) are not "
        "counted"
    ]
    overrun = await hook(process(2, 102.0, 103.0), device)
    assert not overrun.advance and of(overrun, Iteration) == []
    assert of(overrun, Log)[0].text == (
        "process 2 of variant (default) was already running when the variant had all it "
        "needed; its output is not counted"
    )


async def test_a_repeated_process_gives_the_same_result_and_counts_nothing_twice():
    hook = execute_stats()
    device = FakeDevice()
    device.drop_next = 1
    with pytest.raises(LinkDown):
        await hook(process(0, 100.0, 101.0), device)
    first = await hook(process(0, 100.0, 101.0), device)
    again = await hook(process(0, 100.0, 101.0), device)
    assert again is first
    after = await hook(process(1, 101.0, 102.0), device)
    assert [i.seq for i in of(after, Iteration)] == [3, 4, 5]
    assert hook.state.variants[""].measured == 4


async def test_reports_come_first_last_and_every_30_s_in_between():
    hook = execute_stats("warmup: 0, iterations: 30")
    device = FakeDevice()
    reported = []
    for number in range(10):
        start = 100.0 + 10 * number
        result = await hook(process(number, start, start + 10.0), device)
        reported += [number for _ in of(result, ProfileReport)]
    # 3 measured per process: the 10th completes the 30, and is the variant's last.
    assert result.advance
    assert reported == [0, 3, 6, 9]


async def test_in_duration_mode_the_process_that_ends_the_time_is_the_last_and_reported():
    hook = execute_stats("warmup: 0, duration: 25s")
    device = FakeDevice()
    results = [
        await hook(process(n, 100.0 + 10 * n, 110.0 + 10 * n, phase_start=99.5), device)
        for n in range(3)
    ]
    # The runner's phase has lasted 20.5 s when the 2nd process ends, 30.5 s at the 3rd.
    assert [r.advance for r in results] == [False, False, True]
    assert [len(of(r, ProfileReport)) for r in results] == [1, 0, 1]
    assert sum(len(of(r, Iteration)) for r in results) == 9


async def test_the_files_of_a_handled_process_are_removed_with_the_next_fetch():
    hook = execute_stats()
    device = FakeDevice()
    await hook(process(0, 100.0, 101.0), device)
    await hook(process(1, 101.0, 102.0), device)
    assert "rm -f" not in device.scripts[0]
    assert device.scripts[1].startswith("rm -f -- /spool/run/prof/0.*\n")


async def test_a_reader_the_viewer_cannot_load_falls_back_to_the_default_text_once():
    def viewer(script):
        if "--reader" in script:
            return failed("ERROR: Unable to load reader libR.so: cannot open shared object file")
        return ok(golden("detailed.txt"))

    hook = execute_stats()
    device = FakeDevice(viewer=viewer)
    first = await hook(process(0, 100.0, 101.0), device)
    second = await hook(process(1, 101.0, 102.0), device)
    assert [log.text for log in of(first, Log)] == [
        "qnn-profile-viewer could not use the reader libR.so (ERROR: Unable to load reader "
        "libR.so: cannot open shared object file); reading the logs with its default text "
        "reader instead (no linting breakdown)"
    ]
    assert of(second, Log) == []
    assert len(of(second, Iteration)) == 3
    assert sum("--reader" in script for script in device.scripts) == 1


async def test_output_that_cannot_be_parsed_is_a_warning_and_a_failed_iteration():
    hook = execute_stats()
    device = FakeDevice(viewer=lambda script: ok("\x00\x01 not a render"))
    result = await hook(process(0, 100.0, 101.0), device)
    (log,) = of(result, Log)
    assert log.level == "warning"
    assert log.text.startswith("cannot parse the profiler output of process 0: /out/")
    (iteration,) = of(result, Iteration)
    assert iteration.exit_status == -1 and iteration.latency_s == 0.0
    assert iteration.error.startswith("no latency: its log /out/qnn-profiling-data_0.log")


async def test_a_failed_process_without_a_log_is_one_failed_iteration_with_its_stderr():
    hook = execute_stats()
    exit = process(0, 100.0, 100.5, outputs=0, status=1, stderr=("Failed to map weights",))
    result = await hook(exit, FakeDevice())
    (iteration,) = of(result, Iteration)
    assert (iteration.exit_status, iteration.start, iteration.end) == (1, 100.0, 100.5)
    assert iteration.error == "the process exited with status 1\nFailed to map weights"
    assert of(result, Log) == [] and of(result, ProfileReport) == []


async def test_a_clean_exit_without_a_log_says_how_to_get_one():
    result = await execute_stats()(process(0, 100.0, 101.0, outputs=0), FakeDevice())
    (iteration,) = of(result, Iteration)
    assert iteration.exit_status == -1
    assert iteration.error == (
        "the process exited cleanly but left no profiling log in /out: does the command pass "
        "--profiling_level and --output_dir with that directory?"
    )
    assert of(result, Log)[0].text == f"process 0: {iteration.error}"


async def test_a_basic_log_has_no_per_inference_latency_and_says_so():
    device = FakeDevice(viewer=lambda script: ok(golden("basic.txt")))
    result = await execute_stats()(process(0, 100.0, 101.0), device)
    (iteration,) = of(result, Iteration)
    assert "a --profiling_level basic log holds only averages" in iteration.error
    assert len(of(result, ProfileReport)) == 1


async def test_a_bug_in_a_hook_never_ends_the_session():
    def viewer(script):
        raise RuntimeError("boom")

    result = await execute_stats()(process(0, 100.0, 101.0), FakeDevice(viewer=viewer))
    (log,) = result.events
    assert log.level == "error"
    assert log.text == (
        "the profiler hook failed on process 0: RuntimeError: boom; its output is not counted"
    )


def optrace_hook(latency_source: str = "execute_stats"):
    return profiler_hook_for(
        profile(
            f"warmup: 0, iterations: 3, latency_source: {latency_source}, "
            "profiler: {kind: optrace, path: /out, schematic: $ROOT/model_schematic.bin}"
        )
    )


async def test_optrace_reports_come_from_the_chrometrace_written_into_the_run_directory():
    device = FakeDevice(optrace=golden("optrace_chrometrace.json"))
    result = await optrace_hook()(process(0, 100.0, 101.0), device)
    (report,) = of(result, ProfileReport)
    assert report.source_kind == "optrace"
    assert len(of(result, Iteration)) == 3
    render = device.scripts[-2]
    assert "--reader libQnnHtpOptraceProfilingReader.so" in render
    assert "--output /spool/run/prof/0.chrometrace0.json" in render
    assert '--schematic "${ROOT:?is not set on the device}"/model_schematic.bin' in render


async def test_no_valid_schematic_is_an_error_naming_the_fix_and_the_text_report_stands_in():
    device = FakeDevice(optrace=None)
    result = await optrace_hook("wall")(process(0, 100.0, 101.0), device)
    (log,) = of(result, Log)
    assert log.level == "error"
    assert "'No Valid Input Schematics' with --schematic $ROOT/model_schematic.bin" in log.text
    assert "--profiling_option optrace" in log.text
    assert [r.source_kind for r in of(result, ProfileReport)] == ["qnn-viewer-text"]
    assert of(result, Iteration) == []


def genie_hook(run: str = "warmup: 1, iterations: 2, timeout: 9s"):
    return GenieHook(
        profile(f"{run}, latency_source: genie, profiler: {{kind: genie_profile, path: /g.json}}")
    )


def genie_device(number: int) -> FakeDevice:
    return FakeDevice(files={f"/spool/run/prof/{number}.0": json.dumps(GENIE)})


async def test_genie_queries_give_ttft_and_rates_warmup_by_process():
    hook = genie_hook()
    results = [
        await hook(process(n, 10.0 * n, 10.0 * n + 1.0, name="g.json"), genie_device(n))
        for n in range(3)
    ]
    iterations = [i for r in results for i in of(r, Iteration)]
    assert [(i.seq, i.phase, i.index) for i in iterations] == [
        (0, "warmup", 0),
        (1, "measure", 0),
        (2, "measure", 1),
    ]
    first = iterations[0]
    assert first.latency_s == pytest.approx(0.554485)
    assert first.metrics == {
        "ttft_s": 0.166485, "prefill_tok_s": 48.05, "decode_tok_s": 20.62,
        "prompt_tokens": 8.0, "generated_tokens": 8.0,
    }  # fmt: skip
    assert first.end == pytest.approx(1.0 - 0.03)
    assert [r.advance for r in results] == [False, False, True]
    assert [len(of(r, ProfileReport)) for r in results] == [1, 0, 1]


async def test_a_killed_genie_is_a_failed_iteration_explaining_the_missing_profile():
    hook = genie_hook()
    exit = process(0, 10.0, 11.0, outputs=0, status=137, stderr=("Killed",))
    result = await hook(exit, FakeDevice())
    (iteration,) = of(result, Iteration)
    assert iteration.exit_status == 137
    expected = (
        "no Genie profile at /g.json: genie-t2t-run writes --profile only when it exits "
        "cleanly, and this process was killed by SIGKILL (exit status 137). Stop it with SIGINT "
        "or SIGTERM (qtop's timeout does), never SIGKILL first, or give it a shorter prompt"
    )
    assert iteration.error == expected + "\nKilled"
    (log,) = of(result, Log)
    assert (log.level, log.text) == ("warning", f"process 0: {expected}")


async def test_a_genie_query_cut_short_by_the_timeout_is_a_failure_with_its_figures():
    exit = process(0, 10.0, 19.0, timed_out=True, name="g.json")
    result = await genie_hook()(exit, genie_device(0))
    (iteration,) = of(result, Iteration)
    assert iteration.exit_status == 124
    assert iteration.error == (
        "the process timed out after 9 s and was stopped (SIGINT, then SIGTERM, then SIGKILL); "
        "Genie wrote its profile on the way out, so the query was cut short"
    )
    assert iteration.metrics["ttft_s"] == 0.166485


async def test_wall_latency_keeps_its_iterations_and_reports_first_and_last():
    hook = profiler_hook_for(
        profile("warmup: 0, iterations: 3, profiler: {kind: genie_profile, path: /g.json}")
    )
    reports = []
    for number in range(3):
        exit = process(number, 10.0 * number, 10.0 * number + 1, name="g.json")
        result = await hook(exit, genie_device(number))
        assert of(result, Iteration) == [] and not result.advance
        reports.append(len(of(result, ProfileReport)))
    assert reports == [1, 0, 1]

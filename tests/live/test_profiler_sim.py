"""Profiler-driven runs against the simulated board, checked against its truth: over real
SSH, and again over adb (``transport_kind``)."""

import pytest
from link.links import sim_link
from link.recording import of_kind

from .sim_runs import (
    CONV_RELU,
    GENIE,
    PRISMML,
    SCHEMATIC,
    custom,
    iterations,
    netrun,
    notes,
    quick_genie_config,
    run_profile,
    shipped,
    truth,
)

# The simulated log's QNN (execute) time is the true NetRun latency less 3 µs.
QNN_BELOW_NETRUN_US = 3


def expected_from_truth(runs, warmup, wanted):
    """(phase, µs) of every iteration qtop should report, from the simulator's own latencies."""
    expected, measured, processes = [], 0, 0
    for run in runs:
        if measured >= wanted:
            break
        processes += 1
        for number, latency in enumerate(run["latencies_us"]):
            if number < warmup:
                expected.append(("warmup", latency - QNN_BELOW_NETRUN_US))
            elif measured < wanted:
                expected.append(("measure", latency - QNN_BELOW_NETRUN_US))
                measured += 1
    return expected, processes


async def test_execute_stats_latencies_are_the_simulators_own(tmp_path, transport_kind):
    async with sim_link(
        tmp_path / "sim", transport_kind, variant="evk", time_scale=20, seed=4
    ) as sim:
        profile = shipped("sim-evk", sim, warmup=2, iterations=30)
        events = await run_profile(profile, tmp_path / "run.jsonl")
        runs = truth(sim, "qnn-net-run")
        leftovers = list((sim.sim_root / "tmp/optrace-blog/netrun").glob("qnn-profiling-data*"))
    got = iterations(events)
    expected, processes = expected_from_truth(runs, warmup=2, wanted=30)
    assert [(i["phase"], round(i["latency_s"] * 1e6)) for i in got] == expected
    assert processes == 2 and len(runs) >= 2
    assert sum(i["phase"] == "warmup" for i in got) == 2 * processes
    assert sum(i["phase"] == "measure" for i in got) == 30
    assert [i["seq"] for i in got] == list(range(len(got)))
    assert [i["index"] for i in got if i["phase"] == "measure"] == list(range(30))
    assert all(i["exit_status"] == 0 and i["start"] < i["end"] for i in got)
    end = events[-1]
    assert end["reason"] == "completed" and end["counts"]["iterations"] == len(got)
    reports = of_kind(events, "profile_report")
    assert len(reports) == 2  # the variant's first and last process
    report = reports[0]
    assert report["source_kind"] == "qnn-viewer-text"
    assert (
        report["path"]
        == f"{sim.sim_root}/tmp/optrace-blog/netrun/qnn-profiling-data-qwen_decode_0.log"
    )
    executes = report["report"]["graphs"][0]["executes"]
    assert len(executes) == 20
    assert any(op.get("wait_cycles") for op in executes[0]["ops"])  # the linting reader's view
    assert leftovers == []


CASES = {
    "basic": (
        netrun(PRISMML, 3, "--profiling_level basic"),
        "{kind: qnn_log, path: $QTOP_SIM_ROOT/tmp/out}",
        "qnn-viewer-text",
    ),
    "detailed": (
        netrun(PRISMML, 3, "--profiling_level detailed"),
        "{kind: qnn_log, path: $QTOP_SIM_ROOT/tmp/out}",
        "qnn-viewer-text",
    ),
    "linting": (
        netrun(
            PRISMML, 3,
            "--profiling_level backend --config_file "
            '"$QTOP_SIM_ROOT/tmp/optrace-blog/backend_extension_config.json"',
        ),
        "{kind: qnn_log, path: $QTOP_SIM_ROOT/tmp/out, reader: libQnnHtpProfilingReader.so}",
        "qnn-viewer-text",
    ),
    "optrace": (
        netrun(CONV_RELU, 3, "--profiling_level detailed --profiling_option optrace"),
        f"{{kind: optrace, path: $QTOP_SIM_ROOT/tmp/out, schematic: {SCHEMATIC}}}",
        "optrace",
    ),
    "genie_profile": (
        GENIE,
        "{kind: genie_profile, path: $QTOP_SIM_ROOT/tmp/genie.json}",
        "genie-profile",
    ),
    "file_csv": (
        netrun(PRISMML, 3, "--profiling_level detailed")
        + ' && qnn-profile-viewer --input_log "$QTOP_SIM_ROOT/tmp/out/qnn-profiling-data_0.log"'
        ' --output "$QTOP_SIM_ROOT/tmp/profile.csv"',
        "{kind: file, path: $QTOP_SIM_ROOT/tmp/profile.csv}",
        "qnn-viewer-csv",
    ),
    "file_json": (
        netrun(PRISMML, 3, "--profiling_level detailed")
        + ' && qnn-profile-viewer --input_log "$QTOP_SIM_ROOT/tmp/out/qnn-profiling-data_0.log"'
        ' --reader libQnnJsonProfilingReader.so --output "$QTOP_SIM_ROOT/tmp/profile.json"',
        "{kind: file, path: $QTOP_SIM_ROOT/tmp/profile.json}",
        "qnn-viewer-json",
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", list(CASES))
async def test_every_profiler_kind_gives_reports_next_to_wall_latency(
    tmp_path, transport_kind, case
):
    command, profiler, kind = CASES[case]
    async with sim_link(
        tmp_path / "sim", transport_kind, variant="evk", time_scale=20, config=quick_genie_config()
    ) as sim:
        run = f"  command: '{command}'\n  warmup: 0\n  iterations: 3\n  profiler: {profiler}\n"
        events = await run_profile(custom(sim, run), tmp_path / "run.jsonl")
    assert len(iterations(events)) == 3
    assert all(i["exit_status"] == 0 for i in iterations(events))
    reports = of_kind(events, "profile_report")
    assert [r["source_kind"] for r in reports] == [kind, kind]  # first and last process
    report = reports[-1]["report"]
    if case == "basic":
        assert "graphs" not in report and report["sections"]
    elif case == "genie_profile":
        assert len(report["queries"]) == 1
    else:
        ops = report["graphs"][0]["executes"][0]["ops"]
        assert ops and all("cycles" in op for op in ops)
        assert any(op.get("wait_cycles") for op in ops) == (case == "linting")
    assert events[-1]["reason"] == "completed"


async def test_optrace_latencies_come_from_the_text_render_and_the_report_from_the_trace(
    tmp_path, transport_kind
):
    async with sim_link(
        tmp_path / "sim", transport_kind, variant="evk", time_scale=20, seed=2
    ) as sim:
        command = netrun(CONV_RELU, 4, "--profiling_level detailed --profiling_option optrace")
        run = (
            f"  command: '{command}'\n"
            "  warmup: 1\n  iterations: 6\n  latency_source: execute_stats\n"
            f"  profiler: {{kind: optrace, path: $QTOP_SIM_ROOT/tmp/out, schematic: {SCHEMATIC}}}\n"
        )
        events = await run_profile(custom(sim, run), tmp_path / "run.jsonl")
        runs = truth(sim, "qnn-net-run")
    expected, processes = expected_from_truth(runs, warmup=1, wanted=6)
    assert [(i["phase"], round(i["latency_s"] * 1e6)) for i in iterations(events)] == expected
    assert processes == 2
    assert [r["source_kind"] for r in of_kind(events, "profile_report")] == ["optrace", "optrace"]


async def test_genie_queries_give_ttft_and_rates_and_a_killed_one_is_explained(
    tmp_path, transport_kind
):
    async with sim_link(
        tmp_path / "sim", transport_kind, variant="evk", time_scale=20, config=quick_genie_config()
    ) as sim:
        # The first query is killed the way the seed's `timeout 300` killed it: no profile.
        command = (
            'if [ -e "$QTOP_SIM_ROOT/tmp/killed" ]; then ' + GENIE + "; "
            'else : >"$QTOP_SIM_ROOT/tmp/killed"; timeout -s KILL 0.03 ' + GENIE + "; fi"
        )
        run = (
            f"  command: '{command}'\n  warmup: 1\n  iterations: 3\n  latency_source: genie\n"
            "  profiler: {kind: genie_profile, path: $QTOP_SIM_ROOT/tmp/genie.json}\n"
        )
        events = await run_profile(custom(sim, run), tmp_path / "run.jsonl")
        queries = [t for t in truth(sim, "genie-t2t-run") if t["outcome"] == "ok"]
    got = iterations(events)
    failed, *good = got
    assert failed["exit_status"] == 137 and failed["phase"] == "warmup"
    assert failed["error"].startswith(
        "no Genie profile at $QTOP_SIM_ROOT/tmp/genie.json: genie-t2t-run writes --profile "
        "only when it exits cleanly, and this process was killed by SIGKILL (exit status 137)"
    )
    assert any("genie-t2t-run writes --profile only when it exits cleanly" in text
               for text in notes(events, "warning"))  # fmt: skip
    assert [(i["seq"], i["phase"], i["index"]) for i in good] == [
        (1, "warmup", 1),
        (2, "measure", 0),
        (3, "measure", 1),
        (4, "measure", 2),
    ]
    assert len(queries) == 4
    for iteration, query in zip(good, queries, strict=True):
        assert iteration["exit_status"] == 0
        assert iteration["metrics"]["ttft_s"] == query["ttft_us"] / 1e6
        assert (
            iteration["latency_s"] == (query["ttft_us"] + query["token_generation_time_us"]) / 1e6
        )
        assert iteration["metrics"]["generated_tokens"] == query["generated_tokens"] == 4
        assert iteration["metrics"]["decode_tok_s"] == pytest.approx(200.0, rel=1e-3)
    assert events[-1]["reason"] == "completed"


class DropBeforeHook:
    """Drops the link as the hook starts on the chosen processes (once each)."""

    def __init__(self, inner, sim, processes):
        self.inner, self.sim = inner, sim
        self.pending = set(processes)
        self.calls = []

    async def __call__(self, exit, device):
        self.calls.append(exit.process)
        if exit.process in self.pending:
            self.pending.discard(exit.process)
            await self.sim.drop()
        return await self.inner(exit, device)


async def test_a_link_dropped_during_the_hook_loses_and_duplicates_nothing(
    tmp_path, transport_kind, monkeypatch
):
    from qtop.device import control
    from qtop.live.profiler_hooks import profiler_hook_for

    async with sim_link(
        tmp_path / "sim", transport_kind, variant="evk", time_scale=20, seed=7
    ) as sim:
        profile = shipped("sim-evk", sim, warmup=2, iterations=40)
        hook = DropBeforeHook(profiler_hook_for(profile), sim, {1})
        advance = control.advance
        advances = []

        async def drop_first_advance(transport, run_dir, variant):
            advances.append(variant)
            if len(advances) == 1:
                await sim.drop()
            await advance(transport, run_dir, variant)

        monkeypatch.setattr(control, "advance", drop_first_advance)
        events = await run_profile(profile, tmp_path / "run.jsonl", hook=hook)
        runs = truth(sim, "qnn-net-run")
    expected, processes = expected_from_truth(runs, warmup=2, wanted=40)
    got = iterations(events)
    assert [(i["phase"], round(i["latency_s"] * 1e6)) for i in got] == expected
    assert [i["seq"] for i in got] == list(range(len(got)))
    assert processes == 3
    # The hook ran again for process 1 (dropped before it fetched) and for process 2 (dropped
    # while the device was told to advance, after the hook had finished).
    assert hook.calls[:5] == [0, 1, 1, 2, 2]
    assert advances == [1, 1]
    links = [e["state"] for e in of_kind(events, "link")]
    assert links.count("disconnected") == 2 and links.count("reconnected") == 2
    assert len(of_kind(events, "profile_report")) == 2
    end = events[-1]
    assert end["reason"] == "completed" and end["counts"]["iterations"] == len(got)
    assert "lost_lines" not in end["counts"]


async def test_a_sweep_advances_through_every_variant(tmp_path, transport_kind):
    async with sim_link(
        tmp_path / "sim", transport_kind, variant="glasses", time_scale=20, seed=1
    ) as sim:
        profile = shipped(
            "sim-glasses", sim, warmup=2, iterations=12, duration_s=None, idle_baseline_s=0.0
        )
        command = profile.run.command.replace("--num_inferences 50", "--num_inferences 8")
        events = await run_profile(profile.replace_run(command=command), tmp_path / "run.jsonl")
        runs = truth(sim, "qnn-net-run")
    got = iterations(events)
    assert [i["seq"] for i in got] == list(range(len(got)))
    for variant in ("w8a8", "w8a16", "w4a16"):
        mine = [r for r in runs if f"prismml_{variant}_seq64.bin" in " ".join(r["argv"])]
        expected, processes = expected_from_truth(mine, warmup=2, wanted=12)
        assert processes == 2
        assert [
            (i["phase"], round(i["latency_s"] * 1e6)) for i in got if i["variant"] == variant
        ] == expected
    phases = [(p["phase"], p["variant"]) for p in of_kind(events, "phase")]
    assert [p for p in phases if p[0] == "measure"] == [
        ("measure", "w8a8"),
        ("measure", "w8a16"),
        ("measure", "w4a16"),
    ]
    reports = [r["variant"] for r in of_kind(events, "profile_report")]
    assert reports == ["w8a8", "w8a8", "w8a16", "w8a16", "w4a16", "w4a16"]
    assert events[-1]["reason"] == "completed"

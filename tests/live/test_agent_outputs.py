"""The runner moves each process's profiler output into the run directory (dash and bash)."""

import pytest
from link.helpers import SHELLS, launch_locally, make_sysfs, profile_for

from qtop.device.plan import RunOptions
from qtop.device.protocol import AgentLogLine, OutputLine, ProcessLine, RunEndLine

# Each run of the command writes its log where qnn-net-run would, numbered by a counter file.
WRITE_LOG = (
    'n=$(cat \\"$OUT/n\\" 2>/dev/null || echo 0); echo $((n + 1)) >\\"$OUT/n\\"; '
    'printf \\"log %s\\" $n >\\"$OUT/qnn-profiling-data_0.log\\"'
)


@pytest.fixture
def runs():
    started = []
    yield started
    for run in started:
        if run.state() == "running":
            run.control("stop", str(run.run_dir), "10")


def start(runs, shell, tmp_path, run):
    profile = profile_for(
        make_sysfs(tmp_path / "sys"),
        tmp_path / "spool",
        run,
        device=f"env: {{OUT: '{tmp_path / 'out'}'}}",
    )
    launched = launch_locally(shell, profile, RunOptions(calibrations=2))
    runs.append(launched)
    return launched


@pytest.mark.parametrize("shell", SHELLS)
def test_each_process_output_is_moved_away_before_the_next_starts(tmp_path, runs, shell):
    out = tmp_path / "out"
    out.mkdir()
    (out / "qnn-profiling-data_0.log").write_text("left by an earlier run")
    run = start(
        runs,
        shell,
        tmp_path,
        f'{{command: "{WRITE_LOG}", warmup: 0, iterations: 3, '
        "profiler: {kind: qnn_log, path: $OUT}}",
    )
    assert run.wait() == "completed"
    lines = run.lines("events")
    outputs = [line for line in lines if isinstance(line, OutputLine)]
    assert [(o.process, o.stored, o.original) for o in outputs] == [
        (p, f"prof/{p}.0", f"{out}/qnn-profiling-data_0.log") for p in range(3)
    ]
    # Each F line comes right before its process's I line.
    for output in outputs:
        following = lines[lines.index(output) + 1]
        assert isinstance(following, ProcessLine) and following.process == output.process
    kept = {p: (run.run_dir / f"prof/{p}.0").read_text() for p in range(3)}
    assert kept == {0: "log 0", 1: "log 1", 2: "log 2"}
    assert (run.run_dir / "prof/stale.0.0").read_text() == "left by an earlier run"
    warnings = [line.text for line in lines if isinstance(line, AgentLogLine)]
    assert warnings == [
        f"profiler output {out}/qnn-profiling-data_0.log was there before process 0 started "
        f"(not written by it): moved to {run.run_dir}/prof/stale.0.0"
    ]
    assert sorted(p.name for p in out.iterdir()) == ["n"]


@pytest.mark.parametrize("shell", SHELLS)
def test_a_process_that_writes_nothing_gets_no_output_line(tmp_path, runs, shell):
    genie = tmp_path / "genie.json"
    run = start(
        runs,
        shell,
        tmp_path,
        f"{{command: 'test -e {tmp_path}/once || {{ touch {tmp_path}/once; echo {{}} >{genie}; }}'"
        f", warmup: 0, iterations: 2, profiler: {{kind: genie_profile, path: {genie}}}}}",
    )
    assert run.wait() == "completed"
    lines = run.lines("events")
    assert [(o.process, o.stored) for o in lines if isinstance(o, OutputLine)] == [(0, "prof/0.0")]
    assert (run.run_dir / "prof/0.0").read_text() == "{}\n"
    assert not genie.exists()


def test_a_profiler_path_naming_an_unset_variable_fails_the_run(tmp_path, runs):
    run = start(
        runs,
        "/bin/dash",
        tmp_path,
        "{command: 'true', warmup: 0, iterations: 1, "
        "profiler: {kind: qnn_log, path: $NO_SUCH_QTOP_VARIABLE/out}}",
    )
    assert run.wait() == "failed"
    end = run.lines("events")[-1]
    assert isinstance(end, RunEndLine)
    assert end.detail == (
        "profiler.path $NO_SUCH_QTOP_VARIABLE/out: $NO_SUCH_QTOP_VARIABLE is not set in the "
        "device's environment"
    )

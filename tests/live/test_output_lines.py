"""F lines: parsed, attached to their process's exit, kept until the process is handled."""

import pytest

from qtop.device.plan import profiler_output_vars
from qtop.device.probe import parse_probe
from qtop.device.protocol import OutputLine, parse_line
from qtop.device.sensors import plan_sensors
from qtop.errors import UsageError
from qtop.events import Iteration, Log
from qtop.live.translate import ProfilerFile, Translator
from qtop.profiles import DeviceProfile, load_profile_text


def test_an_f_line_parses_with_a_path_that_holds_tabs_and_newlines():
    assert parse_line("F\t7\t900\t3\tprof/3.0\t/out/a\\tb\\nI\\\\.log") == OutputLine(
        7, 900, 3, "prof/3.0", "/out/a\tb\nI\\.log"
    )


def translator():
    sensors = plan_sensors(parse_probe("root\t/s\nend\n"), DeviceProfile(cpufreq="none"))
    return Translator(sensors, ("w8a8",), 0.1, run_dir="/spool/run", now=lambda: 5.0)


def test_a_process_exit_carries_its_files_until_it_is_committed():
    tr = translator()
    tr.events_line("K\t0\t0\tepoch\t-1000000\t1\tread\t64")
    tr.events_line("P\t1\t1500000\tmeasure\t1\t20\t\t")
    tr.events_line("F\t2\t3000000\t0\tprof/0.0\t/out/qnn-profiling-data_0.log")
    _, line = tr.events_line("I\t3\t3000000\t0\tmeasure\t1\t0\t2000000\t3000000\t0\t0\t")
    exit = tr.process_exit(line)
    assert exit.outputs == (ProfilerFile("/spool/run/prof/0.0", "/out/qnn-profiling-data_0.log"),)
    assert exit.phase_start == 0.5 and (exit.start, exit.end) == (1.0, 2.0)
    # The link dropped during the hook: the I line comes again, the F line does not.
    _, again = tr.events_line("I\t3\t3000000\t0\tmeasure\t1\t0\t2000000\t3000000\t0\t0\t")
    assert tr.process_exit(again).outputs == exit.outputs
    assert tr.commit_process(again) == []
    assert tr.process_exit(again).outputs == ()


def test_a_hooks_events_are_numbered_and_counted_as_the_streams_own():
    tr = translator()
    tr.note("first")
    adopted = tr.adopt(
        [
            Log(t=1.0, stream="qtop", text="from the hook"),
            Iteration(t=1.0, seq=0, exit_status=0),
            Iteration(t=1.0, seq=1, exit_status=137),
        ]
    )
    assert [(e.seq, e.host_t) for e in adopted] == [(1, 5.0), (0, 5.0), (1, 5.0)]
    assert tr.counts["iterations"] == 2 and tr.counts["failed_iterations"] == 1


def profile(profiler: str):
    text = f"name: p\nrun: {{command: x, iterations: 1, profiler: {profiler}}}\n"
    return load_profile_text(text, "p.yaml")


def test_the_plan_tells_the_runner_where_the_output_is_and_how_to_match_it():
    assert profiler_output_vars(profile("{kind: qnn_log, path: $OUT/net}")) == ("$OUT/net", "dir")
    assert profiler_output_vars(profile("{kind: qnn_log, path: out/a_0.log}")) == (
        "out/a_0.log",
        "file",
    )
    assert profiler_output_vars(profile("{kind: genie_profile, path: /g.json}")) == (
        "/g.json",
        "file",
    )
    with pytest.raises(UsageError, match=r"run.profiler.path: '\$1x/out' must be '\$NAME'"):
        profiler_output_vars(profile("{kind: qnn_log, path: $1x/out}"))

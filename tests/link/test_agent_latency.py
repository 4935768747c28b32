"""The timed window holds the whole command, on the clock the command itself reads.

A C program records its own first and last readings of CLOCK_REALTIME (the
clock of $EPOCHREALTIME and of `date`); every iteration's stamps must enclose
them. How close they are is bench/latency_accuracy.py's business.
"""

import shutil
import subprocess
from pathlib import Path

import pytest

from qtop.device.plan import RunOptions
from qtop.device.protocol import CalibrationLine, ProcessLine

from .helpers import AGENT_SHELLS, launch_locally, make_sysfs, profile_for, shell_id

SOURCE = Path(__file__).with_name("timed_workload.c")


@pytest.fixture(scope="module")
def workload(tmp_path_factory):
    compiler = shutil.which("gcc") or shutil.which("cc")
    if compiler is None:
        pytest.skip("no C compiler")
    binary = tmp_path_factory.mktemp("workload") / "timed_workload"
    subprocess.run([compiler, "-O2", "-o", str(binary), str(SOURCE)], check=True)
    return binary


@pytest.mark.parametrize("shell", AGENT_SHELLS, ids=shell_id)
def test_each_iteration_s_window_encloses_the_program_s_own(tmp_path, shell, workload):
    log = tmp_path / "own.log"
    profile = profile_for(
        make_sysfs(tmp_path / "sys"),
        tmp_path / "spool",
        f"{{command: '{workload} sleep 3000 {log}', warmup: 1, iterations: 4}}",
    )
    run = launch_locally(shell, profile, RunOptions(calibrations=3))
    assert run.wait() == "completed"
    lines = run.lines("events")
    processes = [line for line in lines if isinstance(line, ProcessLine)]
    own = [tuple(map(int, line.split())) for line in log.read_text().splitlines()]
    assert len(processes) == len(own) == 5
    for process, (start, end) in zip(processes, own, strict=True):
        assert process.start_us <= start <= end <= process.end_us
    # The calibration ran an external program (an exec), not a builtin.
    calibration = next(line for line in lines if isinstance(line, CalibrationLine))
    assert len(calibration.durations_us) == 3 and min(calibration.durations_us) > 0

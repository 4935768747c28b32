"""kill -9 of `qtop run` itself, mid-run against the simulated board: the recording reads."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from qtop.events import End, Header, Iteration, Sample
from qtop.profiles import builtin_profile_dir
from qtop.record.reader import open_recording

ITERATIONS_BEFORE_THE_KILL = 25


@pytest.fixture
def simulator(tmp_path: Path) -> Iterator[int]:
    """`qtop sim` in its own process on a free port; stopped (with all it started) at the end."""
    process = subprocess.Popen(
        [sys.executable, "-m", "qtop", "sim", "--port", "0", "--state-dir", str(tmp_path / "sim")],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        port = None
        for line in process.stdout:
            found = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
            if found:
                port = int(found.group(1))
                break
        assert port is not None, "the simulator ended before it listened"
        yield port
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def sim_profile(tmp_path: Path, port: int) -> Path:
    text = (builtin_profile_dir() / "sim-evk.yaml").read_text()
    state = tmp_path / "sim"
    text = re.sub(r"(?m)^  port: .*$", f"  port: {port}", text)
    text = re.sub(
        r"(?m)^  identity_file: .*$", f"  identity_file: {state / 'client_ed25519'}", text
    )
    text = re.sub(r"(?m)^  known_hosts: .*$", f"  known_hosts: {state / 'known_hosts'}", text)
    text = re.sub(r"(?m)^  iterations: .*$", "  iterations: 100000", text)
    text = re.sub(r"(?m)^  sample_interval: .*$", "  sample_interval: 50ms", text)
    profile = tmp_path / "sim-evk.yaml"
    profile.write_text(text)
    return profile


def iterations_in(path: Path) -> int:
    if not path.exists() or path.stat().st_size == 0:
        return 0
    try:
        recording = open_recording(path)
    except Exception:  # the header line may not be whole yet
        return 0
    with recording:
        return sum(1 for event in recording.events() if isinstance(event, Iteration))


def test_kill_9_of_qtop_run_mid_run_leaves_a_readable_recording(tmp_path, simulator):
    profile = sim_profile(tmp_path, simulator)
    record = tmp_path / "killed.jsonl"
    process = subprocess.Popen(
        [sys.executable, "-m", "qtop", "run", str(profile), "--headless", "--record",
         str(record), "--stop-leftover"],
        cwd=tmp_path, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        # A hang guard only: the run reaches its iterations however slow the machine.
        deadline = time.monotonic() + 300
        while iterations_in(record) < ITERATIONS_BEFORE_THE_KILL:
            assert process.poll() is None, process.stderr.read() if process.stderr else ""
            assert time.monotonic() < deadline, "no iterations recorded"
            time.sleep(0.2)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == -signal.SIGKILL

    recording = open_recording(record)
    with recording:
        events = list(recording.events())
        warnings = recording.warnings()
    assert isinstance(events[0], Header) and events[0].source == "ssh"
    iterations = [e for e in events if isinstance(e, Iteration)]
    assert len(iterations) >= ITERATIONS_BEFORE_THE_KILL
    assert [i.seq for i in iterations] == list(range(len(iterations)))
    assert all(i.exit_status == 0 for i in iterations)
    samples = [e for e in events if isinstance(e, Sample)]
    assert samples and [s.seq for s in samples] == sorted({s.seq for s in samples})
    assert not any(isinstance(e, End) for e in events)
    # At most the line the kill cut short is missing, and then the warning says so.
    assert all("cut off mid-write" in warning for warning in warnings), warnings

    report = subprocess.run(
        [sys.executable, "-m", "qtop", "report", str(record), "--format", "json"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert report.returncode == 0, report.stderr
    assert "Traceback" not in report.stderr
    assert f'"count": {sum(1 for i in iterations if i.phase == "measure")}' in report.stdout

"""`qtop run --local --headless` and `qtop demo --headless` as a user runs them."""

import os
import signal
import subprocess
import sys
import time

from qtop.record.reader import open_recording

from .helpers import group_alive, group_ends, launch_locally, make_sysfs, profile_for

PYTHON = sys.executable


def write_profile(tmp_path, run):
    sysfs = make_sysfs(tmp_path / "sys")
    path = tmp_path / "local.yaml"
    path.write_text(
        "name: clilocal\n"
        f"device: {{sysfs_root: '{sysfs}', spool_dir: '{tmp_path / 'spool'}', "
        "sample_interval: 50ms}\n"
        f"run: {run}\n"
    )
    return path


def qtop(*args, cwd, **kwargs):
    return subprocess.Popen(
        [PYTHON, "-m", "qtop", *args],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kwargs,
    )


def records(path):
    return [event.to_dict() for event in open_recording(path).events()]


def test_a_headless_local_run_prints_progress_and_the_summary(tmp_path):
    profile = write_profile(tmp_path, "{command: 'sleep 0.02', warmup: 1, iterations: 5}")
    process = qtop("run", str(profile), "--local", "--headless", "--iterations", "8", cwd=tmp_path)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("run ") and lines[0].endswith(
        "started on local (" + os.uname().nodename + ")"
    )
    recording = lines[1].removeprefix("recording to ")
    assert recording.startswith("recordings/") and recording.endswith("-clilocal.jsonl")
    assert "phase warmup: 1 iterations" in lines
    assert "phase measure: 8 iterations" in lines
    assert f"recorded to {recording}" in lines
    assert lines[-1] == "run completed"
    events = records(tmp_path / recording)
    assert len([e for e in events if e["kind"] == "iteration"]) == 9
    assert events[0]["profile"]["run"]["iterations"] == 8
    assert events[-1]["kind"] == "end"


def test_ctrl_c_without_a_terminal_stops_the_device_run(tmp_path):
    profile = write_profile(tmp_path, "{command: 'sleep 30', warmup: 0, iterations: 2}")
    record = tmp_path / "stopped.jsonl"
    process = qtop(
        "run", str(profile), "--local", "--headless", "--record", str(record), cwd=tmp_path
    )
    deadline = time.monotonic() + 20
    while not record.exists() or "timer_overhead_s" not in record.read_text():
        assert time.monotonic() < deadline and process.poll() is None
        time.sleep(0.05)
    time.sleep(0.3)
    header = records(record)[0]
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=30)
    assert process.returncode == 1, err
    assert "interrupted: stopping the device run (no terminal to ask on)" in out
    assert out.splitlines()[-1].startswith("run stopped")
    assert records(record)[-1]["reason"] == "stopped"
    assert group_ends(header["device"]["pgid"])


def test_a_leftover_run_is_refused_then_stopped_on_request(tmp_path):
    profile_path = write_profile(tmp_path, "{command: 'true', warmup: 0, iterations: 1}")
    leftover = launch_locally(
        "/bin/sh",
        profile_for(tmp_path / "sys", tmp_path / "spool", "{command: 'sleep 30', iterations: 1}"),
    )
    try:
        process = qtop(
            "run", str(profile_path), "--local", "--headless", "--no-record", cwd=tmp_path
        )
        out, err = process.communicate(timeout=30)
        assert process.returncode == 1
        assert f"refusing to start: run {leftover.run_dir.name} (profile linktest" in err
        assert f"fix: stop it with: qtop run {profile_path} --stop-leftover" in err
        assert group_alive(leftover.pgid)
        process = qtop(
            "run", str(profile_path), "--local", "--headless", "--no-record", "--stop-leftover",
            cwd=tmp_path,
        )  # fmt: skip
        out, err = process.communicate(timeout=60)
        assert f"stopped leftover run {leftover.run_dir.name} (SIGTERM)" in out
        assert group_ends(leftover.pgid)
        assert process.returncode == 0, err
    finally:
        if group_alive(leftover.pgid):
            os.killpg(leftover.pgid, signal.SIGKILL)


def test_demo_runs_headless_against_the_simulated_board(tmp_path):
    process = qtop(
        "demo", "--headless", "--warmup", "0", "--iterations", "3", "--record",
        str(tmp_path / "demo.jsonl"), cwd=tmp_path,
    )  # fmt: skip
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    assert "simulated board on 127.0.0.1:" in out
    assert out.splitlines()[-1] == "run completed"
    events = records(tmp_path / "demo.jsonl")
    assert events[0]["source"] == "sim"
    iterations = [e for e in events if e["kind"] == "iteration"]
    assert len(iterations) == 3 and all(i["exit_status"] == 0 for i in iterations)


def test_an_existing_recording_is_refused_before_anything_starts_on_the_device(tmp_path):
    profile = write_profile(tmp_path, "{command: 'sleep 0.02', warmup: 0, iterations: 3}")
    taken = tmp_path / "taken.jsonl"
    taken.write_text("precious\n")
    process = qtop(
        "run", str(profile), "--local", "--headless", "--record", str(taken), cwd=tmp_path
    )
    out, err = process.communicate(timeout=60)
    assert process.returncode == 2
    assert f"{taken}: a recording with this name already exists" in err
    assert "started on" not in out
    assert taken.read_text() == "precious\n"
    assert not (tmp_path / "spool").exists() or not any((tmp_path / "spool").iterdir())


def test_without_a_terminal_the_run_goes_headless_instead_of_drawing_into_a_pipe(tmp_path):
    profile = write_profile(tmp_path, "{command: 'sleep 0.01', warmup: 0, iterations: 3}")
    process = qtop("run", str(profile), "--local", cwd=tmp_path)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    assert "standard output is not a terminal: running headless" in err
    assert "\x1b[" not in out
    assert out.splitlines()[-1] == "run completed"

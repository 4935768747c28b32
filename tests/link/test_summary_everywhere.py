"""One summary everywhere: a headless run prints what ``report`` prints on its recording."""

from __future__ import annotations

import subprocess
import sys

PYTHON = sys.executable


def qtop(*args: str, cwd) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PYTHON, "-m", "qtop", *args],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=180,
    )


def summary_block(out: str, path: str) -> str:
    """The summary a headless run printed: from the recording's path to 'recorded to'."""
    lines = out.splitlines()
    start = lines.index(path)
    end = next(i for i, line in enumerate(lines) if line.startswith("recorded to "))
    return "\n".join(lines[start:end])


def test_headless_demo_replay_and_report_print_the_same_summary(tmp_path):
    path = str(tmp_path / "demo.jsonl")
    demo = qtop("demo", "--headless", "--duration", "4s", "--record", path, cwd=tmp_path)
    assert demo.returncode == 0, demo.stderr
    live = summary_block(demo.stdout, path)
    # The analysis is there, not just the model's table: validity, thermal, energy, timeline.
    for section in ("analysis:", "valid:", "thermal:", "energy:", "timeline (30 s windows):"):
        assert section in live
    report = qtop("report", path, cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    assert report.stdout.rstrip("\n") == live
    replay = qtop("replay", path, "--headless", cwd=tmp_path)
    assert replay.returncode == 0, replay.stderr
    assert replay.stdout.rstrip("\n") == live

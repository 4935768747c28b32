"""What `run` and `demo` do with a profile: which file, which plan, where the recording goes."""

import time
from pathlib import Path

from qtop.cli import main
from qtop.live.runner import RECORDINGS_DIR, default_recording_path

MINIMAL = """\
name: tiny
device:
  host: board
run:
  command: echo hi
  iterations: 40
"""


def test_qtop_run_says_which_file_a_name_resolved_to(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "profiles").mkdir()
    local = tmp_path / "profiles" / "mine.yaml"
    local.write_text(MINIMAL)
    assert main(["run", "mine", "--local", "--headless", "--iterations", "0"]) == 2
    err = capsys.readouterr().err
    assert err.splitlines()[0] == f"profile mine: {local}"
    assert "qtop run: error: --iterations: 0 is below the minimum, 1" in err


def test_the_demo_never_runs_a_profile_from_the_current_directory(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "profiles").mkdir()
    planted = tmp_path / "profiles" / "sim-evk.yaml"
    planted.write_text("run: {command: 'touch pwned', iterations: 40\n")  # not even YAML
    # --iterations 0 stops the demo after its profile is loaded, before the simulator starts.
    assert main(["demo", "--headless", "--iterations", "0"]) == 2
    err = capsys.readouterr().err
    assert str(planted) not in err
    assert "--iterations: 0 is below the minimum, 1" in err


def test_the_recording_path_stays_under_recordings_whatever_the_name():
    now = time.mktime((2026, 1, 2, 3, 4, 5, 0, 0, 0))
    for name in ("../../etc/passwd", "/abs/path", "a/b", "..", "", "ok-name"):
        path = default_recording_path(name, now)
        assert path.parent == Path(RECORDINGS_DIR)
        assert path.name.endswith(".jsonl") and "/" not in path.name[:-6]
    assert default_recording_path("ok-name", now).name.endswith("-ok-name.jsonl")
    assert default_recording_path("../../etc/passwd", now).name.endswith("-etc-passwd.jsonl")

"""`qtop export` writes like the recorder: exclusive create or --force, 0600, no symlink."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest

from qtop.cli import main

RECORDING = Path(__file__).resolve().parents[1] / "fixtures" / "recordings" / "simple.jsonl"


@pytest.fixture
def recording(tmp_path: Path) -> Path:
    path = tmp_path / "run.jsonl"
    shutil.copyfile(RECORDING, path)
    return path


def mode_of(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


@pytest.mark.parametrize("fmt", ["csv", "perfetto", "jsonl"])
def test_a_new_export_is_only_readable_by_its_owner_whatever_the_umask(recording, fmt):
    previous = os.umask(0o022)
    try:
        assert main(["export", str(recording), "--format", fmt]) == 0
    finally:
        os.umask(previous)
    (written,) = [p for p in recording.parent.iterdir() if p != recording]
    assert mode_of(written) == 0o600
    assert written.stat().st_size > 0
    assert not [p for p in recording.parent.iterdir() if p.name.endswith(".part")]


def test_mode_gives_other_permissions_when_asked(recording, tmp_path):
    target = tmp_path / "shared.csv"
    assert (
        main(["export", str(recording), "--format", "csv", "-o", str(target), "--mode", "644"]) == 0
    )
    assert mode_of(target) == 0o644


def test_a_mode_that_is_not_octal_permissions_is_a_usage_error(recording, capsys):
    with pytest.raises(SystemExit) as exited:
        main(["export", str(recording), "--format", "csv", "--mode", "4755"])
    assert exited.value.code == 2
    assert "only permission bits" in capsys.readouterr().err


def test_an_existing_file_is_kept_unless_force(recording, tmp_path, capsys):
    target = tmp_path / "out.csv"
    target.write_text("keep me\n")
    assert main(["export", str(recording), "--format", "csv", "-o", str(target)]) == 2
    err = capsys.readouterr().err
    assert "a file with this name already exists" in err
    assert "pass --force to replace it" in err
    assert target.read_text() == "keep me\n"
    assert main(["export", str(recording), "--format", "csv", "-o", str(target), "--force"]) == 0
    assert target.read_text().startswith("t_s,seq,")
    assert mode_of(target) == 0o600


def test_a_symbolic_link_is_never_followed(recording, tmp_path, capsys):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    os.chmod(victim, 0o644)
    link = tmp_path / "out.csv"
    link.symlink_to(victim)
    assert main(["export", str(recording), "--format", "csv", "-o", str(link)]) == 2
    assert "a symbolic link with this name already exists" in capsys.readouterr().err
    assert victim.read_text() == "precious\n"
    # --force replaces the link itself; the file it pointed to is untouched.
    assert main(["export", str(recording), "--format", "csv", "-o", str(link), "--force"]) == 0
    assert not link.is_symlink()
    assert link.read_text().startswith("t_s,seq,")
    assert victim.read_text() == "precious\n" and mode_of(victim) == 0o644


def test_a_dangling_symbolic_link_is_not_a_way_to_create_a_file_elsewhere(recording, tmp_path):
    elsewhere = tmp_path / "elsewhere.csv"
    link = tmp_path / "out.csv"
    link.symlink_to(elsewhere)
    assert main(["export", str(recording), "--format", "csv", "-o", str(link)]) == 2
    assert not elsewhere.exists()


def test_the_recording_itself_is_never_the_output(recording, capsys):
    assert main(["export", str(recording), "--format", "jsonl", "-o", str(recording)]) == 2
    assert "would overwrite the recording" in capsys.readouterr().err
    assert recording.read_bytes() == RECORDING.read_bytes()


def test_stdout_is_still_an_output(recording, capsys):
    assert main(["export", str(recording), "--format", "csv", "-o", "-"]) == 0
    assert capsys.readouterr().out.startswith("t_s,seq,")


def test_device_text_in_csv_headers_and_cells_is_escaped(tmp_path, capsys):
    hostile = "nsp\x1b]0;pwned\x07"
    lines = RECORDING.read_text().splitlines(keepends=True)
    text = "".join(lines).replace("thermal/nsp-0-0-0-thermal", hostile.replace("\x1b", "\\u001b")
                                  .replace("\x07", "\\u0007"))  # fmt: skip
    path = tmp_path / "hostile.jsonl"
    path.write_text(text)
    assert main(["export", str(path), "--format", "csv", "-o", "-"]) == 0
    out = capsys.readouterr().out
    header = out.splitlines()[0]
    assert "nsp\\x1b]0;pwned\\x07" in header
    assert "\x1b" not in out and "\x07" not in out

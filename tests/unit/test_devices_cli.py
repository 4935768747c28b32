"""Several devices from the command line: recording names, refusals, report and compare."""

import csv
import io
import json
from pathlib import Path

import pytest

from qtop.cli import main
from qtop.errors import UsageError
from qtop.live.multi import PrefixedOut, plan_recordings
from qtop.report.devices import device_rows
from qtop.report.summary import summarize_recording
from qtop.session_set import distinct_names

RECORDINGS = Path(__file__).resolve().parents[1] / "fixtures" / "recordings"
SIMPLE, GLASSES, SUSTAINED, VARIANTS = (
    RECORDINGS / f"{name}.jsonl" for name in ("simple", "glasses", "sustained", "variants")
)

NOW = 1_796_000_000.0
TWO_PROFILES = """\
name: {name}
device:
  host: {host}
run:
  command: 'true'
  iterations: 5
"""


def test_each_device_gets_its_own_recording_in_the_directory(tmp_path):
    paths = plan_recordings(
        ["glasses-prismml", "phone-prismml"], str(tmp_path / "side"), False, NOW
    )
    assert [p.parent for p in paths] == [tmp_path / "side"] * 2
    assert paths[0].name.endswith("-glasses-prismml.jsonl")
    assert paths[1].name.endswith("-phone-prismml.jsonl")


def test_two_devices_of_one_profile_never_share_a_recording():
    paths = plan_recordings(["evk", "evk", "evk"], None, False, NOW)
    names = [p.name for p in paths]
    assert len(set(names)) == 3
    assert names[1].endswith("-evk-2.jsonl") and names[2].endswith("-evk-3.jsonl")
    assert all(p.parent.name == "recordings" for p in paths)


def test_one_recording_file_for_several_devices_is_refused_with_the_fix(tmp_path):
    with pytest.raises(UsageError) as refused:
        plan_recordings(["a", "b"], str(tmp_path / "run.jsonl"), False, NOW)
    assert "2 devices make 2 recordings" in refused.value.problem
    assert "--record DIR" in refused.value.fix
    existing = tmp_path / "file"
    existing.write_text("")
    with pytest.raises(UsageError):
        plan_recordings(["a", "b"], str(existing), False, NOW)
    assert plan_recordings(["a", "b"], str(existing), True, NOW) == [None, None]


def test_device_names_are_plain_and_told_apart():
    assert distinct_names(["evk", "glasses\x1b[31m", "evk"]) == ["evk", "glasses\\x1b[31m", "evk#2"]


def test_each_line_of_a_device_is_prefixed_whole():
    out = io.StringIO()
    stream = PrefixedOut("glasses: ", out)
    stream.write("phase measure")
    assert out.getvalue() == ""
    stream.write(": 12 iterations\nlink ok\nsecond")
    assert out.getvalue() == "glasses: phase measure: 12 iterations\nglasses: link ok\n"
    assert not stream.isatty()


def write_profiles(tmp_path, hosts=("board-a", "board-b")):
    paths = []
    for number, host in enumerate(hosts):
        path = tmp_path / f"p{number}.yaml"
        path.write_text(TWO_PROFILES.format(name=f"p{number}", host=host))
        paths.append(str(path))
    return paths


@pytest.mark.parametrize(
    ("option", "said"),
    [
        (["--host", "x"], "--host picks one device"),
        (["--adb"], "--adb picks one device"),
        (["--local"], "--local picks one device"),
        (["--metrics-listen", "127.0.0.1:0"], "--metrics-listen serves one device"),
        (["--record", "side.jsonl"], "one file cannot hold"),
    ],
)
def test_single_device_options_are_refused_with_several_profiles(tmp_path, capsys, option, said):
    a, b = write_profiles(tmp_path)
    assert main(["run", a, b, "--headless", *option]) == 2
    err = capsys.readouterr().err
    assert said in err and "fix:" in err


def test_one_device_named_twice_is_refused(tmp_path, capsys):
    a, b = write_profiles(tmp_path, hosts=("same-board", "same-board"))
    assert main(["run", a, b, "--headless"]) == 2
    err = capsys.readouterr().err
    assert "both run on" in err and "would each heat and slow the other" in err


def test_report_puts_each_variant_of_every_device_side_by_side(capsys):
    summaries = [summarize_recording(path)[0] for path in (SIMPLE, GLASSES, VARIANTS)]
    rows = device_rows(summaries)
    # The single unnamed variant of simple.jsonl stands with each variant of the others.
    assert [(row[0], row[1], row[2].rsplit("/", 1)[-1]) for row in rows] == [
        ("—", "fixture-board", "simple.jsonl"),
        ("w8a8", "glasses (AR1)", "glasses.jsonl"),
        ("w8a8", "fixture-board", "variants.jsonl"),
        ("—", "fixture-board", "simple.jsonl"),
        ("w8a16", "glasses (AR1)", "glasses.jsonl"),
        ("w8a16", "fixture-board", "variants.jsonl"),
    ]
    assert [row[5] for row in rows if row[0] == "—"] == ["1.00", "1.00"]
    glasses, board = rows[1], rows[2]
    assert float(glasses[5]) == pytest.approx(float(glasses[4]) / float(rows[0][4]), abs=0.006)
    assert float(board[5]) == pytest.approx(float(board[4]) / float(rows[0][4]), abs=0.006)
    # Energy only where the recording measured it (the fixture board has no power channel).
    assert glasses[8] != "—" and board[8] == "—" and board[9] == "—"
    assert main(["report", str(SIMPLE), str(GLASSES), str(VARIANTS)]) == 0
    out = capsys.readouterr().out
    assert "devices side by side (2 devices):" in out
    assert "each device is timed by its own clock" in out
    assert main(["report", "--format", "markdown", str(SIMPLE), str(GLASSES)]) == 0
    assert "#### Devices side by side" in capsys.readouterr().out


def test_one_variant_recordings_of_different_devices_line_up(capsys):
    rows = device_rows([summarize_recording(path)[0] for path in (SIMPLE, SUSTAINED)])
    assert [row[1] for row in rows] == ["fixture-board", "iq9075-evk (QCS9075)"]
    assert rows[0][5] == "1.00" and rows[1][5] != "—"
    assert main(["report", "--format", "csv", str(SIMPLE), str(GLASSES)]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [(r["recording"], r["device"], r["variant"]) for r in rows] == [
        ("simple", "fixture-board", ""),
        ("glasses", "glasses (AR1)", "w8a8"),
        ("glasses", "glasses (AR1)", "w8a16"),
    ]


def test_report_of_one_device_has_no_device_table(capsys):
    assert main(["report", str(SIMPLE), str(VARIANTS)]) == 0
    assert "devices side by side" not in capsys.readouterr().out


def test_compare_across_devices_says_so(capsys):
    assert main(["compare", str(SIMPLE), f"{GLASSES}:w8a8"]) == 0
    out = capsys.readouterr().out
    assert "across devices: BASE on fixture-board, NEW on glasses (AR1)" in out
    assert main(["compare", str(SIMPLE), f"{GLASSES}:w8a8", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["devices"] == ["fixture-board", "glasses (AR1)"]


def test_compare_on_one_device_says_nothing_of_devices(capsys):
    assert main(["compare", str(SIMPLE), str(SIMPLE)]) == 0
    assert "across devices" not in capsys.readouterr().out


def test_replay_headless_summarises_every_recording(capsys):
    assert main(["replay", "--headless", str(SIMPLE), str(GLASSES)]) == 0
    out = capsys.readouterr().out
    assert "profile" in out and "devices side by side (2 devices):" in out

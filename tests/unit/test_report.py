import csv
import io
import json

import pytest

from qtop.cli import main


@pytest.fixture
def recordings(fixtures_dir):
    return fixtures_dir / "recordings"


def test_text_report_of_a_known_recording(recordings, capsys):
    assert main(["report", str(recordings / "simple.jsonl")]) == 0
    out = capsys.readouterr().out
    assert "100 measured, 5 warm-up, 0 failed" in out
    assert "59.500  99.100  104.050  108.010" in out
    assert "marker at +3.5 s: note: fan switched off" in out


def test_json_report_has_the_known_answers(recordings, capsys):
    assert main(["report", str(recordings / "simple.jsonl"), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    measured = data["variants"][0]["measured"]
    assert measured["count"] == 100
    assert measured["p50_ms"] == pytest.approx(59.5)
    assert measured["p95_ms"] == pytest.approx(104.05)
    assert measured["p99_ms"] == pytest.approx(108.01)
    assert measured["min_ms"] == pytest.approx(10.0)
    assert data["complete"] is True
    assert data["end_reason"] == "completed"


def test_several_recordings_give_one_row_per_variant(recordings, capsys):
    files = [str(recordings / "simple.jsonl"), str(recordings / "variants.jsonl")]
    assert main(["report", *files, "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [row["config"] for row in rows] == ["simple", "variants:w8a8", "variants:w8a16"]
    assert float(rows[2]["p50_ms"]) == pytest.approx(59.5 * 1.2)
    assert rows[0]["energy_per_inference_mj"] == ""


def test_markdown_table(recordings, capsys):
    assert main(["report", str(recordings / "variants.jsonl"), "--format", "markdown"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("| config | n | valid | P50 ms | P95 ms | P99 ms | energy/inf mJ |")
    assert out[3].startswith("| variants:w8a16 | 100 | yes | 71.400 | 124.860 | 129.612 | — |")
    assert "no power telemetry" in "\n".join(out)


def test_report_of_a_crashed_recording_says_so(recordings, tmp_path, capsys):
    data = (recordings / "simple.jsonl").read_bytes()
    cut = tmp_path / "crashed.jsonl"
    cut.write_bytes(data[: len(data) // 2])
    assert main(["report", str(cut)]) == 0
    out = capsys.readouterr().out
    assert "no end line (crashed or still running)" in out


def test_report_of_a_missing_file_exits_2_without_a_traceback(tmp_path, capsys):
    assert main(["report", str(tmp_path / "nope.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "no such recording" in err and "Traceback" not in err


def test_headless_replay_of_a_crashed_recording_ends_with_the_summary(recordings, tmp_path, capsys):
    data = (recordings / "simple.jsonl").read_bytes()
    cut = tmp_path / "crashed.jsonl"
    cut.write_bytes(data[: len(data) * 2 // 3])
    assert main(["replay", str(cut), "--headless"]) == 0
    out = capsys.readouterr().out
    assert "no end line (crashed or still running)" in out
    assert "measured" in out


def test_a_run_that_failed_says_why(recordings, tmp_path, capsys):
    lines = (recordings / "simple.jsonl").read_text().splitlines()
    assert json.loads(lines[-1])["kind"] == "end"
    why = "3 consecutive iterations failed"
    lines[-1] = json.dumps({"kind": "end", "t": 1006.95, "reason": "failed", "detail": why})
    failed = tmp_path / "failed.jsonl"
    failed.write_text("\n".join(lines) + "\n")
    assert main(["report", str(failed)]) == 0
    assert f"  ended: {why}" in capsys.readouterr().out.splitlines()
    assert main(["report", str(failed), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["end_reason"], data["end_detail"]) == ("failed", why)

"""An energy figure from too few sensor readings is marked invalid in every output."""

import csv
import io
import json

from synthetic_streams import (
    BATTERY_POWER,
    BATTERY_STATUS,
    POWER_INFO,
    STATUS_INFO,
    back_to_back,
    phase,
    stream,
    ticks,
    write_recording,
)

from qtop.analysis.energy import MIN_READINGS
from qtop.cli import main


def gauge_recording(tmp_path, name: str, measure_s: float, busy_w: float = 2.0) -> str:
    """A 1 s gauge sampled at 10 Hz: 0.5 W idle for a 15 s baseline, then busy_w."""
    start = 16.0

    def values(t: float) -> dict[str, float]:
        update = int(t)  # the reading of the last whole second
        level = 0.5 if update < start else busy_w + 0.01 * (update % 3)
        return {BATTERY_POWER: level, BATTERY_STATUS: -1.0}

    iterations = back_to_back(start, [0.05] * round(measure_s / 0.05))
    events = stream(
        [POWER_INFO, STATUS_INFO],
        iterations,
        ticks(0.0, start + measure_s + 2.0, 0.1, values),
        [phase(1.0, "baseline"), phase(start, "measure")],
    )
    return str(write_recording(tmp_path / name, events))


def test_report_marks_a_short_measurement_invalid_in_every_format(tmp_path, capsys):
    short = gauge_recording(tmp_path, "short.jsonl", 8.0)
    assert main(["report", short]) == 0
    text = capsys.readouterr().out
    assert "gross (NOT VALID): mean" in text
    assert (
        f"not valid: only 8 power readings in the measurement (8.0 s; the source updates "
        f"about every 1 s; at least {MIN_READINGS} are needed): measure for at least "
        f"{MIN_READINGS} s"
    ) in text

    assert main(["report", short, "--format", "markdown"]) == 0
    markdown = capsys.readouterr().out
    row = markdown.splitlines()[2]
    assert row.startswith("| short | 160 | yes |")
    assert "(invalid) |" in row
    assert "- gross (NOT VALID): mean" in markdown

    assert main(["report", short, "--format", "json"]) == 0
    energy = json.loads(capsys.readouterr().out)["analysis"]["variants"][0]["energy"]
    assert energy["valid"] is False
    assert energy["readings"] == 8
    assert energy["invalid_reasons"][0].startswith("only 8 power readings in the measurement")
    assert energy["energy_per_inference_j"] is not None

    assert main(["report", short, "--format", "csv"]) == 0
    (row,) = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert row["energy_valid"] == "False"
    assert row["energy_per_inference_mj"] != ""


def test_a_long_enough_measurement_is_valid_everywhere(tmp_path, capsys):
    long = gauge_recording(tmp_path, "long.jsonl", 30.0)
    assert main(["report", long, "--format", "csv"]) == 0
    (row,) = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert (row["energy_valid"], row["net_energy_valid"]) == ("True", "True")
    assert main(["report", long]) == 0
    text = capsys.readouterr().out
    assert "NOT VALID" not in text and "(invalid)" not in text
    assert "net of idle 0.500 W (15.0 s baseline, 15 readings)" in text


def test_compare_refuses_to_gate_on_an_invalid_energy_figure(tmp_path, capsys):
    base = gauge_recording(tmp_path, "base.jsonl", 30.0)
    new = gauge_recording(tmp_path, "new.jsonl", 8.0, busy_w=2.5)
    code = main(["compare", base, new, "--max-regression", "energy=10%"])
    err = capsys.readouterr().err
    assert code == 2
    assert "cannot check the gate energy=10.0%: the energy figure of NEW is not valid (NEW: " in (
        err
    )
    assert "only 8 power readings in the measurement" in err
    # Without the gate the comparison is shown, the invalid side marked.
    assert main(["compare", base, new]) == 0
    out = capsys.readouterr().out
    energy_row = next(line for line in out.splitlines() if "energy/inf mJ" in line)
    assert "(invalid)" in energy_row
    assert energy_row.count("(invalid)") == 1
    assert "note: energy: NEW: figure not valid" in out
    assert "not valid: energy: NEW: only 8 power readings" in out


def test_compare_still_gates_two_valid_figures(tmp_path, capsys):
    base = gauge_recording(tmp_path, "base.jsonl", 30.0)
    new = gauge_recording(tmp_path, "new.jsonl", 30.0, busy_w=2.6)
    code = main(["compare", base, new, "--max-regression", "energy=10%"])
    out = capsys.readouterr().out
    assert code == 1
    assert "FAIL  energy max +10.0%" in out
    assert "(invalid)" not in out

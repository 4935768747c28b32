import csv
import io
import json

import pytest
from synthetic_streams import (
    BATTERY_POWER,
    CDSP,
    CDSP_INFO,
    NSP,
    NSP_INFO,
    POWER_INFO,
    back_to_back,
    phase,
    stream,
    ticks,
    write_recording,
)

from qtop.cli import main
from qtop.events import Link, Marker, Sample
from qtop.export.csv import write_iterations_csv, write_samples_csv
from qtop.export.perfetto import PROCESS_ID, trace_events


def session():
    def values(t: float) -> dict[str, float | None]:
        return {
            NSP: round(40.0 + t / 3, 6),
            CDSP: 1.0 if t >= 1.0 else 0.0,
            BATTERY_POWER: None if 0.35 <= t <= 0.65 else 2.0 + t / 7,
        }

    def metrics(k: int) -> dict[str, float]:
        return {"ttft_s": 0.1 * k} if k % 2 == 0 else {}

    return stream(
        [POWER_INFO, NSP_INFO, CDSP_INFO],
        back_to_back(0.0, [0.05] * 2, phase="warmup", variant="w8a8"),
        back_to_back(0.2, [0.1] * 15, variant="w8a8", first_index=2, failed=(3,), metrics=metrics),
        ticks(0.0, 2.0, 0.1, values),
        [phase(0.0, "warmup", "w8a8"), phase(0.2, "measure", "w8a8"), phase(1.8, "done")],
        [Marker(t=1.0, label="fan off"), Link(t=1.5, state="gap", gap_from=1.2, gap_to=1.3)],
    )


def test_samples_csv_round_trips_through_the_csv_module():
    events = session()
    out = io.StringIO()
    rows = write_samples_csv(events, out)
    samples = [e for e in events if isinstance(e, Sample)]
    assert rows == len(samples) == 21
    read = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert list(read[0]) == [
        "t_s",
        "seq",
        "cooling/cdsp_state",
        "power/battery/power_W",
        "thermal/nsp-0-0-0-thermal_C",
    ]
    for row, sample in zip(read, samples, strict=True):
        assert float(row["t_s"]) == sample.t
        assert int(row["seq"]) == sample.seq
        assert float(row["thermal/nsp-0-0-0-thermal_C"]) == sample.values[NSP]
        power = sample.values[BATTERY_POWER]
        assert row["power/battery/power_W"] == ("" if power is None else repr(power))


def test_sample_columns_do_not_depend_on_discovery_order():
    forward, backward = io.StringIO(), io.StringIO()
    events = session()
    write_samples_csv(events, forward)
    channels = events[1]
    reordered = type(channels)(t=channels.t, channels=tuple(reversed(channels.channels)))
    write_samples_csv([events[0], reordered, *events[2:]], backward)
    assert forward.getvalue().splitlines()[0] == backward.getvalue().splitlines()[0]


def test_iterations_csv_has_metrics_and_failures():
    out = io.StringIO()
    assert write_iterations_csv(session(), out) == 17
    read = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert list(read[0])[-1] == "ttft_s"
    assert read[0]["phase"] == "warmup"
    assert read[3]["exit_status"] == "0"
    assert read[5]["exit_status"] == "1"
    assert float(read[2]["latency_s"]) == 0.1
    assert read[2]["ttft_s"] == "0.0"
    assert read[3]["ttft_s"] == ""


def test_perfetto_trace_is_valid_trace_event_json():
    events = session()
    text = json.dumps({"traceEvents": trace_events(events)})
    trace = json.loads(text)["traceEvents"]
    phases = {e["ph"] for e in trace}
    assert phases == {"M", "X", "C", "i"}
    for event in trace:
        assert event["pid"] == PROCESS_ID
        assert isinstance(event["name"], str)
        if event["ph"] != "M":
            assert isinstance(event["ts"], float | int)
        if event["ph"] == "X":
            assert event["dur"] >= 0
            assert isinstance(event["tid"], int)
        if event["ph"] == "C":
            (value,) = event["args"].values()
            assert isinstance(value, float | int)
    slices = [e for e in trace if e["ph"] == "X" and e["tid"] == 10]
    assert len(slices) == 17
    assert slices[2]["name"] == "measure 2"
    assert slices[2]["ts"] == pytest.approx(200000.0)
    assert slices[2]["dur"] == pytest.approx(100000.0)
    assert slices[5]["name"] == "measure 5 (failed)"
    counters = [e for e in trace if e["ph"] == "C" and e["name"] == BATTERY_POWER]
    assert len(counters) == 21 - 3  # three ticks had no reading
    assert counters[0]["args"] == {"W": 2.0}
    names = {e["args"]["name"] for e in trace if e["ph"] == "M"}
    assert names == {"qtop synthetic", "phases and markers", "link gaps", "iterations w8a8"}
    phase_slices = [e["name"] for e in trace if e["ph"] == "X" and e["tid"] == 1]
    assert phase_slices == ["warmup w8a8", "measure w8a8", "done"]


def test_export_command_writes_next_to_the_recording(tmp_path, capsys):
    path = write_recording(tmp_path / "run.jsonl", session())
    assert main(["export", str(path), "--format", "perfetto"]) == 0
    trace = json.loads((tmp_path / "run.perfetto.json").read_text())
    assert trace["displayTimeUnit"] == "ms"
    assert main(["export", str(path), "--format", "csv"]) == 0
    assert (tmp_path / "run.csv").read_text().startswith("t_s,seq,cooling/cdsp_state,")
    err = capsys.readouterr().err
    assert f"wrote 21 rows to {tmp_path / 'run.csv'}" in err


def test_export_to_stdout_and_refusal_to_overwrite(tmp_path, capsys):
    path = write_recording(tmp_path / "run.jsonl", session())
    assert main(["export", str(path), "--format", "csv", "--table", "iterations", "-o", "-"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == (
        "index,variant,phase,start_s,end_s,latency_s,exit_status,error,ttft_s"
    )
    assert main(["export", str(path), "--format", "csv", "-o", str(path)]) == 2
    assert "would overwrite the recording" in capsys.readouterr().err

"""Pacing figures of a session worked out by hand: misses, lateness, achieved rate, duty cycle.

Ten iterations arrive every 100 ms (10/s, deadline the period). The first five
take 50 ms, the last five 150 ms, and each starts at its arrival or when the
one before ends: iterations 5 to 9 miss (their responses are 150, 200, 250,
300 and 350 ms) and start 0, 50, 100, 150 and 200 ms late. The last starts at
1.10 s (9 starts in 1.10 s: 8.18/s) and ends at 1.25 s, busy for 1.0 s of it
(80%).
"""

from __future__ import annotations

import csv
import io

import pytest

from qtop.analysis.compare import compare_sessions
from qtop.analysis.pacing import live_pacing
from qtop.analysis.render import render_text
from qtop.analysis.render_compare import render_comparison_text
from qtop.analysis.session import analyze
from qtop.events import End, Event, Header, Iteration, PhaseChange, event_from_dict
from qtop.export.csv import write_iterations_csv
from qtop.record.reader import open_recording
from qtop.record.writer import RecordingWriter
from qtop.report.render import render
from qtop.report.summary import summarize_recording
from qtop.stats.model import SessionModel
from qtop.stats.pacing import PacingFold

T0 = 500.0
SERVICES = [0.05] * 5 + [0.15] * 5
LATENESS = [0.0] * 6 + [0.05, 0.10, 0.15, 0.20]
MISSED = [False] * 5 + [True] * 5


def paced_events(services: list[float] = SERVICES, rate: float = 10.0) -> list[Event]:
    header = Header(
        session_id="paced",
        profile={
            "name": "paced",
            "run": {"rate_hz": rate, "deadline_s": None, "schedule": "fixed"},
        },
    )
    events: list[Event] = [header, PhaseChange(t=T0, phase="measure", planned_iterations=10)]
    free_at = T0
    for k, service in enumerate(services):
        arrival = T0 + k / rate
        start = max(arrival, free_at)
        free_at = start + service
        events.append(
            Iteration(
                t=free_at,
                seq=k,
                index=k,
                start=start,
                end=free_at,
                latency_s=service,
                scheduled=arrival,
                lateness_s=start - arrival,
                missed=free_at - arrival > 1 / rate,
            )
        )
    events.append(End(t=free_at))
    return events


def check_figures(pacing) -> None:
    assert pacing.iterations == 10 and pacing.missed == 5
    assert pacing.miss_fraction == 0.5
    assert pacing.lateness_p50_s == pytest.approx(0.0, abs=1e-12)
    # Type-7 percentile of the ten latenesses: between 0.15 and 0.20 at 0.55.
    assert pacing.lateness_p95_s == pytest.approx(0.1775)
    assert pacing.lateness_max_s == pytest.approx(0.20)
    assert pacing.achieved_rate_hz == pytest.approx(9 / 1.10)
    assert pacing.duty_cycle == pytest.approx(1.0 / 1.25)
    assert pacing.target_rate_hz == 10.0 and pacing.deadline_s == pytest.approx(0.1)


def test_the_events_say_what_the_hand_worked_queue_says():
    events = paced_events()
    iterations = [e for e in events if isinstance(e, Iteration)]
    assert [it.missed for it in iterations] == MISSED
    assert [it.lateness_s for it in iterations] == pytest.approx(LATENESS)


def test_the_live_model_and_the_analysis_give_the_same_figures():
    events = paced_events()
    model = SessionModel()
    for event in events:
        model.apply(event)
    check_figures(live_pacing(model, "measure", ""))
    (variant,) = analyze(events).variants
    check_figures(variant.pacing)


def test_a_recording_keeps_the_figures_packed_and_through_a_keyframe(tmp_path):
    events = paced_events()
    path = tmp_path / "paced.jsonl"
    writer = RecordingWriter(path, events[0])
    for event in events[1:-1]:
        writer.write(event)
    writer.close(events[-1])
    # The ten iterations went into packed lines, and come back field for field.
    assert b'"kind":"iterations"' in path.read_bytes()
    read = list(open_recording(path).events())
    assert [e for e in read if isinstance(e, Iteration)] == [
        e for e in events if isinstance(e, Iteration)
    ]
    summary, model = summarize_recording(path)
    check_figures(live_pacing(model, "measure", ""))
    (variant,) = summary.analysis.variants
    check_figures(variant.pacing)
    restored = SessionModel()
    restored.restore(model.snapshot())
    check_figures(live_pacing(restored, "measure", ""))


def test_an_iteration_from_before_pacing_reads_as_not_paced():
    old = {"kind": "iteration", "t": 2.0, "seq": 0, "start": 1.0, "end": 2.0, "latency_s": 1.0}
    iteration = event_from_dict(old)
    assert (iteration.scheduled, iteration.lateness_s, iteration.missed) == (None, None, None)
    model = SessionModel()
    model.apply(iteration)
    assert live_pacing(model, "measure", "") is None
    assert analyze([iteration]).variants[0].pacing is None
    # A keyframe written before pacing existed restores with no pacing figures.
    state = model.snapshot()
    del state["pacing"]
    model.restore(state)
    assert model.pacing == {}


def test_adding_one_by_one_and_in_columns_agree():
    one, columns = PacingFold(), PacingFold()
    starts = [0.0, 0.1, 0.25]
    ends = [0.05, 0.25, 0.3]
    lateness = [0.0, 0.0, 0.05]
    missed = [False, True, False]
    for row in zip(starts, ends, lateness, missed, strict=True):
        one.add(*row)
    columns.extend(starts, ends, lateness, missed)
    assert one.to_dict() == columns.to_dict()
    assert PacingFold.from_dict(one.to_dict()).to_dict() == one.to_dict()
    assert PacingFold().achieved_rate_hz is None and PacingFold().duty_cycle is None


def test_report_states_the_figures_and_the_duty_cycle_with_the_thermal_summary(tmp_path):
    events = paced_events()
    text = render_text(analyze(events))
    assert (
        "paced 10/s (fixed), achieved 8.182/s · deadline 100 ms: 5 of 10 missed (50.0%) · "
        "lateness P50 0 P95 177 max 200 ms · duty cycle 80%"
    ) in text
    thermal = text.split("thermal:\n", 1)[1].splitlines()[0]
    assert thermal.strip().startswith("at a duty cycle of 80%")
    path = tmp_path / "paced.jsonl"
    writer = RecordingWriter(path, events[0])
    for event in events[1:-1]:
        writer.write(event)
    writer.close(events[-1])
    summary, _ = summarize_recording(path)
    (row,) = csv.DictReader(io.StringIO(render([summary], "csv")))
    assert float(row["miss_fraction"]) == 0.5 and row["deadline_missed"] == "5"
    assert float(row["target_rate_hz"]) == 10.0
    assert float(row["achieved_rate_hz"]) == pytest.approx(9 / 1.10)
    assert float(row["lateness_max_ms"]) == pytest.approx(200.0)
    assert float(row["duty_cycle"]) == pytest.approx(0.8)


def test_an_unpaced_recording_has_empty_pacing_cells(tmp_path):
    events = [e for e in paced_events() if not isinstance(e, Iteration)]
    events[2:2] = [Iteration(t=T0 + 1, start=T0, end=T0 + 1, latency_s=1.0)]
    path = tmp_path / "plain.jsonl"
    writer = RecordingWriter(path, events[0])
    for event in events[1:-1]:
        writer.write(event)
    writer.close(events[-1])
    summary, _ = summarize_recording(path)
    (row,) = csv.DictReader(io.StringIO(render([summary], "csv")))
    assert row["miss_fraction"] == "" and row["duty_cycle"] == ""
    assert "pacing" not in render([summary], "text")


def test_compare_shows_miss_rate_achieved_rate_and_duty_cycle():
    base = analyze(paced_events([0.05] * 10))
    new = analyze(paced_events())
    comparison = compare_sessions(base, new, base_label="base", new_label="new")
    (variant,) = comparison.variants
    assert variant.base_pacing.miss_fraction == 0.0 and variant.new_pacing.miss_fraction == 0.5
    lines = render_comparison_text(comparison).splitlines()
    misses = next(line for line in lines if line.strip().startswith("deadline misses"))
    assert misses.split()[2:] == ["0.0%", "50.0%", "+50.0", "pt", "—"]
    rate = next(line for line in lines if line.strip().startswith("achieved rate"))
    assert rate.split()[3:5] == ["10.000", "8.182"]


def test_the_iteration_table_has_the_schedule_of_a_paced_run():
    out = io.StringIO()
    write_iterations_csv(paced_events(), out)
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert [row["missed"] for row in rows] == [str(m) for m in MISSED]
    assert float(rows[7]["lateness_s"]) == pytest.approx(0.10)
    assert float(rows[3]["scheduled_s"]) == pytest.approx(T0 + 0.3)
    plain = io.StringIO()
    write_iterations_csv([Iteration(t=1.0, start=0.5, end=1.0, latency_s=0.5)], plain)
    assert "missed" not in plain.getvalue().splitlines()[0]


def test_the_live_figures_in_the_status_line_and_the_latency_pane():
    from qtop.live.progress import status_line
    from qtop.ui.panes.latency import pacing_line

    model = SessionModel()
    for event in paced_events()[:-1]:
        model.apply(event)
    assert status_line(model).endswith(
        "p50 100 ms, missed 5/10 (50.0%), lateness P95 177 ms, 8.18 of 10/s"
    )
    line = pacing_line(live_pacing(model, "measure", ""))
    assert line.plain == (
        "paced 10/s achieved 8.182/s  │  missed 5/10 (50.0%)  │  late P50 0.000 P95 177.500 "
        "max 200.000 ms  │  duty 80%"
    )

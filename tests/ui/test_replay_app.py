"""The dashboard fed by fixture recordings: what the panes show, and the replay controls."""

from __future__ import annotations

import json
import shutil

import pytest
from textual.widgets import DataTable, Static

from qtop.analysis.session import analyze
from qtop.events import Iteration, Log
from qtop.record.reader import open_recording
from qtop.record.replay import ReplaySource
from qtop.record.sidecar import sidecar_path
from qtop.report.summary import summarize_recording
from qtop.report.table import fmt
from qtop.session import Session
from qtop.ui.panes.decay import DecayPane
from qtop.ui.panes.latency import LatencyPane
from qtop.ui.panes.log import LogPane
from qtop.ui.panes.ops import OpsPane
from qtop.ui.playback import mark_label
from qtop.ui.widgets.device_log import DeviceLog
from qtop.ui.widgets.line_chart import LineChart
from tests.ui.helpers import (
    GLASSES,
    SIMPLE,
    SUSTAINED,
    make_app,
    plain,
    replayed,
    settled,
    until,
)


async def test_latency_pane_shows_the_reports_percentiles():
    summary, _ = summarize_recording(SIMPLE)
    measured = summary.variants[0].measured
    async with replayed(SIMPLE) as (app, _pilot, _source):
        pane = app.query_one(LatencyPane)
        shown = {name: value * 1000 for name, value in pane.quantiles.items()}
        assert shown == {"P50": measured.p50_ms, "P95": measured.p95_ms, "P99": measured.p99_ms}
        text = plain(app, "#latency-figures")
        for value in (measured.p50_ms, measured.p95_ms, measured.p99_ms):
            assert fmt(value, 3) in text
        assert "104.050" in text and "n 100" in text


async def test_each_variant_shows_its_own_percentiles():
    summary, _ = summarize_recording(GLASSES)
    expected = {v.variant: v.measured for v in summary.variants}
    async with replayed(GLASSES, onsets=False) as (app, pilot, _source):
        assert app.variant == "w8a16"
        await pilot.press("v")  # pinned to the first variant
        await settled(pilot)
        assert app.variant == "w8a8"
        assert app.query_one(LatencyPane).quantiles["P95"] * 1000 == expected["w8a8"].p95_ms
        await pilot.press("v")
        await settled(pilot)
        assert app.variant == "w8a16"
        assert app.query_one(LatencyPane).quantiles["P95"] * 1000 == expected["w8a16"].p95_ms
        assert "2 failed" in plain(app, "#latency-figures")


async def test_onset_and_tau_with_its_fit_quality_are_where_the_analysis_puts_them():
    thermal = analyze(open_recording(SUSTAINED).events()).variants[0].thermal
    async with replayed(SUSTAINED) as (app, _pilot, _source):
        decay = app.query_one(DecayPane)
        assert decay.onset_t == pytest.approx(thermal.onset_t, abs=1e-9)
        assert [m.t for m in app.playback.onsets] == [thermal.onset_t]
        figures = plain(app, "#decay-figures")
        assert "onset +0:43" in figures
        assert f"τ 19.6 s (R² {thermal.fit.r_squared:.2f})" in figures
        assert "sustained +39.1%" in figures and "stability 72.4% FAIL" in figures
        # The legend names the chart's lines: the rolling P50, the fit, the hottest zone.
        legend = decay.border_subtitle
        assert "P50 (10 s)" in legend and "fit" in legend and "nsp-0-0-0 C" in legend


async def test_next_mark_reaches_the_throttling_onset_and_seek_lands_on_it():
    onset = analyze(open_recording(SUSTAINED).events()).variants[0].thermal.onset_t
    done_by_onset = sum(
        1
        for e in open_recording(SUSTAINED).events()
        if isinstance(e, Iteration) and e.phase == "measure" and e.t <= onset
    )
    async with replayed(SUSTAINED) as (app, pilot, source):
        await pilot.press("space")  # pause, so the replay stays where it lands
        await pilot.press("home")
        await until(pilot, lambda: source.position_t == source.t_start)
        kinds = []
        for _ in range(10):
            before = source.position_t
            await pilot.press("right_square_bracket")
            await until(
                pilot,
                lambda before=before: (
                    source.position_t != before and app.session.model.t_last == source.position_t
                ),
            )
            # A seek stops at the last event at or before the mark.
            mark = next(m for m in app.playback.marks() if source.position_t <= m.t)
            kinds.append(mark.kind)
            if mark.kind == "onset":
                break
        assert kinds == ["phase", "phase", "onset"]
        assert source.position_t == max(
            e.t for e in open_recording(SUSTAINED).events() if e.t is not None and e.t <= onset
        )
        assert app.session.model.done("measure", "") == done_by_onset
        before = source.position_t
        await pilot.press("right_square_bracket")  # past the onset, to the user's marker
        await until(pilot, lambda: source.position_t != before)
        assert source.position_t == 5072.0


async def test_marker_marks_are_named_by_their_note():
    async with replayed(SUSTAINED, onsets=False) as (app, _pilot, _source):
        markers = [m for m in app.playback.marks() if m.kind == "marker"]
        assert [mark_label(m) for m in markers] == ["marker: fan blocked by the lab bench"]


async def test_seek_back_restores_the_model_from_a_keyframe():
    events = list(open_recording(SUSTAINED).events())
    target_t = 5100.0
    expected = sum(
        1 for e in events if isinstance(e, Iteration) and e.phase == "measure" and e.t <= target_t
    )
    async with replayed(SUSTAINED, onsets=False) as (app, pilot, source):
        assert app.session.model.done("measure", "") == 750
        await pilot.press("space")
        source.seek(target_t)
        await until(pilot, lambda: app.session.model.done("measure", "") == expected)
        last = app.session.model.last_iteration
        assert last is not None and last.t <= target_t
        assert app.stream.keyframes >= 1


async def test_seeking_back_shows_the_log_and_ops_as_they_were_and_keeps_following():
    events = list(open_recording(SUSTAINED).events())
    target_t = 5050.0
    lines_then = [e for e in events if isinstance(e, Log) and e.t is not None and e.t <= target_t]
    async with replayed(SUSTAINED, (160, 30), onsets=False) as (app, pilot, source):
        log = app.query_one(DeviceLog)
        assert log.line_count == 16 and log.follow
        assert app.query_one(DataTable).display  # the profile report came at the end
        await pilot.press("space")
        source.seek(target_t)
        await until(pilot, lambda: source.position_t is not None and source.position_t <= target_t)
        await settled(pilot)
        assert [line.text for line in log.lines] == [e.text for e in lines_then]
        assert log.follow and log.scroll_y == log.max_scroll_y
        assert app.query_one(LogPane).border_subtitle.endswith("following")
        # The report arrives at the end of the run: at the target there is none yet.
        assert not app.query_one(DataTable).display
        assert "no profiler output" in plain(app, "#ops-empty")
        await pilot.press("home")
        await until(pilot, lambda: source.position_t == source.t_start)
        await settled(pilot)
        assert log.line_count == 0


async def test_left_and_right_seek_by_five_seconds():
    async with replayed(SUSTAINED, onsets=False) as (_app, pilot, source):
        await pilot.press("space")
        await pilot.press("home")
        await until(pilot, lambda: source.position_t == source.t_start)
        start = source.position_t
        await pilot.press("right", "right")
        await until(pilot, lambda: source.position_t >= start + 9.8)
        assert start + 9.8 <= source.position_t <= start + 10.0
        await pilot.press("left")
        await until(pilot, lambda: source.position_t <= start + 5.0)
        assert start + 4.8 <= source.position_t <= start + 5.0


async def test_speed_keys_walk_the_speed_ladder_and_the_header_says_paused():
    async with replayed(SIMPLE, to_end=False, onsets=False) as (app, pilot, source):
        assert source.paused
        await until(pilot, lambda: app.session.model.header is not None and app.settled)
        assert "replay PAUSED" in plain(app, "#status")
        source.set_speed(1.0)
        await pilot.press("plus")
        assert source.speed == 2.0
        await pilot.press("minus", "minus", "minus")
        assert source.speed == 0.5
        await pilot.press("asterisk")
        assert source.speed == float("inf")
        await pilot.press("asterisk")
        assert source.speed == 1.0
        await pilot.press("space")
        assert not source.paused and "replay 1x" in plain(app, "#status")
        await pilot.press("space")
        assert source.paused and "replay PAUSED" in plain(app, "#status")


async def test_step_lets_exactly_one_timed_event_through():
    async with replayed(SIMPLE, to_end=False, onsets=False) as (app, pilot, source):
        await until(pilot, lambda: app.session.model.header is not None and app.settled)
        before = app.session.model.event_count
        await pilot.press("full_stop")
        await until(pilot, lambda: app.session.model.event_count > before and app.settled)
        assert source.paused
        # The header and channels have no pacing; a step releases the first timed event.
        assert app.session.model.event_count == before + 1


async def test_ops_pane_table_sort_and_aggregate_are_its_own_keys():
    async with replayed(SUSTAINED, onsets=False) as (app, pilot, _source):
        ops = app.query_one(OpsPane)
        assert ops.state.aggregate
        assert [line.name for line in ops.lines][:2] == ["/attn/MatMul #14", "/conv1/Conv #10"]
        assert app.query_one(DataTable).row_count == 6
        await pilot.press("o")  # the ops pane does not have the focus: nothing happens
        assert ops.state.sort == "cycles"
        await pilot.press("5", "o")  # by wait
        assert ops.lines[0].name == "/Gather #21"
        assert ops.lines[0].wait == (int(9420 * 1.08) + int(9420 * 1.16)) / 2
        await pilot.press("a")  # one execute: the first
        assert not ops.state.aggregate
        assert ops.lines[0].wait == 9420
        assert "execute 1/3 (warm-up)" in plain(app, "#ops-heading")
        await pilot.press("greater_than_sign")
        assert ops.lines[0].wait == int(9420 * 1.08)


async def test_ops_pane_says_when_there_is_no_profiler_output():
    async with replayed(SIMPLE, onsets=False) as (app, _pilot, _source):
        assert app.query_one("#ops-empty", Static).display
        assert "no profiler output in this session" in plain(app, "#ops-empty")
        assert not app.query_one(DataTable).display


async def test_thermal_power_and_header_panes():
    async with replayed(SUSTAINED, onsets=False) as (app, _pilot, _source):
        cooling = plain(app, "#thermal-cooling")
        assert "THROTTLING" in cooling and "cdsp 3/12" in cooling
        zones = plain(app, "#thermal-zones").splitlines()
        assert len(zones) == 1 + 6
        assert zones[1].startswith("nsp-0-0-0 ") and "to passive 95" in zones[1]
        assert "no trips" in zones[5]
        assert "energy/inference 1239.32 mJ" in plain(app, "#power-energy")
        assert "net 830.93 mJ" in plain(app, "#power-energy")
        # Where power comes from, each thing said once.
        assert app.query_one("#power").border_subtitle == "meter ina226 · power"
        status = plain(app, "#status")
        assert "ended: completed" in status and "5.0 Hz × 10 ch" in status


async def test_charging_and_link_gaps_are_loud_and_counted_in_words():
    async with replayed(GLASSES, onsets=False) as (app, _pilot, _source):
        assert "CHARGING" in plain(app, "#power-energy")
        status = plain(app, "#status")
        assert "1 reconnect ·" in status and "1 gap 1.6 s" in status
        assert "17 ticks missed" in status


async def test_no_power_telemetry_is_said_in_full_not_zeroed():
    async with replayed(SIMPLE, (100, 30), onsets=False) as (app, _pilot, _source):
        note = app.query_one("#power-readings", Static)
        assert plain(app, "#power-readings").startswith("no power telemetry")
        assert not app.query_one("#power-chart").display
        # The whole note, how to add a meter included, fits in the pane.
        assert note.size.height >= len(note.render_lines(note.region)) > 1


async def test_replay_bar_shows_elapsed_total_and_marks():
    recording = open_recording(SUSTAINED)
    index = recording.index()
    async with replayed(SUSTAINED) as (app, _pilot, _source):
        progress = app.query_one("#timeline").progress
        assert progress.status == "■ end"
        assert progress.elapsed_s == progress.total_s == index.t_end - index.t_start
        kinds = sorted(kind for _, kind in progress.marks)
        assert kinds == sorted(["phase"] * 4 + ["marker", "onset"])


async def test_a_marker_added_in_replay_is_saved_beside_the_recording(tmp_path):
    recording = tmp_path / "run.jsonl"
    shutil.copy(SUSTAINED, recording)
    async with replayed(recording, onsets=False) as (app, pilot, source):
        await pilot.press("space")
        source.seek(5100.0)
        await until(pilot, lambda: source.position_t is not None and source.position_t <= 5100.0)
        await settled(pilot)
        at = app.session.model.t_last
        await pilot.press("m", *"second look", "enter")
        await until(pilot, lambda: any(m.label == "second look" for m in app.playback.marks()))
    lines = [json.loads(line) for line in sidecar_path(recording).read_text().splitlines()]
    assert lines[0]["format"] == "qtop-markers" and lines[0]["session_id"] == "fixture-sustained"
    assert {k: lines[1][k] for k in ("kind", "t", "note", "origin")} == {
        "kind": "marker", "t": at, "note": "second look", "origin": "user"
    }  # fmt: skip
    assert sidecar_path(recording).stat().st_mode & 0o777 == 0o600
    # Opened again, the replay has the marker among its marks, named by its note.
    async with replayed(recording, onsets=False) as (app, _pilot, _source):
        saved = [m for m in app.playback.marks() if m.label == "second look"]
        assert [(m.t, mark_label(m)) for m in saved] == [(at, "marker: second look")]


async def test_recording_written_live_replays_with_the_same_header():
    # The UI fixture must carry its header into its keyframes (it is read after a seek).
    first = json.loads(SUSTAINED.read_text().splitlines()[0])
    assert first["device"]["hostname"] == "iq9075-evk"
    async with replayed(SUSTAINED, onsets=False) as (app, pilot, source):
        await pilot.press("space")
        source.seek(5150.0)
        await until(pilot, lambda: app.stream.keyframes >= 1 and app.settled)
        assert "device iq9075-evk (QCS9075)" in plain(app, "#identity")


async def test_following_a_recording_that_is_still_being_written(tmp_path):
    from fixtures.sessions import simple_session_events

    from qtop.events import Header
    from qtop.record.writer import RecordingWriter

    events = simple_session_events()
    header = events[0]
    assert isinstance(header, Header)
    writer = RecordingWriter(tmp_path / "growing.jsonl", header)
    for event in events[1:100]:
        writer.write(event)
    writer.sync()
    source = ReplaySource(writer.path, speed=float("inf"), follow=True)
    app = make_app(Session(source), analyze_recording=False)
    async with app.run_test(size=(160, 48)) as pilot:
        # The header and the 99 events after it.
        await until(pilot, lambda: app.session.model.event_count == 100)
        assert app.session.model.end is None
        for event in events[100:-1]:
            writer.write(event)
        writer.close(events[-1])
        await until(pilot, lambda: app.session.model.end is not None and app.settled)
        assert app.session.model.done("measure", "") == 100
        assert "104.050" in plain(app, "#latency-figures")


async def test_the_last_state_is_drawn_at_the_default_display_rate():
    source = ReplaySource(SUSTAINED, speed=float("inf"))
    app = make_app(Session(source), analyze_recording=False, display_hz=5.0,
                   analysis_period_s=1.0)  # fmt: skip
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: source.finished and app.settled)
        model = app.session.model
        hottest = model.hottest_zone()
        assert f"{hottest[1]:.1f} C" in plain(app, "#thermal-zones")
        power = app.query_one("#power-chart", LineChart).figure
        last = model.channel_series["meter/ina226/power"].view()[-1].t
        assert power.lines[0].points[-1][0] == last - (model.t_first or 0.0)
        assert app.analysis is not None and app.analysis.t_end == model.last_iteration.end

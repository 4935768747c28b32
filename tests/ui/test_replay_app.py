"""The dashboard fed by fixture recordings: what the panes show, and the replay controls."""

from __future__ import annotations

import json

import pytest
from textual.widgets import DataTable, Static

from qtop.analysis.session import analyze
from qtop.events import Iteration
from qtop.record.reader import open_recording
from qtop.report.summary import summarize_recording
from qtop.report.table import fmt
from qtop.ui.panes.decay import DecayPane
from qtop.ui.panes.latency import LatencyPane
from qtop.ui.panes.log import LogPane
from qtop.ui.panes.ops import OpsPane
from tests.ui.helpers import GLASSES, SIMPLE, SUSTAINED, replayed, settle, until


def plain(app, selector: str) -> str:
    return app.query_one(selector, Static).render().plain


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
        await settle(pilot, app)
        assert app.variant == "w8a8"
        assert app.query_one(LatencyPane).quantiles["P95"] * 1000 == expected["w8a8"].p95_ms
        await pilot.press("v")
        await settle(pilot, app)
        assert app.variant == "w8a16"
        assert app.query_one(LatencyPane).quantiles["P95"] * 1000 == expected["w8a16"].p95_ms
        assert "2 failed" in plain(app, "#latency-figures")


async def test_onset_marker_is_where_the_analysis_puts_it():
    analysis = analyze(open_recording(SUSTAINED).events())
    onset = analysis.variants[0].thermal.onset_t
    async with replayed(SUSTAINED) as (app, _pilot, _source):
        decay = app.query_one(DecayPane)
        assert decay.onset_t == pytest.approx(onset, abs=1e-9)
        assert [m.t for m in app.playback.onsets] == [onset]
        figures = plain(app, "#decay-figures")
        assert "onset +0:43" in figures and "τ 19.6 s" in figures
        assert "sustained +39.1%" in figures and "stability 72.4% FAIL" in figures


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
        await until(pilot, lambda: source.position_t is not None and source.position_t <= target_t)
        await until(pilot, lambda: app.session.model.done("measure", "") == expected)
        last = app.session.model.last_iteration
        assert last is not None and last.t <= target_t
        assert app.stream.keyframes >= 1


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


async def test_speed_keys_walk_the_speed_ladder():
    async with replayed(SIMPLE, to_end=False, onsets=False) as (_app, pilot, source):
        assert source.paused
        source.set_speed(1.0)
        await pilot.press("plus")
        assert source.speed == 2.0
        await pilot.press("minus", "minus", "minus")
        assert source.speed == 0.5
        await pilot.press("asterisk")
        assert source.speed == float("inf")
        await pilot.press("asterisk")
        assert source.speed == 1.0


async def test_step_lets_exactly_one_timed_event_through():
    async with replayed(SIMPLE, to_end=False, onsets=False) as (app, pilot, source):
        await pilot.pause(0.2)
        before = app.session.model.event_count
        await pilot.press("full_stop")
        await until(pilot, lambda: app.session.model.event_count > before)
        await pilot.pause(0.2)
        assert source.paused
        # The header and channels have no pacing; a step releases the first timed event.
        assert app.session.model.event_count == before + 1


async def test_ops_pane_table_sort_and_aggregate():
    async with replayed(SUSTAINED, onsets=False) as (app, pilot, _source):
        ops = app.query_one(OpsPane)
        assert ops.state.aggregate
        assert [line.name for line in ops.lines][:2] == ["/attn/MatMul #14", "/conv1/Conv #10"]
        assert app.query_one(DataTable).row_count == 6
        await pilot.press("o")  # by wait
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
        assert zones[1].startswith("nsp-0-0-0-thermal") and "to passive 95" in zones[1]
        assert "no trips" in zones[5]
        assert "energy/inference 1239.37 mJ" in plain(app, "#power-energy")
        assert "net 840.00 mJ" in plain(app, "#power-energy")
        status = plain(app, "#status")
        assert "ended: completed" in status and "5.0 Hz × 10 ch" in status


async def test_charging_and_link_gaps_are_loud():
    async with replayed(GLASSES, onsets=False) as (app, _pilot, _source):
        assert "CHARGING" in plain(app, "#power-energy")
        status = plain(app, "#status")
        assert "1 reconnect(s)" in status and "1 gap(s) 1.6 s" in status
        assert "17 ticks missed" in status


async def test_no_power_telemetry_is_said_not_zeroed():
    async with replayed(SIMPLE, onsets=False) as (app, _pilot, _source):
        assert plain(app, "#power-readings").startswith("no power telemetry")
        assert not app.query_one("#power-chart").display


async def test_log_follows_and_stops_when_scrolled_up():
    async with replayed(SUSTAINED, (160, 30), onsets=False) as (app, pilot, _source):
        pane = app.query_one(LogPane)
        assert pane.following
        log = app.query_one("#log-lines")
        assert log.line_count == 16
        log.scroll_home(animate=False)
        await pilot.pause(0.1)
        assert not pane.following
        assert pane.border_subtitle == "paused · f follows"
        await pilot.press("f")
        await pilot.pause(0.1)
        assert pane.following


async def test_replay_bar_shows_elapsed_total_and_marks():
    recording = open_recording(SUSTAINED)
    index = recording.index()
    async with replayed(SUSTAINED) as (app, _pilot, _source):
        progress = app.query_one("#timeline").progress
        assert progress.status == "■ end"
        assert progress.elapsed_s == progress.total_s == index.t_end - index.t_start
        kinds = sorted(kind for _, kind in progress.marks)
        assert kinds == sorted(["phase"] * 4 + ["marker", "onset"])


async def test_recording_written_live_replays_with_the_same_header(tmp_path):
    # The UI fixture must carry its header into its keyframes (it is read after a seek).
    first = json.loads(SUSTAINED.read_text().splitlines()[0])
    assert first["device"]["hostname"] == "iq9075-evk"
    async with replayed(SUSTAINED, onsets=False) as (app, pilot, source):
        await pilot.press("space")
        source.seek(5150.0)
        await until(pilot, lambda: app.stream.keyframes >= 1)
        await settle(pilot, app)
        assert "device iq9075-evk (QCS9075)" in plain(app, "#identity")


async def test_following_a_recording_that_is_still_being_written(tmp_path):
    from fixtures.sessions import simple_session_events

    from qtop.events import Header
    from qtop.record.replay import ReplaySource
    from qtop.record.writer import RecordingWriter
    from qtop.session import Session
    from qtop.ui.app import QtopApp

    events = simple_session_events()
    header = events[0]
    assert isinstance(header, Header)
    writer = RecordingWriter(tmp_path / "growing.jsonl", header)
    for event in events[1:100]:
        writer.write(event)
    writer.sync()
    source = ReplaySource(writer.path, speed=float("inf"), follow=True)
    app = QtopApp(Session(source), analyze_recording=False)
    async with app.run_test(size=(160, 48)) as pilot:
        # The header and the 99 events after it.
        await until(pilot, lambda: app.session.model.event_count == 100)
        assert app.session.model.end is None
        for event in events[100:-1]:
            writer.write(event)
        writer.close(events[-1])
        await until(pilot, lambda: app.session.model.end is not None)
        await settle(pilot, app)
        assert app.session.model.done("measure", "") == 100
        assert "104.050" in plain(app, "#latency-figures")


async def test_the_last_state_is_drawn_even_when_nothing_changes_after_it():
    from qtop.record.replay import ReplaySource
    from qtop.session import Session
    from qtop.ui.app import QtopApp
    from qtop.ui.widgets.line_chart import LineChart

    source = ReplaySource(SUSTAINED, speed=float("inf"))
    app = QtopApp(Session(source), analyze_recording=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: source.finished)
        await pilot.pause(1.5)  # no forcing: the timers alone must catch up
        model = app.session.model
        hottest = model.hottest_zone()
        assert app.query_one("#thermal").border_subtitle.endswith(f"{hottest[1]:.1f} C")
        power = app.query_one("#power-chart", LineChart).figure
        assert power.lines[0].points[-1][0] == model.channel_series["meter/ina226/power"].view()[
            -1
        ].t - (model.t_first or 0.0)

"""The dashboard fed by fixture recordings: what the panes show, and the replay controls.

Each test is one replay, taken through a story step by step (an app costs a few tenths
of a second of CPU to start, so the steps of one story share it).
"""

from __future__ import annotations

import json
import shutil

import pytest
from textual.binding import Binding
from textual.widgets import DataTable, Input, Static

from qtop.analysis.session import analyze
from qtop.events import Iteration, Log
from qtop.record.reader import open_recording
from qtop.record.replay import ReplaySource
from qtop.record.sidecar import sidecar_path
from qtop.report.summary import summarize_recording
from qtop.session import Session
from qtop.table import fmt
from qtop.ui.actions import ACTIONS, key_text, keys_text
from qtop.ui.app import PANE_KEYS, STACKED, QtopApp
from qtop.ui.panes.decay import DecayPane
from qtop.ui.panes.latency import LatencyPane
from qtop.ui.panes.log import LogPane
from qtop.ui.panes.ops import OpsPane
from qtop.ui.playback import mark_label
from qtop.ui.screens.help import HelpScreen
from qtop.ui.widgets.device_log import DeviceLog
from qtop.ui.widgets.line_chart import LineChart
from tests.ui.helpers import (
    GLASSES,
    SIMPLE,
    SUSTAINED,
    assert_screens,
    make_app,
    plain,
    replayed,
    resized,
    settled,
    until,
    until_drawn,
)


async def test_a_paused_replay_its_keys_and_then_the_reports_figures():
    summary, _ = summarize_recording(SIMPLE)
    measured = summary.variants[0].measured
    async with replayed(SIMPLE, (100, 30), to_end=False) as (app, pilot, source):
        model = app.session.model
        # Paused at the first timed event: the header says so.
        await until(pilot, lambda: model.header is not None and app.settled)
        assert source.paused and "replay PAUSED" in plain(app, "#status")
        # A step releases exactly one timed event (the header and channels have no pacing).
        before = model.event_count
        await pilot.press("full_stop")
        await until(pilot, lambda: model.event_count > before and app.settled)
        assert source.paused and model.event_count == before + 1
        # Every binding in the help, the panes' own included; what does not apply says why.
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        text = app.screen.query_one("#help-text", Static).render().plain
        for spec in ACTIONS:
            assert spec.help in text
            assert key_text(spec) in text
        for title, key, pane in PANE_KEYS:
            assert f"{title}  (when it has the focus: {key}, or click it)" in text
            for binding in pane.BINDINGS:
                assert isinstance(binding, Binding)
                assert keys_text(binding.key, binding.key_display) in text
                assert binding.tooltip in text
        assert "(live runs only)" in text and "(when recording)" in text
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)
        # The palette offers every action that applies, and runs it.
        titles = {command.title for command in app.get_system_commands(app.screen)}
        for spec in ACTIONS:
            entry = f"{spec.label} [{spec.key_display or spec.keys.split(',')[0]}]"
            assert (entry in titles) == (spec.needs not in ("recorder", "stoppable")), entry
        assert "Ops pane: Sort [o]" in titles and "Device log: Follow [f]" in titles
        source.set_speed(1.0)
        faster = next(c for c in app.get_system_commands(app.screen) if c.title == "Faster [+]")
        await faster.callback()  # what the palette runs when it is chosen
        await until(pilot, lambda: source.speed == 2.0)
        # The speed ladder.
        await pilot.press("minus", "minus", "minus")
        assert source.speed == 0.5
        await pilot.press("asterisk")
        assert source.speed == float("inf")
        await pilot.press("space")
        assert not source.paused and "replay max" in plain(app, "#status")
        await until(pilot, lambda: source.finished and app.settled)
        # At the end: the percentiles exactly as `qtop report` gives them.
        pane = app.query_one(LatencyPane)
        shown = {name: value * 1000 for name, value in pane.quantiles.items()}
        assert shown == {"P50": measured.p50_ms, "P95": measured.p95_ms, "P99": measured.p99_ms}
        text = plain(app, "#latency-figures")
        for value in (measured.p50_ms, measured.p95_ms, measured.p99_ms):
            assert fmt(value, 3) in text
        assert "n 100" in text
        # No profiler output, no power telemetry: said, in full, never zeroed.
        assert app.query_one("#ops-empty", Static).display
        assert "no profiler output in this session" in plain(app, "#ops-empty")
        assert not app.query_one(DataTable).display
        note = app.query_one("#power-readings", Static)
        assert plain(app, "#power-readings").startswith("no power telemetry")
        assert "to the device profile" in plain(app, "#power-readings")
        assert note.size.height >= len(note.render_lines(note.region)) > 1
        assert not app.query_one("#power-chart").display
        # The recording's marker is a mark named by its note.
        markers = [m for m in app.playback.marks() if m.kind == "marker"]
        assert [mark_label(m) for m in markers] == ["marker: fan switched off"]
        # Number keys focus panes; z fills the screen with the focused one.
        await pilot.press("6")
        assert app.focused is not None and app.focused.id == "log-lines"
        await pilot.press("z")
        assert app.screen.maximized is not None and app.screen.maximized.id == "log"
        await pilot.press("z")
        assert app.screen.maximized is None
        await pilot.press("1")
        assert app.focused is not None and app.focused.id == "latency"


async def test_a_sustained_replay_its_screens_its_marks_and_seeking_it(tmp_path, snapshot):
    recording = tmp_path / "run.jsonl"
    shutil.copy(SUSTAINED, recording)
    events = list(open_recording(SUSTAINED).events())
    thermal = analyze(events).variants[0].thermal
    onset = thermal.onset_t
    done_by_onset = sum(
        1 for e in events if isinstance(e, Iteration) and e.phase == "measure" and e.t <= onset
    )
    async with replayed(recording, onsets=True) as (app, pilot, source):
        model = app.session.model
        # Onset, tau with its fit quality, and the chart's legend.
        decay = app.query_one(DecayPane)
        assert decay.onset_t == pytest.approx(thermal.onset_t, abs=1e-9)
        assert [m.t for m in app.playback.onsets] == [thermal.onset_t]
        figures = plain(app, "#decay-figures")
        assert "onset +0:43" in figures
        assert f"τ 19.6 s (R² {thermal.fit.r_squared:.2f})" in figures
        assert "sustained +39.1%" in figures and "stability 72.4% FAIL" in figures
        legend = decay.border_subtitle
        assert "P50 (10 s)" in legend and "fit" in legend and "nsp-0-0-0 C" in legend
        # Thermal: throttling loud; zones closest to a trip first, without trips last.
        cooling = plain(app, "#thermal-cooling")
        assert "THROTTLING" in cooling and "cdsp 3/12" in cooling
        zones = plain(app, "#thermal-zones").splitlines()
        assert len(zones) == 1 + 6
        assert zones[1].startswith("nsp-0-0-0 ") and "4.1 to passive 95" in zones[1]
        assert zones[2].startswith("nsp-0-1-0 ") and "7.9 to passive 95" in zones[2]
        assert zones[6].startswith("gpuss-0 ") and "no trips" in zones[6]
        hottest = model.hottest_zone()
        assert f"{hottest[1]:.1f} C" in zones[1]
        # Power: energy per inference, the source named once, the chart to the last point.
        assert "energy/inference 1239.37 mJ" in plain(app, "#power-energy")
        assert "net 840.00 mJ" in plain(app, "#power-energy")
        assert app.query_one("#power").border_subtitle == "meter ina226 · power"
        power = app.query_one("#power-chart", LineChart).figure
        last = model.channel_series["meter/ina226/power"].view()[-1].t
        assert power.lines[0].points[-1][0] == last - (model.t_first or 0.0)
        assert app.analysis is not None and app.analysis.t_end == model.last_iteration.end
        status = plain(app, "#status")
        assert "ended: completed" in status and "5.0 Hz × 10 ch" in status
        # The replay bar: at the end, every mark on it.
        progress = app.query_one("#timeline").progress
        index = open_recording(SUSTAINED).index()
        assert progress.status == "■ end"
        assert progress.elapsed_s == progress.total_s == index.t_end - index.t_start
        assert sorted(kind for _, kind in progress.marks) == sorted(
            ["phase"] * 4 + ["marker", "onset"]
        )
        markers = [m for m in app.playback.marks() if m.kind == "marker"]
        assert [mark_label(m) for m in markers] == ["marker: fan blocked by the lab bench"]
        # The whole screen at 160x48, 100x30 and 80x24.
        await assert_screens(pilot, snapshot, "replay")
        # At 80x24: the latency over one pane, the others behind tabs (or 2-6).
        shown = [pane.id for pane in app.panes if pane.display and pane.id in STACKED]
        assert shown == ["thermal"] and app.query_one("#pane-tabs").display
        await pilot.press("5")
        await settled(pilot)
        shown = [pane.id for pane in app.panes if pane.display and pane.id in STACKED]
        assert shown == ["ops"] and app.query_one("#pane-tabs").active == "tab-ops"
        assert app.query_one("#ops-table").size.height >= 5  # room for its rows, not one
        await pilot.click("#tab-decay")
        await settled(pilot)
        assert app.query_one("#decay").display and not app.query_one("#ops").display
        # Too small: a notice instead, which says how large it must be.
        await pilot.resize_terminal(70, 20)
        notice = app.query_one("#too-small", Static)
        await until_drawn(pilot, lambda: notice.display and "70×20" in notice.render().plain)
        assert "at least 80×24; this one is 70×20" in notice.render().plain
        assert not app.query_one("#panes").display
        # Large again, all six on screen.
        await resized(pilot, 160, 48)
        assert all(pane.display for pane in app.panes) and not notice.display
        assert not app.query_one("#pane-tabs").display
        # The ops pane's keys are its own: they act once it has the focus.
        ops = app.query_one(OpsPane)
        assert ops.state.aggregate
        assert [line.name for line in ops.lines][:2] == ["/attn/MatMul #14", "/conv1/Conv #10"]
        assert app.query_one(DataTable).row_count == 6
        await pilot.press("1", "o")
        assert ops.state.sort == "cycles"
        await pilot.press("5", "o")  # by wait
        assert ops.lines[0].name == "/Gather #21"
        assert ops.lines[0].wait == (int(9420 * 1.08) + int(9420 * 1.16)) / 2
        await pilot.press("a")  # one execute: the first
        assert not ops.state.aggregate and ops.lines[0].wait == 9420
        assert "execute 1/3 (warm-up)" in plain(app, "#ops-heading")
        await pilot.press("greater_than_sign")
        assert ops.lines[0].wait == int(9420 * 1.08)
        log = app.query_one(DeviceLog)
        assert log.line_count == 16 and log.follow
        await pilot.press("1", "space")  # pause, so the replay stays where it lands
        # Back to an earlier time: the model from a keyframe, the log and ops as they were.
        target = 5050.0
        lines_then = [e.text for e in events if isinstance(e, Log) and e.t and e.t <= target]
        source.seek(target)
        await until(pilot, lambda: source.position_t is not None and source.position_t <= target)
        await settled(pilot)
        assert model.done("measure", "") == sum(
            1 for e in events if isinstance(e, Iteration) and e.phase == "measure" and e.t <= target
        )
        assert app.stream.keyframes >= 1
        assert [line.text for line in log.lines] == lines_then
        assert log.follow and log.scroll_y == log.max_scroll_y
        assert app.query_one(LogPane).border_subtitle.endswith("following")
        # The profile report comes at the end of the run: at the target there is none yet.
        assert not app.query_one(DataTable).display
        # The header survives the keyframe.
        assert "device iq9075-evk (QCS9075)" in plain(app, "#identity")
        # From the start, mark by mark to the throttling onset.
        await pilot.press("home")
        await until(pilot, lambda: source.position_t == source.t_start and app.settled)
        assert log.line_count == 0
        kinds = []
        for _ in range(10):
            before = source.position_t
            await pilot.press("right_square_bracket")
            await until(
                pilot,
                lambda before=before: (
                    source.position_t != before and model.t_last == source.position_t
                ),
            )
            # A seek stops at the last event at or before the mark.
            mark = next(m for m in app.playback.marks() if source.position_t <= m.t)
            kinds.append(mark.kind)
            if mark.kind == "onset":
                break
        assert kinds == ["phase", "phase", "onset"]
        assert source.position_t == max(e.t for e in events if e.t is not None and e.t <= onset)
        assert model.done("measure", "") == done_by_onset
        before = source.position_t
        await pilot.press("right_square_bracket")  # past the onset, to the user's marker
        await until(pilot, lambda: source.position_t != before)
        assert source.position_t == 5072.0
        # Five seconds either way.
        await pilot.press("right", "right")
        await until(pilot, lambda: source.position_t >= 5072.0 + 9.8)
        assert 5072.0 + 9.8 <= source.position_t <= 5072.0 + 10.0
        await pilot.press("left")
        await until(pilot, lambda: source.position_t <= 5072.0 + 5.0)
        assert 5072.0 + 4.8 <= source.position_t <= 5072.0 + 5.0
        # A marker: saved beside the recording, never in it.
        await settled(pilot)
        at = model.t_last
        await pilot.press("m")
        app.screen.query_one(Input).value = "second look"
        await pilot.press("enter")
        await until(pilot, lambda: any(m.label == "second look" for m in app.playback.marks()))
    lines = [json.loads(line) for line in sidecar_path(recording).read_text().splitlines()]
    assert lines[0]["format"] == "qtop-markers" and lines[0]["session_id"] == "fixture-sustained"
    assert {k: lines[1][k] for k in ("kind", "t", "note", "origin")} == {
        "kind": "marker", "t": at, "note": "second look", "origin": "user"
    }  # fmt: skip
    assert sidecar_path(recording).stat().st_mode & 0o777 == 0o600
    assert open_recording(recording).index().marks == open_recording(SUSTAINED).index().marks
    # Opened again, the replay has the marker among its marks, named by its note.
    async with replayed(recording, to_end=False) as (app, _pilot, _source):
        saved = [m for m in app.playback.marks() if m.label == "second look"]
        assert [(m.t, mark_label(m)) for m in saved] == [(at, "marker: second look")]


async def test_variants_charging_and_link_gaps_at_the_usual_rates():
    summary, _ = summarize_recording(GLASSES)
    expected = {v.variant: v.measured for v in summary.variants}
    source = ReplaySource(GLASSES, speed=float("inf"))
    # The app's own display, chart and analysis rates: the last state is drawn all the same.
    app = QtopApp(Session(source), analyze_recording=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: source.finished and app.settled)
        model = app.session.model
        assert app.analysis is not None and app.analysis.t_end == model.last_iteration.end
        power = app.query_one("#power-chart", LineChart).figure
        last = model.channel_series["power/battery/current"].view()[-1].t
        assert power.lines[0].points[-1][0] == last - (model.t_first or 0.0)
        assert "CHARGING" in plain(app, "#power-energy")
        status = plain(app, "#status")
        assert "1 reconnect ·" in status and "1 gap 1.6 s" in status
        assert "17 ticks missed" in status
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

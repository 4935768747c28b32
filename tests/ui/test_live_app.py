"""The dashboard on a live-like source: message-driven refreshes, markers, stop, quit, the link."""

from __future__ import annotations

import json

import pytest
from fixtures.sessions import simple_session_events
from textual.widgets import Button, Input

from qtop.analysis.session import analyze
from qtop.errors import RunFailed
from qtop.events import End, Event, Header, Keyframe, Link
from qtop.record.reader import open_recording
from qtop.record.writer import RecordingWriter
from qtop.session import Session
from qtop.ui.format import fmt_ms
from qtop.ui.messages import ModelChanged
from qtop.ui.panes.latency import LatencyPane
from qtop.ui.screens.confirm import ConfirmScreen
from qtop.ui.screens.quit import QuitScreen
from tests.ui.helpers import SUSTAINED, FedSource, make_app, plain, settled, until


def recorded_session(tmp_path, events: list[Event]) -> tuple[FedSource, Session, RecordingWriter]:
    header = events[0]
    assert isinstance(header, Header)
    source = FedSource(events[1:])
    writer = RecordingWriter(tmp_path / "live.jsonl", header)
    session = Session(source, recorder=writer)
    session.model.apply(header)
    return source, session, writer


def lines_of(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


async def test_a_burst_of_events_is_drawn_in_a_few_refreshes(tmp_path):
    events = simple_session_events()
    source, session, writer = recorded_session(tmp_path, events)
    app = make_app(session)
    async with app.run_test(size=(160, 48)) as pilot:
        source.release()
        await until(pilot, lambda: session.model.end is not None and app.settled)
        # ~230 events handed over at once: the display follows in a refresh or two.
        assert 1 <= app.generation <= 3
        assert fmt_ms(app.query_one(LatencyPane).quantiles["P95"]) == "104.050"
        assert "ended: completed" in plain(app, "#status")
    writer.close()


async def test_model_changes_the_display_cannot_keep_up_with_merge_into_one(tmp_path):
    _source, session, writer = recorded_session(tmp_path, simple_session_events())
    app = make_app(session)
    async with app.run_test(size=(160, 48)) as pilot:
        await settled(pilot)
        before = app.generation
        for _ in range(50):
            app.post_message(ModelChanged())
        await until(pilot, lambda: app.generation > before and app.settled)
        assert app.generation == before + 1
    writer.close()


async def test_the_header_has_the_eta_from_device_time(tmp_path):
    events = simple_session_events()
    source, session, writer = recorded_session(tmp_path, events)
    app = make_app(session)
    async with app.run_test(size=(160, 48)) as pilot:
        measuring = next(i for i, e in enumerate(events) if getattr(e, "phase", "") == "measure")
        source.release(measuring + 60)
        await until(pilot, lambda: source.drained and app.settled)
        model = session.model
        done = model.done("measure", "")
        assert 0 < done < 100
        elapsed = model.t_last - model.phase.started_t
        eta = round(elapsed / done * (100 - done))
        assert f"measuring {done}/100 · ETA {eta // 60}:{eta % 60:02d}" in plain(app, "#status")
    writer.close()


async def test_marker_note_is_written_to_the_recording(tmp_path):
    source, session, writer = recorded_session(tmp_path, simple_session_events())
    app = make_app(session)
    async with app.run_test(size=(160, 48)) as pilot:
        source.release(60)
        await until(pilot, lambda: source.drained and app.settled)
        await pilot.press("m")
        assert isinstance(app.screen.query_one(Input), Input)
        await pilot.press(*"fan on", "enter")
        at = session.model.t_last
        source.release()
        await until(pilot, lambda: session.model.end is not None)
    writer.close()
    markers = [e for e in lines_of(writer.path) if e["kind"] == "marker"]
    assert {"kind": "marker", "t": at, "label": "note", "note": "fan on", "origin": "user"} in [
        {k: v for k, v in m.items() if k != "host_t"} for m in markers
    ]


async def test_stop_run_asks_first(tmp_path):
    source, session, writer = recorded_session(tmp_path, simple_session_events())
    app = make_app(session)
    async with app.run_test(size=(160, 48)) as pilot:
        source.release(20)
        await until(pilot, lambda: source.drained and app.settled)
        await pilot.press("s")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")
        assert not source.stopped
        await pilot.press("s", "y")
        await until(pilot, lambda: source.stopped)
    writer.close()


async def test_recording_can_be_paused_and_resumed(tmp_path):
    source, session, writer = recorded_session(tmp_path, simple_session_events())
    app = make_app(session)
    async with app.run_test(size=(160, 48)) as pilot:
        source.release(50)
        await until(pilot, lambda: source.drained and app.settled)
        await pilot.press("r")
        assert session.recording_paused
        assert "REC PAUSED live.jsonl" in plain(app, "#status")
        written = writer.events_written
        source.release(30)
        await until(pilot, lambda: source.drained and app.settled)
        assert writer.events_written == written
        await pilot.press("r")
        assert not session.recording_paused
        source.release()
        await until(pilot, lambda: session.model.end is not None)
    assert lines_of(writer.path)[-1]["kind"] == "end"


async def test_pause_display_freezes_the_panes_but_not_the_model(tmp_path):
    source, session, writer = recorded_session(tmp_path, simple_session_events())
    app = make_app(session)
    async with app.run_test(size=(160, 48)) as pilot:
        source.release(60)
        await until(pilot, lambda: source.drained and app.settled)
        await pilot.press("space")
        frozen = dict(app.query_one(LatencyPane).quantiles)
        source.release()
        # The model went on to the end (the recording too); the panes did not move.
        await until(pilot, lambda: app.session_finished)
        assert session.model.done("measure", "") == 100
        assert app.query_one(LatencyPane).quantiles == frozen
        assert "DISPLAY PAUSED" in plain(app, "#status")
        await pilot.press("space")
        await settled(pilot)
        assert fmt_ms(app.query_one(LatencyPane).quantiles["P95"]) == "104.050"
    writer.close()


async def test_a_silent_link_is_called_stale_by_the_clock_it_is_given(tmp_path):
    now = [100.0]
    events = simple_session_events()[:60]
    source, session, writer = recorded_session(tmp_path, events)
    app = make_app(session, clock=lambda: now[0])
    async with app.run_test(size=(160, 48)) as pilot:
        source.release()
        await until(pilot, lambda: source.drained and app.settled)
        assert "link ok" in plain(app, "#status")
        now[0] += 5.0
        app.query_one("#header").post_message(ModelChanged())  # any message: the header ticks
        await until(pilot, lambda: "link stale 5 s" in plain(app, "#status"))
    writer.close()


async def test_the_link_state_comes_from_the_link_events_in_the_stream(tmp_path):
    events = simple_session_events()
    header, rest = events[0], events[1:-1]
    stream = [
        Link(state="connecting", detail="to fixture-board"),
        Link(state="connected", detail="to fixture-board"),
        *rest[:40],
        Link(t=rest[39].t, state="disconnected", detail="keepalive timed out"),
        Link(t=rest[39].t, state="reconnecting", attempt=1, detail="attempt 1 in 0.5 s"),
        Link(t=rest[39].t, state="reconnected", attempt=1, detail="resuming"),
    ]
    source, session, writer = recorded_session(tmp_path, [header, *stream])
    app = make_app(session)
    async with app.run_test(size=(160, 48)) as pilot:
        source.release(1)
        await until(pilot, lambda: source.drained and app.settled)
        assert "link CONNECTING" in plain(app, "#status")
        source.release(41)
        await until(pilot, lambda: source.drained and app.settled)
        assert "link ok" in plain(app, "#status")
        source.release(2)
        await until(pilot, lambda: source.drained and app.settled)
        assert "link RECONNECTING" in plain(app, "#status")
        source.release()
        await until(pilot, lambda: source.drained and app.settled)
        assert "link ok · 1 reconnect" in plain(app, "#status")
    writer.close()


async def test_a_live_throttling_onset_is_recorded_as_an_auto_marker(tmp_path):
    recorded = [e for e in open_recording(SUSTAINED).events() if not isinstance(e, Keyframe)]
    onset = analyze(open_recording(SUSTAINED).events()).variants[0].thermal.onset_t
    source, session, writer = recorded_session(tmp_path, recorded)
    app = make_app(session)
    async with app.run_test(size=(160, 48)) as pilot:
        # As a live run delivers it: a stretch at a time, analysed as it comes.
        for _ in range(10):
            source.release(len(recorded) // 10 + 1)
            await until(pilot, lambda: source.drained and app.settled)
        assert [m.t for m in app.playback.onsets] == [pytest.approx(onset, abs=1e-9)]
    auto = [e for e in lines_of(writer.path) if e["kind"] == "marker" and e["origin"] == "auto"]
    assert len(auto) == 1
    assert auto[0]["label"] == "throttling onset" and auto[0]["t"] == pytest.approx(onset)
    assert auto[0]["note"].startswith("throttling onset: rolling P50 above 5% over the baseline")


class FailingSource(FedSource):
    async def events(self):
        async for event in super().events():
            yield event
        raise RunFailed("lost the device: iq9075 stopped answering", "check the cable")


async def test_a_source_failure_is_shown_and_kept_for_the_command_line():
    events = [e for e in simple_session_events()[1:40] if not isinstance(e, End)]
    source = FailingSource(events)
    session = Session(source)
    app = make_app(session)
    async with app.run_test(size=(160, 48)) as pilot:
        source.release()
        await until(pilot, lambda: app.session_error is not None and app.settled)
        assert "lost the device" in plain(app, "#status")
        assert app.session_error.fix == "check the cable"


class UnreachableSource(FedSource):
    async def stop_run(self) -> None:
        raise RunFailed("cannot reach the board to stop run 7; it keeps running", "try later")


async def test_a_failed_stop_is_reported_and_the_app_keeps_running():
    source = UnreachableSource(simple_session_events()[1:])
    app = make_app(Session(source))
    told: list[str] = []
    async with app.run_test(size=(160, 48)) as pilot:
        app.notify = lambda message, **_: told.append(message)  # type: ignore[method-assign]
        source.release(10)
        await until(pilot, lambda: source.drained and app.settled)
        await pilot.press("s", "y")
        await until(pilot, lambda: any("cannot reach the board" in m for m in told))
        assert app.is_running


class DetachableSource(FedSource):
    """A device run whose stream ends with an End once it is stopped or detached from."""

    detached = False

    async def events(self):
        async for event in super().events():
            yield event
        if self.stopped:
            yield End(reason="stopped", detail="stopped from the UI")
        elif self.detached:
            yield End(reason="interrupted", detail="qtop detached")

    async def detach(self) -> None:
        self.detached = True
        self.closed = True
        self._wake.set()


async def quit_with(tmp_path, key: str, **options: object):
    events = simple_session_events()
    writer = RecordingWriter(tmp_path / "live.jsonl", events[0])
    source = DetachableSource(events[1:-1])
    session = Session(source, recorder=writer)
    session.model.apply(events[0])
    app = make_app(session, **options)
    async with app.run_test(size=(160, 48)) as pilot:
        source.release(30)
        await until(pilot, lambda: source.drained and app.settled)
        await pilot.press("q")
        assert isinstance(app.screen, QuitScreen)
        await pilot.press(key)
        await until(pilot, lambda: app.return_code is not None or not app.is_running)
    return source, writer, app


async def test_quitting_during_a_live_run_asks_and_can_stay(tmp_path):
    source = DetachableSource(simple_session_events()[1:])
    app = make_app(Session(source))
    async with app.run_test(size=(100, 30)) as pilot:
        source.release(10)
        await until(pilot, lambda: source.drained and app.settled)
        await pilot.press("q")
        screen = app.screen
        assert isinstance(screen, QuitScreen)
        # The whole explanation is on screen, wrapped, not cut.
        text = screen.query_one("#quit-text")
        assert "--stop-leftover" in text.render().plain
        assert text.size.height >= 2 and text.size.width < 76
        await pilot.press("escape")
        assert app.is_running and not source.stopped and not source.detached


async def test_quitting_can_stop_the_device_run_and_exits_0(tmp_path):
    source, writer, app = await quit_with(tmp_path, "s")
    assert source.stopped and not source.detached
    assert app.return_code == 0
    last = lines_of(writer.path)[-1]
    assert last["kind"] == "end" and last["reason"] == "stopped"


async def test_quitting_can_leave_the_device_run_going(tmp_path):
    source, writer, app = await quit_with(tmp_path, "l")
    assert source.detached and not source.stopped
    assert app.return_code == 0
    last = lines_of(writer.path)[-1]
    assert last["kind"] == "end" and last["reason"] == "interrupted"


async def test_when_the_board_goes_with_qtop_stopping_is_the_only_choice(tmp_path):
    source = DetachableSource(simple_session_events()[1:])
    app = make_app(Session(source), run_outlives_qtop=False)
    async with app.run_test(size=(160, 48)) as pilot:
        source.release(10)
        await until(pilot, lambda: source.drained and app.settled)
        await pilot.press("q")
        screen = app.screen
        assert isinstance(screen, QuitScreen)
        assert [b.id for b in screen.query(Button)] == ["stay", "stop"]
        assert "simulated board" in screen.query_one("#quit-text").render().plain
        assert "--stop-leftover" not in screen.query_one("#quit-text").render().plain
        await pilot.press("l")  # not offered: nothing happens
        assert app.screen is screen and not source.detached
        await pilot.press("s")
        await until(pilot, lambda: app.return_code is not None or not app.is_running)
    assert source.stopped and app.return_code == 0

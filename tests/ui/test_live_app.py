"""The dashboard on a live-like source: coalesced refreshes, markers, stop, recording, pause."""

from __future__ import annotations

import asyncio
import time

from fixtures.sessions import simple_session_events
from textual.widgets import Input, Static

from qtop.errors import RunFailed
from qtop.events import End, Event, Header
from qtop.record.reader import open_recording
from qtop.record.writer import RecordingWriter
from qtop.session import Session
from qtop.ui.app import QtopApp
from qtop.ui.format import fmt_ms
from qtop.ui.panes.latency import LatencyPane
from qtop.ui.screens.confirm import ConfirmScreen
from tests.ui.helpers import ScriptedSource, settle, until


def plain(app, selector: str) -> str:
    return app.query_one(selector, Static).render().plain


def recorded_session(tmp_path, events: list[Event], delay_s: float = 0.0):
    header = events[0]
    assert isinstance(header, Header)
    source = ScriptedSource(events[1:], delay_s)
    writer = RecordingWriter(tmp_path / "live.jsonl", header)
    session = Session(source, recorder=writer)
    session.model.apply(header)
    return source, session, writer


def lines_of(path) -> list[dict]:
    """Every event of the recording as its dict, in order (the index line is not an event)."""
    return [event.to_dict() for event in open_recording(path).events()]


async def test_panes_refresh_on_a_timer_not_per_event(tmp_path):
    events = simple_session_events()
    _source, session, writer = recorded_session(tmp_path, events, delay_s=0.003)
    app = QtopApp(session)
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: session.model.end is not None)
        await settle(pilot, app)
        # ~230 events over about a second: a dozen redraws, not one per event.
        assert 2 <= app.refreshes <= 40
        assert app.refreshes < len(events) / 4
        assert fmt_ms(app.query_one(LatencyPane).quantiles["P95"]) == "104.050"
        assert "ended: completed" in plain(app, "#status")
    writer.close()


async def test_marker_note_is_written_to_the_recording(tmp_path):
    events = simple_session_events()
    source, session, writer = recorded_session(tmp_path, events, delay_s=0.001)
    app = QtopApp(session)
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: session.model.done("measure", "") >= 10)
        source.release.clear()
        await pilot.press("m")
        assert isinstance(app.screen.query_one(Input), Input)
        await pilot.press(*"fan on", "enter")
        at = session.model.t_last
        source.release.set()
        await until(pilot, lambda: session.model.end is not None)
    writer.close()
    markers = [e for e in lines_of(writer.path) if e["kind"] == "marker"]
    assert {"kind": "marker", "t": at, "label": "note", "note": "fan on", "origin": "user"} in [
        {k: v for k, v in m.items() if k != "host_t"} for m in markers
    ]


async def test_stop_run_asks_first(tmp_path):
    source, session, writer = recorded_session(tmp_path, simple_session_events(), delay_s=0.002)
    app = QtopApp(session)
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: session.model.sample_count > 3)
        await pilot.press("s")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")
        assert not source.stopped
        await pilot.press("s")
        await pilot.press("y")
        await until(pilot, lambda: source.stopped)
    writer.close()


async def test_recording_can_be_paused_and_resumed(tmp_path):
    events = simple_session_events()
    source, session, writer = recorded_session(tmp_path, events, delay_s=0.001)
    app = QtopApp(session)
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: session.model.event_count >= 50)
        source.release.clear()
        await pilot.press("r")
        assert session.recording_paused
        await settle(pilot, app)
        assert "REC PAUSED live.jsonl" in plain(app, "#status")
        written = writer.events_written
        source.release.set()
        await until(pilot, lambda: session.model.event_count >= 80)
        source.release.clear()
        assert writer.events_written == written
        await pilot.press("r")
        assert not session.recording_paused
        source.release.set()
        await until(pilot, lambda: session.model.end is not None)
    assert lines_of(writer.path)[-1]["kind"] == "end"


async def test_pause_display_freezes_the_panes_but_not_the_model(tmp_path):
    events = simple_session_events()
    _source, session, writer = recorded_session(tmp_path, events, delay_s=0.001)
    app = QtopApp(session)
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: session.model.done("measure", "") >= 20)
        await pilot.press("space")
        frozen = dict(app.query_one(LatencyPane).quantiles)
        await until(pilot, lambda: session.model.end is not None)
        await pilot.pause(0.2)
        assert app.query_one(LatencyPane).quantiles == frozen
        assert "DISPLAY PAUSED" in plain(app, "#status")
        await pilot.press("space")
        await pilot.pause(0.2)
        assert fmt_ms(app.query_one(LatencyPane).quantiles["P95"]) == "104.050"
    writer.close()


async def test_a_silent_link_is_called_stale(tmp_path):
    events = simple_session_events()
    _source, session, writer = recorded_session(tmp_path, events[:60])
    app = QtopApp(session)
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: session.model.event_count >= 50)
        await pilot.pause(0.2)
        assert "link ok" in plain(app, "#status")
        app.stream.last_arrival = time.monotonic() - 5.0
        await pilot.pause(0.2)
        assert "link stale 5 s" in plain(app, "#status")
    writer.close()


class FailingSource(ScriptedSource):
    async def events(self):
        async for event in super().events():
            yield event
        raise RunFailed("lost the device: iq9075 stopped answering", "check the cable")


async def test_a_source_failure_is_shown_and_kept_for_the_command_line():
    events = [e for e in simple_session_events()[1:40] if not isinstance(e, End)]
    session = Session(FailingSource(events))
    app = QtopApp(session)
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: app.session_error is not None)
        await settle(pilot, app)
        assert "lost the device" in plain(app, "#status")
        assert app.session_error.fix == "check the cable"


class UnreachableSource(ScriptedSource):
    async def stop_run(self) -> None:
        raise RunFailed("cannot reach the board to stop run 7; it keeps running", "try later")


async def test_a_failed_stop_is_reported_and_the_app_keeps_running(tmp_path):
    events = simple_session_events()
    source = UnreachableSource(events[1:], 0.002)
    session = Session(source)
    app = QtopApp(session)
    told: list[str] = []
    app.notify = lambda message, **_: told.append(message)
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: session.model.sample_count > 3)
        await pilot.press("s", "y")
        await until(pilot, lambda: any("cannot reach the board" in m for m in told))
        assert app.is_running


class DetachableSource(ScriptedSource):
    """A device run whose stream ends with an End once it is stopped or detached from."""

    detached = False

    async def events(self):
        for event in self._events:
            await self.release.wait()
            if self.stopped or self.detached:
                break
            await asyncio.sleep(self.delay_s)
            yield event
        if self.stopped:
            yield End(reason="stopped", detail="stopped from the UI")
        elif self.detached:
            yield End(reason="interrupted", detail="qtop detached")

    async def stop_run(self) -> None:
        self.stopped = True
        self.release.set()

    async def detach(self) -> None:
        self.detached = True
        self.release.set()


async def quit_with(tmp_path, key: str):
    events = simple_session_events()
    source = DetachableSource(events[1:-1], 0.02)
    writer = RecordingWriter(tmp_path / "live.jsonl", events[0])
    session = Session(source, recorder=writer)
    session.model.apply(events[0])
    app = QtopApp(session)
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: session.model.sample_count > 3)
        await pilot.press("q")
        assert app.screen.__class__.__name__ == "QuitScreen"
        await pilot.press(key)
        await until(pilot, lambda: not app.is_running or app._exit_renderables is not None)
    return source, writer, app


async def test_quitting_during_a_live_run_asks_and_can_stay(tmp_path):
    events = simple_session_events()
    source = DetachableSource(events[1:], 0.002)
    session = Session(source)
    session.model.apply(events[0])
    app = QtopApp(session)
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: session.model.sample_count > 3)
        await pilot.press("q")
        assert app.screen.__class__.__name__ == "QuitScreen"
        await pilot.press("escape")
        await settle(pilot, app)
        assert app.is_running and not source.stopped and not source.detached


async def test_quitting_can_stop_the_device_run_and_records_why(tmp_path):
    source, writer, _app = await quit_with(tmp_path, "s")
    assert source.stopped and not source.detached
    last = lines_of(writer.path)[-1]
    assert last["kind"] == "end" and last["reason"] == "stopped"


async def test_quitting_can_leave_the_device_run_going(tmp_path):
    source, writer, _app = await quit_with(tmp_path, "l")
    assert source.detached and not source.stopped
    last = lines_of(writer.path)[-1]
    assert last["kind"] == "end" and last["reason"] == "interrupted"

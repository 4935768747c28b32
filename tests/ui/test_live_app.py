"""The dashboard on a live-like source: message-driven refreshes, markers, stop, quit, the link.

Each test is one live session, fed by the test a stretch at a time and taken through a
story (an app costs a few tenths of a second of CPU to start).
"""

from __future__ import annotations

import pytest
from fixtures.sessions import simple_session_events
from textual.widgets import Button, Input

from qtop.analysis.session import analyze
from qtop.errors import RunFailed
from qtop.events import End, Event, Header, Keyframe, Link, PhaseChange
from qtop.record.reader import open_recording
from qtop.record.writer import RecordingWriter
from qtop.session import Session
from qtop.ui.format import fmt_ms
from qtop.ui.messages import ModelChanged
from qtop.ui.panes.latency import LatencyPane
from qtop.ui.screens.confirm import ConfirmScreen
from qtop.ui.screens.quit import QuitScreen
from tests.ui.helpers import (
    SUSTAINED,
    FedSource,
    assert_screens,
    make_app,
    plain,
    resized,
    settled,
    until,
)


def recorded_session(tmp_path, events: list[Event], source_class: type[FedSource] = FedSource):
    header = events[0]
    assert isinstance(header, Header)
    source = source_class(events[1:])
    writer = RecordingWriter(tmp_path / "live.jsonl", header)
    session = Session(source, recorder=writer)
    session.model.apply(header)
    return source, session, writer


def lines_of(path) -> list[dict]:
    """Every event of the recording as its dict, in order (the index line is not an event)."""
    return [event.to_dict() for event in open_recording(path).events()]


async def test_a_live_run_from_start_to_end(tmp_path, snapshot):
    events = simple_session_events()
    source, session, writer = recorded_session(tmp_path, events)
    model = session.model
    # A frozen clock: the link is never "stale" however long a step takes on a busy machine.
    app = make_app(session, clock=lambda: 0.0)
    async with app.run_test(size=(160, 48)) as pilot:
        # A live source can be stopped, not seeked.
        titles = {command.title for command in app.get_system_commands(app.screen)}
        assert "Stop run [s]" in titles
        assert not any(title.startswith(("Faster", "Next mark", "Step")) for title in titles)
        # Sixty events at once: drawn in a refresh or two, with the ETA from device time.
        measuring = next(
            i for i, e in enumerate(events) if isinstance(e, PhaseChange) and e.phase == "measure"
        )
        source.release(measuring + 60)
        await until(pilot, lambda: source.drained and app.settled)
        assert 1 <= app.generation <= 3
        done = model.done("measure", "")
        assert 0 < done < 100
        eta = round((model.t_last - model.phase.started_t) / done * (100 - done))
        assert f"measuring {done}/100 · ETA {eta // 60}:{eta % 60:02d}" in plain(app, "#status")
        # The whole screen at 160x48, 100x30 and 80x24.
        await assert_screens(pilot, snapshot, "live")
        await resized(pilot, 160, 48)
        # Changes the display cannot keep up with merge into one in the queue.
        before = app.generation
        for _ in range(50):
            app.post_message(ModelChanged())
        await until(pilot, lambda: app.generation > before and app.settled)
        assert app.generation == before + 1
        # Recording paused: nothing written meanwhile.
        await pilot.press("r")
        assert session.recording_paused
        assert "REC PAUSED live.jsonl" in plain(app, "#status")
        written = writer.events_written
        source.release(30)
        await until(pilot, lambda: source.drained and app.settled)
        assert writer.events_written == written
        await pilot.press("r")
        assert not session.recording_paused
        # A marker with a note, at the current device time.
        await pilot.press("m")
        app.screen.query_one(Input).value = "fan on"
        await pilot.press("enter")
        at = model.t_last
        # The display paused: the model and the recording go on to the end, the panes wait.
        await pilot.press("space")
        frozen = dict(app.query_one(LatencyPane).quantiles)
        source.release()
        await until(pilot, lambda: app.session_finished)
        assert model.done("measure", "") == 100
        assert app.query_one(LatencyPane).quantiles == frozen
        assert "DISPLAY PAUSED" in plain(app, "#status")
        await pilot.press("space")
        await settled(pilot)
        assert fmt_ms(app.query_one(LatencyPane).quantiles["P95"]) == "104.050"
        assert "ended: completed" in plain(app, "#status")
    recorded = lines_of(writer.path)
    markers = [
        {k: v for k, v in e.items() if k != "host_t"} for e in recorded if e["kind"] == "marker"
    ]
    assert {
        "kind": "marker",
        "t": at,
        "label": "note",
        "note": "fan on",
        "origin": "user",
    } in markers
    assert recorded[-1]["kind"] == "end"


class FailingSource(FedSource):
    """A device that cannot be reached to stop its run, and is lost at the end."""

    async def events(self):
        async for event in super().events():
            yield event
        raise RunFailed("lost the device: iq9075 stopped answering", "check the cable")

    async def stop_run(self) -> None:
        self.stopped = True
        raise RunFailed("cannot reach the board to stop run 7; it keeps running", "try later")


async def test_the_link_comes_from_the_stream_and_silence_from_the_clock_it_is_given(tmp_path):
    now = [100.0]
    events = simple_session_events()
    header, rest = events[0], [e for e in events[1:60] if not isinstance(e, End)]
    stream = [
        Link(state="connecting", detail="to fixture-board"),
        Link(state="connected", detail="to fixture-board"),
        *rest[:40],
        Link(t=rest[39].t, state="disconnected", detail="keepalive timed out"),
        Link(t=rest[39].t, state="reconnecting", attempt=1, detail="attempt 1 in 0.5 s"),
        Link(t=rest[39].t, state="reconnected", attempt=1, detail="resuming"),
        *rest[40:],
    ]
    source, session, writer = recorded_session(tmp_path, [header, *stream], FailingSource)
    app = make_app(session, clock=lambda: now[0])
    async with app.run_test(size=(160, 48)) as pilot:
        source.release(1)
        await until(pilot, lambda: source.drained and app.settled)
        assert "link CONNECTING" in plain(app, "#status")
        source.release(41)
        await until(pilot, lambda: source.drained and app.settled)
        assert "link ok" in plain(app, "#status")
        # Quiet for five seconds of the app's clock: stale, though no event says so.
        now[0] += 5.0
        app.query_one("#header").post_message(ModelChanged())  # the header's tick
        await until(pilot, lambda: "link stale 5 s" in plain(app, "#status"))
        source.release(2)
        await until(pilot, lambda: source.drained and app.settled)
        assert "link RECONNECTING" in plain(app, "#status")
        source.release(1)
        await until(pilot, lambda: source.drained and app.settled)
        assert "link ok · 1 reconnect" in plain(app, "#status")
        # Stopping asks first; a stop that cannot reach the board is said, and the app goes on.
        await pilot.press("s")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")
        assert not source.stopped
        await pilot.press("s", "y")
        reported = "cannot reach the board to stop run 7; it keeps running"
        await until(pilot, lambda: any(reported in n.message for n in app._notifications))
        assert source.stopped and app.is_running
        # The source then fails: shown loud, and kept for the command line to print.
        source.release()
        await until(pilot, lambda: app.session_error is not None and app.settled)
        assert "lost the device" in plain(app, "#status")
        assert app.session_error.fix == "check the cable"
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


async def test_quitting_during_a_run_asks_can_stay_and_can_stop_it_exiting_0(tmp_path):
    events = simple_session_events()
    source, session, writer = recorded_session(tmp_path, events[:-1], DetachableSource)
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        source.release(30)
        await until(pilot, lambda: source.drained and app.settled)
        await pilot.press("q")
        screen = app.screen
        assert isinstance(screen, QuitScreen)
        # The whole explanation is on screen, wrapped, not cut.
        text = screen.query_one("#quit-text")
        assert "'qtop run fixture-simple --stop-leftover'" in text.render().plain
        assert text.size.height >= 2
        await pilot.press("escape")
        assert app.is_running and not source.stopped and not source.detached
        await pilot.press("q", "s")
        await until(pilot, lambda: app.return_code is not None or not app.is_running)
    assert source.stopped and not source.detached and app.return_code == 0
    last = lines_of(writer.path)[-1]
    assert last["kind"] == "end" and last["reason"] == "stopped"


async def test_quitting_can_leave_the_device_run_going(tmp_path):
    source, session, writer = recorded_session(tmp_path, simple_session_events()[:-1],
                                               DetachableSource)  # fmt: skip
    app = make_app(session)
    async with app.run_test(size=(160, 48)) as pilot:
        source.release(30)
        await until(pilot, lambda: source.drained and app.settled)
        await pilot.press("q", "l")
        await until(pilot, lambda: app.return_code is not None or not app.is_running)
    assert source.detached and not source.stopped and app.return_code == 0
    last = lines_of(writer.path)[-1]
    assert last["kind"] == "end" and last["reason"] == "interrupted"


async def test_when_the_board_goes_with_qtop_stopping_is_the_only_choice():
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

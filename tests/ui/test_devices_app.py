"""The combined view: two devices side by side, fed live-like or replayed together.

Every wait is on the app's messages (``next_message``), never on the clock.
"""

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator, Callable, Iterator, Sequence

import pytest
from textual.widgets import Static

from qtop.errors import RunFailed
from qtop.events import Event
from qtop.record.reader import open_recording
from qtop.record.replay import ReplaySource
from qtop.record.writer import RecordingWriter
from qtop.session import Session
from qtop.session_set import DeviceSession
from qtop.ui.devices.app import DevicesApp, dashboard_command
from qtop.ui.devices.column import DeviceColumn
from qtop.ui.format import fmt_ms
from qtop.ui.screens.quit import QuitScreen

from .helpers import GLASSES, SIMPLE, SUSTAINED, TEST_DISPLAY_HZ, FedSource, next_message

SIZES = ((160, 48), (100, 30))


def make_app(devices: list[DeviceSession]) -> DevicesApp:
    return DevicesApp(
        devices, display_hz=TEST_DISPLAY_HZ, chart_period_s=0.0, analysis_period_s=0.0
    )


async def until(app: DevicesApp, condition: Callable[[], object]) -> None:
    while not condition():
        await next_message(app)  # type: ignore[arg-type]


def text(app: DevicesApp, index: int, selector: str) -> str:
    column = app.query_one(f"#device-{index}", DeviceColumn)
    return column.query_one(selector, Static).render().plain  # type: ignore[union-attr]


def fed(path) -> FedSource:
    return FedSource(list(open_recording(path).events()))


class FailingSource(FedSource):
    """A live-like source whose link is lost for good after its events."""

    async def events(self) -> AsyncIterator[Event]:
        async for event in super().events():
            yield event
        raise RunFailed("board-b: the link dropped and did not come back", "check the board")


@pytest.mark.parametrize("size", SIZES)
async def test_two_devices_side_by_side_each_from_its_own_session(size):
    evk, glasses = fed(SIMPLE), fed(GLASSES)
    devices = [DeviceSession("evk", Session(evk)), DeviceSession("glasses", Session(glasses))]
    app = make_app(devices)
    async with app.run_test(size=size):
        # Only the glasses move first: the EVK's column waits, and says so.
        glasses.release(400)
        await until(app, lambda: glasses.drained and app.settled)
        assert text(app, 0, "#device-latency-figures") == "no measured iterations yet"
        assert text(app, 1, "#device-latency-figures").startswith("P50 ")
        evk.release()
        glasses.release()
        await until(app, lambda: evk.drained and glasses.drained and app.settled)
        for index, device in enumerate(devices):
            model = device.session.model
            stats = model.latency_stats("measure", model.variants[-1] if model.variants else "")
            figures = text(app, index, "#device-latency-figures")
            assert f"P50 {fmt_ms(stats.quantile(0.5))}" in figures
            assert f"P99 {fmt_ms(stats.quantile(0.99))}" in figures
            assert text(app, index, "#device-status").startswith("ended: completed")
        # The glasses' link history is theirs alone.
        link = text(app, 1, "#device-status").splitlines()[1]
        assert link == "link ok · 1 reconnect · 1 gap 1.6 s"
        assert text(app, 0, "#device-status").splitlines()[1] == "link ok"
        # Every figure whole in a column's width (only a file name may be cut).
        for index in (0, 1):
            width = app.query_one(f"#device-{index}", DeviceColumn).content_region.width
            lines = text(app, index, "#device-status").splitlines()[:2]
            for selector in ("#device-latency-figures", "#device-power", "#device-thermal"):
                lines += text(app, index, selector).splitlines()
            assert all(len(line) <= width for line in lines), (width, lines)
        # Power where the device has it; the hottest zone and cooling state of each.
        assert text(app, 0, "#device-power") == "no power telemetry"
        assert text(app, 1, "#device-power").startswith("power ")
        assert text(app, 0, "#device-thermal").startswith("hottest nsp-0-0-0 46.9 °C")
        assert "THROTTLING" in text(app, 0, "#device-thermal")
        assert "no cooling devices" in text(app, 1, "#device-thermal")
        # Side by side at this size: the two columns share the width, each fully visible.
        left, right = (app.query_one(f"#device-{i}", DeviceColumn).region for i in (0, 1))
        assert left.y == right.y and left.right <= right.x
        assert right.right <= size[0] and left.height == right.height
        assert "2 devices side by side" in app.query_one("#devices-title", Static).render().plain


async def test_a_device_that_fails_shows_its_error_and_the_other_goes_on():
    failing = FailingSource(list(open_recording(GLASSES).events())[:50])
    steady = fed(SIMPLE)
    devices = [
        DeviceSession("board-b", Session(failing)),
        DeviceSession("evk", Session(steady)),
        DeviceSession("phone", None, "phone: nothing answers on 10.0.0.9:22\n  fix: check it"),
    ]
    app = make_app(devices)
    async with app.run_test(size=(160, 48)):
        failing.release()
        await until(app, lambda: app.slots[0].finished)
        assert text(app, 0, "#device-status").endswith(
            "stopped: board-b: the link dropped and did not come back"
        )
        assert devices[0].error is not None and "check the board" in devices[0].error
        steady.release()
        await until(app, lambda: steady.drained and app.slots[1].finished and app.settled)
        assert text(app, 1, "#device-status").startswith("ended: completed")
        assert (
            text(app, 2, "#device-status") == "did not start: phone: nothing answers on 10.0.0.9:22"
        )


async def test_quitting_stops_every_running_device_after_asking():
    first, second = fed(SIMPLE), fed(GLASSES)
    devices = [DeviceSession("a", Session(first)), DeviceSession("b", Session(second))]
    app = make_app(devices)
    async with app.run_test(size=(160, 48)) as pilot:
        first.release(10)
        second.release(10)
        await until(app, lambda: first.drained and second.drained and app.settled)
        await pilot.press("q")
        await until(app, lambda: isinstance(app.screen, QuitScreen))
        quit_text = app.screen.query_one("#quit-text", Static).render().plain
        assert "The runs on a, b keep their NPUs busy" in quit_text
        await pilot.press("s")
        await until(app, lambda: first.stopped and second.stopped)
    assert app.return_code == 0


async def test_a_set_of_recordings_replays_together_aligned_on_each_start():
    sources = [ReplaySource(path, speed=float("inf")) for path in (SUSTAINED, GLASSES)]
    devices = [DeviceSession(f"r{i}", Session(s)) for i, s in enumerate(sources)]
    app = make_app(devices)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(app, lambda: all(s.finished for s in sources) and app.settled)
        title = app.query_one("#devices-title", Static).render().plain
        assert title.startswith("replay · ")
        assert "2 recordings, aligned on each recording's own start" in title
        for index, source in enumerate(sources):
            assert text(app, index, "#device-status").startswith("ended: completed")
            assert source.position_t == source.t_end
        # Pause and seek act on both: each lands the same offset after its own start.
        await pilot.press("space")
        assert all(source.paused for source in sources)
        assert app.title_text().startswith("replay · paused · +")
        assert app.replay is not None
        app.replay.seek_offset(20.0)

        def offsets() -> list[float]:
            return [s.position_t - s.t_start for s in sources if s.position_t is not None]

        # Each stops at its last event at or before the offset, a sampling step from it at
        # most (the wait is the check: it ends only when both are there).
        await until(app, lambda: all(19.0 <= o <= 20.0 for o in offsets()) and app.settled)
        assert len(offsets()) == 2
        await pilot.press("home")
        await until(
            app,
            lambda: all(
                s.position_t is not None and s.position_t <= s.t_start + 1 for s in sources
            ),
        )


class HandOverRecorded(DevicesApp):
    """Records what would be given the terminal instead of running it."""

    handed: list[list[str]]

    async def hand_over(self, command: Sequence[str]) -> None:
        self.handed = [*getattr(self, "handed", []), list(command)]
        # What the user sees in the meantime: the combined replay is held where it is.
        assert self.replay is None or self.replay.paused


async def test_a_device_s_full_dashboard_opens_on_its_recording_from_its_key_or_column(tmp_path):
    live_path = tmp_path / "live.jsonl"
    events = list(open_recording(SIMPLE).events())
    live = fed(SIMPLE)
    writer = RecordingWriter(live_path, events[0])
    devices = [
        DeviceSession("evk", Session(live, recorder=writer)),
        DeviceSession("phone", None, "phone: nothing answers"),
    ]
    app = HandOverRecorded(devices, display_hz=TEST_DISPLAY_HZ, chart_period_s=0.0,
                           analysis_period_s=0.0)  # fmt: skip
    async with app.run_test(size=(160, 48)) as pilot:
        live.release(50)
        await until(app, lambda: live.drained and app.settled)
        # The first column has the focus: enter opens it; a live one is followed.
        await pilot.press("enter")
        assert app.handed == [dashboard_command(live_path, live=True)]
        assert app.handed[0][1:] == [
            "-m", "qtop", "replay", str(live_path), "--follow", "--speed", "max"
        ]  # fmt: skip
        # A device that never started has nothing to open, and says so; a digit past the
        # devices there are does nothing.
        await pilot.press("2")
        await pilot.press("9")
        assert len(app.handed) == 1
        assert any("phone: no recording to open" in str(n.message) for n in app._notifications)
    writer.close()


async def test_from_a_replayed_set_the_dashboard_opens_one_recording_and_the_set_waits():
    sources = [ReplaySource(path, speed=1.0) for path in (SUSTAINED, GLASSES)]
    devices = [DeviceSession(f"r{i}", Session(s)) for i, s in enumerate(sources)]
    app = HandOverRecorded(devices, display_hz=TEST_DISPLAY_HZ, chart_period_s=0.0,
                           analysis_period_s=0.0)  # fmt: skip
    async with app.run_test(size=(160, 48)) as pilot:
        assert app.replay is not None and not app.replay.paused
        await pilot.press("2")
        assert app.handed == [dashboard_command(GLASSES, live=False)]
        assert "--follow" not in app.handed[0]
        # Playing again afterwards, as it was; one paused by the user stays paused.
        assert not app.replay.paused
        await pilot.press("space")
        await pilot.press("1")
        assert app.handed[-1] == dashboard_command(SUSTAINED, live=False)
        assert app.replay.paused


async def test_where_the_terminal_cannot_be_handed_over_the_command_is_shown():
    sources = [ReplaySource(path, speed=1.0) for path in (SUSTAINED, GLASSES)]
    devices = [DeviceSession(f"r{i}", Session(s)) for i, s in enumerate(sources)]
    app = make_app(devices)
    async with app.run_test(size=(160, 48)) as pilot:
        # The test's headless driver, like Textual's web driver, cannot be suspended.
        await pilot.press("1")
        shown = [str(n.message) for n in app._notifications]
        assert any("in another one, run: " in text and str(SUSTAINED) in text for text in shown)
        assert app.replay is not None and not app.replay.paused


class SuspendsInPlace(DevicesApp):
    @contextlib.contextmanager
    def suspend(self) -> Iterator[None]:
        # The headless driver cannot give the terminal away; what is under test is that
        # the sessions go on while the other program runs.
        yield


async def test_every_session_goes_on_while_the_terminal_is_handed_over(tmp_path):
    first, second = fed(SIMPLE), fed(GLASSES)
    devices = [DeviceSession("a", Session(first)), DeviceSession("b", Session(second))]
    app = SuspendsInPlace(devices, display_hz=TEST_DISPLAY_HZ, chart_period_s=0.0,
                          analysis_period_s=0.0)  # fmt: skip
    done = tmp_path / "done"
    waits_for_done = [
        sys.executable, "-c",
        "import os, sys, time\nwhile not os.path.exists(sys.argv[1]): time.sleep(0.01)",
        str(done),
    ]  # fmt: skip
    async with app.run_test(size=(160, 48)):
        handed_over = asyncio.create_task(app.hand_over(waits_for_done))
        first.release()
        second.release()
        await until(app, lambda: first.drained and second.drained and app.settled)
        # Both devices' every event arrived while the other program still had the terminal.
        assert not handed_over.done()
        assert all(slot.finished for slot in app.slots)
        done.touch()
        await asyncio.wait_for(handed_over, 60)

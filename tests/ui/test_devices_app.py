"""The combined view: two devices side by side, fed live-like or replayed together.

Every wait is on the app's messages (``next_message``), never on the clock.
"""

from collections.abc import AsyncIterator, Callable

import pytest
from textual.widgets import Static

from qtop.errors import RunFailed
from qtop.events import Event
from qtop.record.reader import open_recording
from qtop.record.replay import ReplaySource
from qtop.session import Session
from qtop.session_set import DeviceSession
from qtop.ui.devices.app import DevicesApp
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

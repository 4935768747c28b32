"""The device log: it follows a flood of lines to the last one, with times, and stays usable."""

from __future__ import annotations

from qtop.events import ChannelInfo, Channels, Iteration, Log, PhaseChange, Sample
from qtop.session import Session
from qtop.stats.model import LOG_LINES_KEPT
from qtop.ui.panes.log import LogPane
from qtop.ui.widgets.device_log import CUT, DeviceLog
from tests.ui.helpers import FedSource, make_app, until

T0 = 500.0
HOST_OFFSET = 1_800_000_000.0  # host wall clock minus device clock in these sessions


def flood(lines: int, per_second: float = 300.0) -> list:
    """A run printing ``lines`` lines, each stamped like an agent line (device and host time)."""
    events: list = [
        Channels(t=T0, channels=(ChannelInfo(id="thermal/cpu", kind="temperature", unit="C"),)),
        PhaseChange(t=T0, phase="measure", planned_iterations=1),
    ]
    for n in range(lines):
        t = T0 + n / per_second
        events.append(Log(t=t, host_t=t + HOST_OFFSET, seq=n, stream="agent", text=f"line {n}"))
    return events


async def test_thirty_thousand_lines_end_with_the_last_one_shown_with_its_time():
    events = flood(30_000)
    source = FedSource(events)
    app = make_app(Session(source))
    async with app.run_test(size=(160, 48)) as pilot:
        log = app.query_one(DeviceLog)
        # As they come on a busy device: in bursts, each one shown before the next.
        while source.delivered < 28_000:
            source.release(1000)
            await until(pilot, lambda: source.drained and app.settled)
            assert log.follow and log.scroll_y == log.max_scroll_y
        # Scrolled up, it stops following and keeps the lines in view as old ones go.
        await pilot.press("6", "pageup")
        assert not log.follow
        assert app.query_one(LogPane).border_subtitle == "paused · f follows"
        top = log.lines[round(log.scroll_y)].text
        source.release(500)
        await until(pilot, lambda: source.drained and app.settled)
        assert log.lines[round(log.scroll_y)].text == top
        await pilot.press("f")
        assert log.follow and log.scroll_y == log.max_scroll_y
        await pilot.press("f")
        assert not log.follow
        await pilot.press("end")  # back to the end: following again
        assert log.follow
        while source.delivered < len(events):
            source.release(1000)
            await until(pilot, lambda: source.drained and app.settled)
        assert log.line_count == LOG_LINES_KEPT
        last = log.lines[-1]
        assert last.text == "line 29999"
        # 29,999 lines at 300 a second after the first: 1:40 into the session.
        assert (last.when, last.tag) == ("1:40", "agt")
        # What is drawn at the bottom of the widget is that last line.
        bottom = log.render_line(log.size.height - 1).text
        assert bottom.split() == ["1:40", "agt", "line", "29999"]
        assert app.query_one(LogPane).border_subtitle == "following"


async def test_command_output_is_placed_on_the_device_clock_and_long_lines_end_in_an_ellipsis():
    long_text = "x" * 400
    events = [
        Channels(t=T0, channels=(ChannelInfo(id="thermal/cpu", kind="temperature", unit="C"),)),
        PhaseChange(t=T0, phase="measure", planned_iterations=10),
        Sample(t=T0, host_t=T0 + HOST_OFFSET, seq=0, values={"thermal/cpu": 40.0}),
        Iteration(
            t=T0 + 1.0, host_t=T0 + 1.0 + HOST_OFFSET, start=T0 + 0.5, end=T0 + 1.0, latency_s=0.5
        ),
        # The command's stdout carries no device time, only when the host got it.
        Log(host_t=T0 + 65.2 + HOST_OFFSET, seq=1, stream="stdout", text="Finished graph"),
        Log(host_t=T0 + 66.0 + HOST_OFFSET, seq=2, stream="stderr", text=long_text),
    ]
    source = FedSource(events)
    app = make_app(Session(source))
    async with app.run_test(size=(100, 30)) as pilot:
        source.release()
        await until(pilot, lambda: source.drained and app.settled)
        log = app.query_one(DeviceLog)
        first, second = log.lines
        assert (first.when, first.tag, first.text) == ("1:05", "out", "Finished graph")
        assert (second.when, second.tag, second.loud) == ("1:06", "ERR", True)
        drawn = log.render_line(1).text
        assert len(drawn) == log.size.width and drawn.rstrip().endswith(CUT)

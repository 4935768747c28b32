"""The header says what the probe found missing, for the whole session."""

from __future__ import annotations

from fixtures.sessions import simple_session_events
from textual.widgets import Static

from qtop.events import End, Log
from qtop.session import Session
from qtop.stats.model import PROBE_STREAM
from tests.ui.helpers import FedSource, make_app, settled, until

NO_POWER = (
    "device.power_supply: no power source: no supply of type Battery in "
    "/sys/class/power_supply (found: usb (USB)) and no power_meter; energy per inference "
    "cannot be measured; fix: add a power_meter"
)
NO_COOLING = "device.cooling_devices: no cooling device in /sys/class/thermal; fix: ..."


async def test_the_first_probe_warning_stays_in_the_header_with_a_count_of_the_rest():
    events = simple_session_events()
    warnings = [
        Log(seq=0, stream=PROBE_STREAM, level="warning", text=NO_POWER),
        Log(seq=1, stream=PROBE_STREAM, level="warning", text=NO_COOLING),
    ]
    events[2:2] = warnings
    header = events[0]
    source = FedSource(events[1:])
    source.release()
    session = Session(source)
    session.model.apply(header)
    app = make_app(session)
    async with app.run_test(size=(240, 48)) as pilot:
        await until(pilot, lambda: session.model.end is not None)
        await settled(pilot)
        status = app.query_one("#status", Static).render().plain
    assert session.model.probe_warnings == [NO_POWER, NO_COOLING]
    problem = NO_POWER.split("; fix: ")[0]
    assert f"⚠ {problem} (+1 more), fix in log" in status


async def test_a_run_that_failed_says_why_in_the_header():
    events = simple_session_events()
    end = events[-1]
    assert isinstance(end, End)
    why = "3 consecutive iterations failed"
    events[-1] = End(t=end.t, host_t=end.host_t, reason="failed", detail=why, counts=end.counts)
    source = FedSource(events[1:])
    source.release()
    session = Session(source)
    session.model.apply(events[0])
    app = make_app(session)
    async with app.run_test(size=(200, 48)) as pilot:
        await until(pilot, lambda: session.model.end is not None)
        await settled(pilot)
        status = app.query_one("#status", Static).render().plain
    assert status.startswith(" ended: failed │ ")
    assert status.rstrip().endswith(f"│ {why}")

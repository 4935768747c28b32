"""Device text is drawn as plain text: no markup error, no click action, no escape on screen."""

from __future__ import annotations

from textual.widgets import DataTable, Static

from qtop.record.replay import ReplaySource
from qtop.record.writer import RecordingWriter
from qtop.session import Session
from qtop.ui.app import QtopApp
from qtop.ui.widgets.device_log import DeviceLog
from tests.ui.helpers import FedSource, make_app, plain, settled, until, until_drawn
from tests.ui.hostile import CLICK, RAW_CONTROL, ZONES, hostile_events


def everything_drawn(app: QtopApp) -> list[str]:
    """The text of every Static, log line, table cell, border title and notification."""
    texts = [widget.render().plain for widget in app.query(Static)]  # type: ignore[union-attr]
    log = app.query_one(DeviceLog)
    texts += [log.render_line(y).text for y in range(log.size.height)]
    table = app.query_one(DataTable)
    texts += [str(cell) for row in range(table.row_count) for cell in table.get_row_at(row)]
    for widget in app.query("*"):
        texts += [widget.border_title or "", widget.border_subtitle or ""]
    texts += [n.message + n.title for n in app._notifications]
    return [line for text in texts for line in text.splitlines()]


def assert_plain_and_literal(app: QtopApp) -> None:
    drawn = everything_drawn(app)
    raw = [text for text in drawn if RAW_CONTROL.search(text)]
    assert raw == [], raw
    zones = plain(app, "#thermal-zones")
    for name in ZONES.values():
        assert name in zones, name
    assert "[red]cdsp[/red]" in plain(app, "#thermal-cooling")
    assert "device board (" in plain(app, "#identity")
    assert "[@click=app.quit]SoC[/]" in plain(app, "#identity")
    assert "[bold]boom[/bold]" in plain(app, "#latency-warnings")
    ops = app.query_one(DataTable)
    assert str(ops.get_row_at(0)[0]).startswith(f"/{CLICK}") or any(
        str(ops.get_row_at(row)[0]).startswith(f"/{CLICK}") for row in range(ops.row_count)
    )


async def test_a_hostile_recording_replays_as_plain_text(tmp_path):
    events = hostile_events()
    writer = RecordingWriter(tmp_path / "hostile.jsonl", events[0])
    for event in events[1:-1]:
        writer.write(event)
    writer.close(events[-1])
    source = ReplaySource(writer.path, speed=float("inf"))
    app = make_app(Session(source), analyze_recording=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: source.finished and app.settled)
        assert_plain_and_literal(app)
        # The marker's note names its mark, as text.
        assert any(CLICK in m.label for m in app.playback.marks())
        # A click on the zone named like a click action does nothing but focus.
        zones = app.query_one("#thermal-zones", Static)
        row = next(i for i, line in enumerate(plain(app, "#thermal-zones").splitlines())
                   if line.startswith("[@click"))  # fmt: skip
        await pilot.click("#thermal-zones", offset=(2, row))
        assert app.is_running and zones.is_mounted
        # Small, with the ops pane in front (behind a tab at 80x24): plain all the same.
        await pilot.resize_terminal(80, 24)
        await until_drawn(pilot, lambda: app.query_one("#pane-tabs").display)
        await pilot.press("5")
        await settled(pilot)
        assert_plain_and_literal(app)


async def test_a_hostile_live_run_is_drawn_as_plain_text_and_notified_plainly():
    events = hostile_events()
    source = FedSource(events[1:])
    session = Session(source)
    session.model.apply(events[0])
    app = make_app(session)
    async with app.run_test(size=(160, 48)) as pilot:
        source.release()
        await until(pilot, lambda: app.session_finished and app.settled)
        app.notify(f"the device said {CLICK}\x1b]52;c;eA==\x07", title="[b]t[/b]")
        said = f"the device said {CLICK}"
        await until(pilot, lambda: said in [n.message for n in app._notifications])
        assert_plain_and_literal(app)

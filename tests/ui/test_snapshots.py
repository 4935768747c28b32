"""The whole screen, live and replayed, at 80x24, 100x30 and 160x48, against stored SVG snapshots.

pytest-textual-snapshot compares each screen with the file under __snapshots__;
after a deliberate change, run ``pytest tests/ui/test_snapshots.py --snapshot-update``
and look at the new files (``rsvg-convert FILE.svg -o FILE.png``) before committing.
A failure writes an HTML report with both screens side by side.
"""

from __future__ import annotations

import pytest
from fixtures.sessions import simple_session_events
from textual.pilot import Pilot

from qtop.events import Header, PhaseChange
from qtop.record.replay import ReplaySource
from qtop.session import Session
from tests.ui.helpers import GLASSES, SUSTAINED, FedSource, make_app, until

SIZES = [(80, 24), (100, 30), (160, 48)]
SIZE_IDS = ["80x24", "100x30", "160x48"]


def replay_app(path):
    source = ReplaySource(path, speed=float("inf"))
    app = make_app(Session(source), analyze_recording=True, clock=lambda: 0.0)

    async def at_the_end(pilot: Pilot) -> None:
        await until(pilot, lambda: source.finished and app.onsets_searched and app.settled)
        app.clear_notifications()

    return app, at_the_end


def live_app():
    """A live run caught measuring, 60 of its 100 iterations done, recording off."""
    events = simple_session_events()
    header = events[0]
    assert isinstance(header, Header)
    measuring = next(
        i for i, e in enumerate(events) if isinstance(e, PhaseChange) and e.phase == "measure"
    )
    source = FedSource(events[1 : measuring + 60])
    session = Session(source)
    session.model.apply(header)
    # A frozen clock: the link is never "stale" however long the screenshot takes.
    app = make_app(session, clock=lambda: 0.0)

    async def measuring_now(pilot: Pilot) -> None:
        source.release()
        await until(pilot, lambda: source.drained and app.settled)
        app.clear_notifications()

    return app, measuring_now


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_live_run(snap_compare, size):
    app, ready = live_app()
    assert snap_compare(app, terminal_size=size, run_before=ready)


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_replay_of_a_sustained_run_with_onset_and_ops(snap_compare, size):
    app, ready = replay_app(SUSTAINED)
    assert snap_compare(app, terminal_size=size, run_before=ready)


def test_replay_with_charging_and_gaps_and_the_log_in_front_at_80x24(snap_compare):
    app, at_the_end = replay_app(GLASSES)

    async def log_in_front(pilot: Pilot) -> None:
        await at_the_end(pilot)
        await pilot.press("6")

    assert snap_compare(app, terminal_size=(80, 24), run_before=log_in_front)


def test_a_terminal_too_small_says_so(snap_compare):
    app, ready = replay_app(SUSTAINED)
    assert snap_compare(app, terminal_size=(70, 20), run_before=ready)


def test_help_screen(snap_compare):
    app, ready = replay_app(SUSTAINED)

    async def help_open(pilot: Pilot) -> None:
        await ready(pilot)
        await pilot.press("question_mark")

    assert snap_compare(app, terminal_size=(100, 48), run_before=help_open)

"""The whole screen at fixed sizes, from fixture recordings, against stored SVG snapshots."""

from __future__ import annotations

from tests.ui.helpers import GLASSES, SIMPLE, SUSTAINED, replayed, settle
from tests.ui.snapshots import assert_snapshot


async def test_simple_recording_at_its_end():
    async with replayed(SIMPLE, (120, 36)) as (app, _pilot, _source):
        assert_snapshot(app, "simple_120x36")


async def test_sustained_run_with_onset_and_ops():
    async with replayed(SUSTAINED, (160, 48)) as (app, _pilot, _source):
        assert_snapshot(app, "sustained_160x48")


async def test_glasses_with_charging_and_gaps_at_100x30():
    async with replayed(GLASSES, (100, 30)) as (app, _pilot, _source):
        assert_snapshot(app, "glasses_100x30")


async def test_help_screen():
    async with replayed(SIMPLE, (100, 48), to_end=False, onsets=False) as (app, pilot, _source):
        await settle(pilot, app)
        await pilot.press("question_mark")
        await pilot.pause()
        assert_snapshot(app, "help_100x48")

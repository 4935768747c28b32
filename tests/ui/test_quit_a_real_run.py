"""Quitting the UI of a real run (this machine as the device): stopped on request, exit code 0."""

from __future__ import annotations

import io

from qtop.device.plan import RunOptions
from qtop.live.runner import LiveOptions, LiveRun
from qtop.live.source import LiveSource
from qtop.record.reader import open_recording
from qtop.session import Session
from qtop.transport.local import LocalTransport
from qtop.ui.app import QtopApp
from qtop.ui.screens.quit import QuitScreen
from tests.link.helpers import make_sysfs, profile_for
from tests.ui.helpers import until


async def test_stop_it_and_quit_stops_the_run_and_exits_0(tmp_path):
    profile = profile_for(
        make_sysfs(tmp_path / "sys"), tmp_path / "spool",
        "{command: 'sleep 0.05', warmup: 0, iterations: 100000}",
    )  # fmt: skip
    source = LiveSource(profile, LocalTransport(), run_options=RunOptions(calibrations=3))
    recording = tmp_path / "run.jsonl"
    options = LiveOptions(profile_ref="linktest", record=str(recording), headless=False)
    seen: dict[str, object] = {}

    async def open_ui(session: Session) -> bool:
        app = QtopApp(session, display_hz=20.0, analysis_period_s=0.0)
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: session.model.done("measure", "") >= 3)
            await pilot.press("q")
            assert isinstance(app.screen, QuitScreen)
            await pilot.press("s")
            await until(pilot, lambda: app.return_code is not None)
            seen["app"] = app.return_code
        return True

    runner = LiveRun(source, options, out=io.StringIO(), interactive=False)
    code = await runner.run(open_ui)
    end = list(open_recording(recording).events())[-1].to_dict()
    assert seen["app"] == 0
    assert end["kind"] == "end" and end["reason"] == "stopped"
    assert code == 0

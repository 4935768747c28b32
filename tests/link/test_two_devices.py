"""Two simulated boards at once over SSH (an EVK and glasses), as ``qtop run A B`` runs them.

The link to one of them drops in the middle of its run: both recordings are complete
(contiguous sequence numbers, nothing lost, nothing repeated), and the other device
never saw a link event beyond its first connection.
"""

import asyncio
import io
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from qtop.cli import main
from qtop.device.plan import RunOptions
from qtop.events import Iteration, Sample
from qtop.live.backoff import Backoff
from qtop.live.multi import MultiRun, per_device_options, plan_recordings
from qtop.live.runner import LiveOptions
from qtop.live.source import LiveSource
from qtop.profiles import load_profile_text
from qtop.transport.factory import make_transport

from .links import sim_link
from .recording import check_complete, load, of_kind
from .test_ssh_sim import NETRUN

FAST = Backoff(initial_s=0.1, maximum_s=0.5)
PROCESSES = 13
RUN = "{command: '" + NETRUN.format(n=2) + f"', warmup: 1, iterations: {PROCESSES - 1}}}"


def board_profile(name: str, link, run: str = RUN):
    text = (
        f"name: {name}\n"
        "device:\n"
        f"{link.device_yaml()}"
        "  sysfs_root: $QTOP_SIM_SYSFS\n"
        "  sample_interval: 50ms\n"
        f"run: {run}\n"
    )
    return load_profile_text(text, f"{name}.yaml")


class DroppingSource(LiveSource):
    """A LiveSource whose link is dropped once, when its stream reaches ``at`` samples and
    iterations (only while the link is up, so the fault is exactly one disconnection)."""

    def __init__(self, profile, drop, at: int) -> None:
        super().__init__(
            profile,
            make_transport(profile),
            source_kind="sim",
            backoff=FAST,
            run_options=RunOptions(calibrations=5),
        )
        self._drop = drop
        self._at = at
        self.dropped = 0
        self._tasks: set[asyncio.Task[None]] = set()

    async def events(self):
        seen = 0
        async for event in super().events():
            if isinstance(event, Sample | Iteration):
                seen += 1
            if not self.dropped and seen >= self._at and self.state.link == "connected":
                self.dropped = 1
                task = asyncio.ensure_future(self._drop())
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
            yield event


def steady_source(profile) -> LiveSource:
    return LiveSource(
        profile,
        make_transport(profile),
        source_kind="sim",
        backoff=FAST,
        run_options=RunOptions(calibrations=5),
    )


def options_for(names: list[str], directory: Path) -> list[LiveOptions]:
    recordings = plan_recordings(names, str(directory), no_record=False)
    return per_device_options(LiveOptions("", headless=True), names, recordings)


async def test_two_boards_at_once_one_link_dropped_both_recordings_complete(tmp_path):
    async with (
        sim_link(tmp_path / "evk", "ssh", variant="evk", time_scale=20) as evk,
        sim_link(tmp_path / "glasses", "ssh", variant="glasses", time_scale=20) as glasses,
    ):
        steady = steady_source(board_profile("evk-side", evk))
        dropping = DroppingSource(board_profile("glasses-side", glasses), glasses.drop, at=10)
        out = io.StringIO()
        names = ["evk-side", "glasses-side"]
        multi = MultiRun([steady, dropping], options_for(names, tmp_path / "rec"), out=out,
                         interactive=False)  # fmt: skip
        code = await multi.run(None)
    text = out.getvalue()
    assert code == 0, text
    assert dropping.dropped == 1
    paths = [run.recording_path for run in multi.runs]
    assert all(path is not None and path.parent == tmp_path / "rec" for path in paths)
    evk_events, glasses_events = (load(path) for path in paths)
    assert [e["profile"]["name"] for e in (evk_events[0], glasses_events[0])] == names
    check_complete(glasses_events, processes=PROCESSES, faults=1)
    check_complete(evk_events, processes=PROCESSES, faults=0)
    # The other device never noticed: its only link events are its first connection.
    assert [e["state"] for e in of_kind(evk_events, "link")] == ["connecting", "connected"]
    # Each board is its own: its own simulated hardware, its own spool.
    assert [e["device"]["soc"] for e in (evk_events[0], glasses_events[0])] == ["QCS9075", "AR1"]
    assert evk_events[0]["device"]["run_dir"].startswith(str(tmp_path / "evk"))
    assert glasses_events[0]["device"]["run_dir"].startswith(str(tmp_path / "glasses"))
    # Both ran at once: each one connected before the other's run ended (host times).
    assert_overlap(evk_events, glasses_events)
    # Headless, every device line says which device it is about; the outcome of each ends it.
    lines = text.splitlines()
    assert any(line.startswith("glasses-side: link disconnected") for line in lines), text
    assert not any(line.startswith("evk-side: link disconnected") for line in lines), text
    tail = lines[lines.index("devices:") :]
    assert tail[1].startswith("  evk-side: run completed, recorded to ")
    assert tail[2].startswith("  glasses-side: run completed, recorded to ")
    assert all(line.endswith("(exit 0)") for line in tail[1:3])
    assert tail[3].startswith("side by side: qtop report ")


async def test_a_device_that_cannot_be_reached_does_not_stop_the_other(tmp_path):
    async with sim_link(tmp_path / "evk", "ssh", variant="evk", time_scale=20) as evk:
        steady = steady_source(board_profile("evk-side", evk))
        # The same board's address on a port where nothing listens.
        gone = board_profile("gone", evk).replace_device(port=_closed_port())
        out = io.StringIO()
        names = ["evk-side", "gone"]
        multi = MultiRun([steady, steady_source(gone)], options_for(names, tmp_path / "rec"),
                         out=out, interactive=False)  # fmt: skip
        code = await multi.run(None)
    text = out.getvalue()
    assert code == 1, text
    evk_path = multi.runs[0].recording_path
    assert evk_path is not None
    check_complete(load(evk_path), processes=PROCESSES, faults=0)
    assert multi.runs[1].recording_path is None
    assert list((tmp_path / "rec").iterdir()) == [evk_path]
    lines = text.splitlines()
    assert any(line.startswith("gone: error: ") for line in lines), text
    tail = lines[lines.index("devices:") :]
    assert tail[1].startswith("  evk-side: run completed") and tail[1].endswith("(exit 0)")
    assert tail[2].startswith("  gone: failed: ") and tail[2].endswith("(exit 1)")


def _closed_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def assert_overlap(first: list[dict[str, Any]], second: list[dict[str, Any]]) -> None:
    """Each session's first link event came before the other's last (wall time of the host)."""
    links = [[e["host_t"] for e in of_kind(events, "link")] for events in (first, second)]
    assert links[0][0] < links[1][-1] and links[1][0] < links[0][-1], links


async def test_qtop_run_with_two_profiles_records_each_device_into_the_directory(tmp_path, capsys):
    async with (
        sim_link(tmp_path / "evk", "ssh", variant="evk", time_scale=20) as evk,
        sim_link(tmp_path / "glasses", "ssh", variant="glasses", time_scale=20) as glasses,
    ):
        paths = []
        for name, link in (("evk-side", evk), ("glasses-side", glasses)):
            path = tmp_path / f"{name}.yaml"
            path.write_text(
                f"name: {name}\ndevice:\n{link.device_yaml()}  sysfs_root: $QTOP_SIM_SYSFS\n"
                f"  sample_interval: 100ms\nrun: {RUN}\n"
            )
            paths.append(str(path))
        record = tmp_path / "side-by-side"
        argv = ["run", *paths, "--headless", "--record", str(record)]
        # The command runs its own event loop; the boards go on serving on this one.
        code = await asyncio.to_thread(main, argv)
    out = capsys.readouterr().out
    assert code == 0, out
    recordings = sorted(record.iterdir())
    assert len(recordings) == 2
    assert recordings[0].name.endswith("-evk-side.jsonl")
    assert recordings[1].name.endswith("-glasses-side.jsonl")
    for path in recordings:
        check_complete(load(path), processes=PROCESSES, faults=0)
    assert f"side by side: qtop report {recordings[0]} {recordings[1]}" in out
    # Each recording is what a single-device run writes: report reads it as one.
    assert main(["report", str(recordings[1])]) == 0
    assert "profile glasses-side · device" in capsys.readouterr().out


class SignallingSource(LiveSource):
    """A LiveSource that sets ``measuring`` once its first measured iteration has passed."""

    def __init__(self, profile) -> None:
        super().__init__(
            profile,
            make_transport(profile),
            source_kind="sim",
            backoff=FAST,
            run_options=RunOptions(calibrations=5),
        )
        self.measuring = asyncio.Event()

    async def events(self):
        async for event in super().events():
            yield event
            if isinstance(event, Iteration) and event.phase == "measure":
                self.measuring.set()


async def test_ctrl_c_without_a_terminal_stops_every_device(tmp_path):
    long_run = "{command: '" + NETRUN.format(n=2) + "', warmup: 1, iterations: 100000}"
    async with (
        sim_link(tmp_path / "evk", "ssh", variant="evk", time_scale=20) as evk,
        sim_link(tmp_path / "glasses", "ssh", variant="glasses", time_scale=20) as glasses,
    ):
        sources = [
            SignallingSource(board_profile("evk-side", evk, long_run)),
            SignallingSource(board_profile("glasses-side", glasses, long_run)),
        ]
        out = io.StringIO()
        names = ["evk-side", "glasses-side"]
        multi = MultiRun(sources, options_for(names, tmp_path / "rec"), out=out,
                         interactive=False)  # fmt: skip
        running = asyncio.ensure_future(multi.run(None))
        await asyncio.wait_for(asyncio.gather(*(s.measuring.wait() for s in sources)), timeout=120)
        multi._on_interrupt()
        code = await asyncio.wait_for(running, timeout=120)
    text = out.getvalue()
    # Stopped by an unattended interrupt: not a completed run.
    assert code == 1, text
    assert "interrupted: stopping every device's run (no terminal to ask on)" in text
    for run in multi.runs:
        assert run.session is not None and run.session.model.end is not None
        assert run.session.model.end.reason == "stopped"
        events = load(run.recording_path)
        assert events[-1]["kind"] == "end" and events[-1]["reason"] == "stopped"


async def test_the_combined_view_shows_both_live_runs_then_each_concludes(tmp_path):
    from textual.widgets import Static

    from qtop.ui.devices.app import DevicesApp
    from qtop.ui.devices.column import DeviceColumn

    seen: dict[str, str] = {}

    async def open_ui(devices) -> bool:
        app = DevicesApp(devices, display_hz=20, chart_period_s=0.0, analysis_period_s=0.0)
        async with app.run_test(size=(160, 48)) as pilot:
            done = asyncio.Event()

            def handled(_message) -> None:
                if all(slot.finished for slot in app.slots):
                    done.set()

            # Checked each time the app handles a message (never on the clock).
            app.message_signal.subscribe(app, handled, immediate=True)
            await asyncio.wait_for(done.wait(), timeout=120)
            app.message_signal.unsubscribe(app)
            for index, device in enumerate(devices):
                column = app.query_one(f"#device-{index}", DeviceColumn)
                seen[device.name] = column.query_one("#device-status", Static).render().plain
            await pilot.press("q")
        return True

    async with (
        sim_link(tmp_path / "evk", "ssh", variant="evk", time_scale=20) as evk,
        sim_link(tmp_path / "glasses", "ssh", variant="glasses", time_scale=20) as glasses,
    ):
        sources = [
            steady_source(board_profile("evk-side", evk)),
            steady_source(board_profile("glasses-side", glasses)),
        ]
        names = ["evk-side", "glasses-side"]
        options = [replace(o, headless=False) for o in options_for(names, tmp_path / "rec")]
        out = io.StringIO()
        code = await MultiRun(sources, options, out=out, interactive=False).run(open_ui)
    assert code == 0, out.getvalue()
    assert list(seen) == names
    assert all(status.startswith("ended: completed") for status in seen.values()), seen
    for path in sorted((tmp_path / "rec").iterdir()):
        check_complete(load(path), processes=PROCESSES, faults=0)


@pytest.mark.slow
def test_the_side_by_side_demo_runs_an_evk_and_glasses_at_once(tmp_path, capsys):
    record = tmp_path / "rec"
    argv = ["demo", "--side-by-side", "--headless", "--duration", "1s", "--record", str(record)]
    assert main(argv) == 0, capsys.readouterr().out
    recordings = sorted(record.iterdir())
    assert [p.name.rsplit("-", 2)[-2:] for p in recordings] == [
        ["sim", "evk.jsonl"],
        ["sim", "glasses.jsonl"],
    ]
    evk_events, glasses_events = (load(path) for path in recordings)
    assert [e["device"]["soc"] for e in (evk_events[0], glasses_events[0])] == ["QCS9075", "AR1"]
    for events in (evk_events, glasses_events):
        assert events[-1]["kind"] == "end" and events[-1]["reason"] == "completed"
    assert_overlap(evk_events, glasses_events)
    out = capsys.readouterr().out
    assert "  sim-evk: run completed" in out and "  sim-glasses: run completed" in out

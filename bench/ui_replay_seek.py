"""Open and seek a demo hour in the dashboard: python bench/ui_replay_seek.py

Writes the demo hour (bench/demo_hour.py: qtop demo's measured rates, printed)
the way a live session does (Session with a RecordingWriter, so with keyframes),
then times, in the full app at 160x48: opening it (index, first events, first
drawing of every pane), seeks to 50%, 90% and back to 10% (until the model is at
the target and the panes are redrawn), 3 runs each (min / median / max), and
the background analysis that finds the throttling onset for the seek marks.
The model alone, without the UI, is bench/recording_hour.py.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from demo_hour import describe_rates, write_demo_hour

from qtop.record.replay import ReplaySource
from qtop.session import Session
from qtop.ui.app import QtopApp

RUNS = 3


async def wait_for(pilot, condition, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("the app did not get there")
        await pilot.pause(0.01)


async def measure(path: Path, report: bool) -> dict[str, float]:
    """One opening and three seeks; returns their times in seconds."""
    times: dict[str, float] = {}
    started = time.monotonic()
    source = ReplaySource(path, paused=True)
    app = QtopApp(Session(source), analyze_recording=report)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_for(pilot, lambda: app.session.model.header is not None and app.refreshes > 0)
        times["open"] = time.monotonic() - started
        t_start, t_end = source.t_start, source.t_end
        assert t_start is not None and t_end is not None
        for fraction in (0.5, 0.9, 0.1):
            target = t_start + fraction * (t_end - t_start)
            begun = time.monotonic()
            source.seek(target)
            await wait_for(
                pilot,
                lambda target=target: (
                    source.position_t is not None
                    and abs(source.position_t - target) < 0.2
                    and app.session.model.t_last == source.position_t
                ),
            )
            app.refresh_analysis(force=True)
            app.refresh_panes(force=True)
            await pilot.pause()
            times[f"seek to {fraction:.0%}"] = time.monotonic() - begun
        if report:
            await wait_for(pilot, lambda: app.onsets_searched)
            times["onset found in the background"] = time.monotonic() - started
    return times


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "hour.jsonl"
        began = time.monotonic()
        rates = write_demo_hour(path)
        keyframes = path.read_bytes().count(b'{"kind":"keyframe"')
        print(f"demo hour: {path.stat().st_size / 1e6:.1f} MB, {keyframes} keyframes, written "
              f"in {time.monotonic() - began:.0f} s; {describe_rates(rates)}")  # fmt: skip
        results = [asyncio.run(measure(path, report=run == 0)) for run in range(RUNS)]
        for name in results[0]:
            values = sorted(r[name] for r in results if name in r)
            shown = " / ".join(f"{v * 1000:.0f}" for v in (values[0], values[len(values) // 2],
                                                         values[-1]))  # fmt: skip
            print(f"  {name}: {shown} ms (min / median / max of {len(values)})")


if __name__ == "__main__":
    main()

"""Memory of the dashboard after a simulated hour: python bench/ui_memory_hour.py

Feeds the synthetic board (bench/ui_synthetic.py: 10 Hz x 12 channels, 20
inferences a second: about 108,000 events an hour) into the full app as fast as
it will take them, with every pane drawing at its usual rate, and prints the
process's resident memory after the first simulated minute and after the hour,
with the size of the model's snapshot. Bounded memory means the two are close.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ui_synthetic import header, session_events

from qtop.events import Event
from qtop.session import Session
from qtop.ui.app import QtopApp

HOUR_S = 3600.0
YIELD_EVERY = 200


class FastSource:
    """The synthetic hour, unpaced; it yields to the UI every few hundred events."""

    description = "synthetic hour, as fast as possible"

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.delivered = 0
        self.device_s = 0.0

    async def events(self) -> AsyncIterator[Event]:
        yield header()
        t0: float | None = None
        for count, event in enumerate(session_events(self.seconds)):
            if event.t is not None:
                t0 = event.t if t0 is None else t0
                self.device_s = event.t - t0
            self.delivered += 1
            yield event
            if count % YIELD_EVERY == 0:
                await asyncio.sleep(0)

    async def close(self) -> None:
        return None


def rss_mb() -> float:
    return psutil.Process().memory_info().rss / 1e6


async def main() -> None:
    source = FastSource(HOUR_S)
    session = Session(source)
    app = QtopApp(session)
    marks: dict[str, float] = {}
    started = time.monotonic()
    async with app.run_test(size=(160, 48)) as pilot:
        while source.device_s < 60:
            await pilot.pause(0.05)
        marks["after 1 simulated minute"] = rss_mb()
        while source.device_s < HOUR_S - 1:
            await pilot.pause(0.2)
        await pilot.pause(1.0)
        marks["after 1 simulated hour"] = rss_mb()
        snapshot = len(json.dumps(session.model.snapshot()))
    elapsed = time.monotonic() - started
    print(f"simulated hour: {source.delivered} events in {elapsed:.0f} s of wall time, UI drawing")
    for name, value in marks.items():
        print(f"  resident memory {name:25s}: {value:6.1f} MB")
    print(f"  model snapshot (a keyframe holds it)    : {snapshot / 1e3:6.1f} kB")


if __name__ == "__main__":
    asyncio.run(main())

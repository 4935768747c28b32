"""A paced run's figures in the latency pane, and nothing of them for a run that was not paced."""

from __future__ import annotations

from qtop.record.writer import RecordingWriter
from tests.analysis.test_pacing import paced_events
from tests.ui.helpers import SIMPLE, plain, replayed


async def test_the_latency_pane_shows_misses_lateness_rate_and_duty_cycle(tmp_path):
    events = paced_events()
    path = tmp_path / "paced.jsonl"
    writer = RecordingWriter(path, events[0])
    for event in events[1:-1]:
        writer.write(event)
    writer.close(events[-1])
    async with replayed(path, (120, 40)) as (app, _pilot, _source):
        assert app.query_one("#latency-pacing").display
        assert plain(app, "#latency-pacing") == (
            "paced 10/s achieved 8.182/s  │  missed 5/10 (50.0%)  │  late P50 0.000 P95 "
            "177.500 max 200.000 ms  │  duty 80%"
        )
    async with replayed(SIMPLE, (120, 40)) as (app, _pilot, _source):
        assert not app.query_one("#latency-pacing").display

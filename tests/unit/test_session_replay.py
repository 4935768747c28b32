import asyncio
import json

import pytest
from fixtures.sessions import simple_session_events

from qtop.events import End, Header, Iteration, Keyframe, Marker, PhaseChange, Sample
from qtop.record.reader import open_recording
from qtop.record.replay import ReplaySource
from qtop.record.writer import RecordingWriter
from qtop.session import Session
from qtop.stats.model import SessionModel


class ListSource:
    description = "list"

    def __init__(self, events):
        self._events = events

    async def events(self):
        for event in self._events:
            yield event
            await asyncio.sleep(0)

    async def close(self):
        pass


def long_session(seconds=400, rate_hz=10):
    events = [
        Header(session_id="long"),
        PhaseChange(t=0.0, phase="measure", planned_duration_s=float(seconds)),
    ]
    for tick in range(seconds * rate_hz):
        t = tick / rate_hz
        events.append(Sample(t=t, seq=tick, values={"thermal/nsp": 40 + t / 10}))
        if tick % 5 == 4:
            events.append(
                Iteration(
                    t=t,
                    seq=tick // 5,
                    index=tick // 5,
                    start=t - 0.05,
                    end=t,
                    latency_s=0.05 + (tick % 7) / 1000,
                )
            )
        if tick == 2000:
            events.append(Marker(t=t, label="onset", origin="auto"))
    events.append(End(t=float(seconds), reason="completed"))
    return events


def record_live(path, events):
    recorder = RecordingWriter(path, events[0])
    session = Session(ListSource(events[1:]), recorder=recorder)
    session.model.apply(events[0])
    asyncio.run(session.run())
    return session


def replay_all(path):
    source = ReplaySource(path, speed=float("inf"))
    model = SessionModel()

    async def go():
        async for event in source.events():
            model.apply(event)
            if isinstance(event, End):
                break

    asyncio.run(go())
    return model


def test_replay_reproduces_the_live_model_bit_for_bit(tmp_path):
    events = long_session()
    path = tmp_path / "long.jsonl"
    live = record_live(path, events)
    recording = open_recording(path)
    keyframes = [e for e in recording.events(keyframes=True) if isinstance(e, Keyframe)]
    assert len(keyframes) >= 2
    assert recording.index().keyframes[0][0] >= 30
    replayed = replay_all(path)
    assert json.dumps(replayed.snapshot()) == json.dumps(live.model.snapshot())


def test_keyframes_stay_a_small_share_of_the_file(tmp_path):
    path = tmp_path / "long.jsonl"
    record_live(path, long_session(seconds=600))
    keyframe_bytes = sum(
        len(line)
        for line in path.read_bytes().splitlines()
        if line.startswith(b'{"kind":"keyframe"')
    )
    assert keyframe_bytes / path.stat().st_size < 0.25


@pytest.mark.parametrize("target", [5.0, 123.45, 250.0, 399.0])
def test_seek_lands_on_the_right_event_with_the_right_model(tmp_path, target):
    events = long_session()
    path = tmp_path / "long.jsonl"
    record_live(path, events)
    expected = SessionModel()
    for event in events:
        if event.t is not None and event.t > target:
            break
        expected.apply(event)

    source = ReplaySource(path, speed=float("inf"), paused=True)
    model = SessionModel()

    async def go():
        # Paused: the fast-forward to the target runs, then the next event waits.
        source.seek(target)
        async for event in source.events():
            model.apply(event)

    async def runner():
        task = asyncio.create_task(go())
        # The fast-forward ends at the target, paused there (60 s: a hang guard).
        deadline = asyncio.get_running_loop().time() + 60
        while model.t_last is None or model.t_last < target - 0.1:
            assert not task.done() and asyncio.get_running_loop().time() < deadline
            await asyncio.sleep(0.01)
        await source.close()
        await task

    asyncio.run(runner())
    assert model.t_last == pytest.approx(target, abs=0.1)
    assert model.latency_stats("measure", "").count == expected.latency_stats("measure", "").count
    assert model.sample_count == expected.sample_count


def test_paced_replay_follows_device_time(tmp_path):
    path = tmp_path / "s.jsonl"
    record_live(path, simple_session_events())
    source = ReplaySource(path, speed=16.0)
    seen = []

    async def go():
        loop = asyncio.get_running_loop()
        started = loop.time()
        async for event in source.events():
            seen.append(event)
            if isinstance(event, End):
                return loop.time() - started

    elapsed = asyncio.run(go())
    span = seen[-1].t - next(e.t for e in seen if e.t is not None)
    # Each event waits for its device time at 16x, never less; how much later it comes
    # is this machine's load.
    assert elapsed >= span / 16 - 1e-6


def test_markers_are_indexed_for_seeking(tmp_path):
    path = tmp_path / "long.jsonl"
    record_live(path, long_session())
    marks = open_recording(path).index().marks
    assert [(m.kind, m.label) for m in marks if m.kind == "marker"] == [("marker", "onset")]
    assert marks[0].kind == "phase"


async def _until(done) -> None:
    while not done():
        await asyncio.sleep(0.01)


def test_a_batch_left_when_the_source_goes_quiet_is_still_delivered():
    delivered = []
    release = asyncio.Event()

    class QuietSource:
        description = "quiet"

        async def events(self):
            yield Sample(t=0.0, seq=0, values={})
            # Quiet until the first batch was delivered: the window closed without it.
            await release.wait()
            yield Sample(t=1.0, seq=1, values={})

        async def close(self):
            pass

    async def scenario():
        session = Session(QuietSource())
        task = asyncio.create_task(session.run(delivered.append, batch_window_s=0.05))
        await asyncio.wait_for(_until(lambda: delivered), 60)
        seen_while_quiet = [e.seq for batch in delivered for e in batch]
        release.set()
        await task
        return seen_while_quiet

    seen_while_quiet = asyncio.run(scenario())
    assert seen_while_quiet == [0]
    assert [e.seq for batch in delivered for e in batch] == [0, 1]

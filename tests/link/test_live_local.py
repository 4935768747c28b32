"""LiveSource against this machine: the full stream, resuming after drops, stopping."""

import asyncio
import os
import signal
from pathlib import Path

import pytest

from qtop.device import control
from qtop.device.plan import RunOptions
from qtop.errors import RunFailed
from qtop.events import Channels, End, Iteration, Link, Log, Sample
from qtop.live.backoff import Backoff
from qtop.live.source import LiveSource
from qtop.transport.base import LinkDown
from qtop.transport.local import LocalStream, LocalTransport

from .helpers import group_alive, make_sysfs, profile_for
from .recording import check_complete, of_kind, record

FAST = Backoff(initial_s=0.05, maximum_s=0.2)


class FlakyStream:
    """A local stream that, once the link is cut, hands over half a chunk and then fails."""

    def __init__(self, inner: LocalStream, transport: "FlakyTransport") -> None:
        self.inner = inner
        self.transport = transport
        self.generation = transport.generation

    async def read(self, size: int = 65536) -> bytes:
        if self.generation != self.transport.generation:
            raise LinkDown("cut")
        reading = asyncio.ensure_future(self.inner.read(size))
        cut = asyncio.ensure_future(self.transport.cut_event.wait())
        await asyncio.wait({reading, cut}, return_when=asyncio.FIRST_COMPLETED)
        cut.cancel()
        if not reading.done():
            # A busy stream gets the first half of its next chunk (a torn line).
            await asyncio.wait({reading}, timeout=0.3)
        if not reading.done():
            reading.cancel()
            raise LinkDown("cut while idle")
        data = reading.result()
        if self.generation != self.transport.generation:
            return data[: len(data) // 2] or data
        return data

    async def close(self) -> None:
        await self.inner.close()


class FlakyTransport(LocalTransport):
    def __init__(self) -> None:
        super().__init__()
        self.generation = 0
        self.cut_event = asyncio.Event()
        self.connects = 0
        self.refuse = 0

    def cut(self) -> None:
        self.generation += 1
        self.cut_event.set()
        self.cut_event = asyncio.Event()

    async def connect(self) -> None:
        if self.refuse:
            self.refuse -= 1
            raise LinkDown("refused")
        self.connects += 1
        await super().connect()

    async def open_stream(self, command: str) -> FlakyStream:
        return FlakyStream(await super().open_stream(command), self)


@pytest.fixture
def tree(tmp_path):
    return make_sysfs(tmp_path / "sys"), tmp_path / "spool"


def source_for(tree, run, transport=None, **kwargs):
    profile = profile_for(*tree, run)
    return LiveSource(
        profile,
        transport or LocalTransport(),
        run_options=RunOptions(calibrations=5),
        backoff=FAST,
        **kwargs,
    )


async def test_a_local_run_streams_header_channels_samples_iterations_and_end(tree, tmp_path):
    source = source_for(tree, "{command: 'echo out; sleep 0.05', warmup: 1, iterations: 4}")
    events = await record(source, tmp_path / "run.jsonl")
    header = events[0]
    assert header["source"] == "local"
    assert header["device"]["timer_overhead_s"] > 0
    assert len(header["device"]["timer_calibration_s"]) == 5
    assert header["device"]["clock"] == "epoch"
    # The link's state is in the stream: connecting, then connected, before anything else.
    assert [(e["kind"], e["state"]) for e in events[1:3]] == [
        ("link", "connecting"), ("link", "connected")
    ]  # fmt: skip
    assert events[3]["kind"] == "channels"
    overhead = [e for e in of_kind(events, "log") if e["stream"] == "agent"]
    assert overhead[0]["text"].startswith("timer_overhead_s=")
    check_complete(events, processes=5, faults=0)
    iterations = of_kind(events, "iteration")
    assert [(i["phase"], i["index"]) for i in iterations] == [
        ("warmup", 0), ("measure", 0), ("measure", 1), ("measure", 2), ("measure", 3)
    ]  # fmt: skip
    # Latency is the stamped wall time less the calibrated timer overhead, and carries
    # the calibration's spread as its uncertainty.
    overhead = header["device"]["timer_overhead_s"]
    for iteration in iterations:
        wall = iteration["end"] - iteration["start"]
        assert iteration["latency_s"] == pytest.approx(max(0.0, wall - overhead), abs=1e-9)
        assert iteration["latency_uncertainty_s"] == header["device"]["timer_overhead_spread_s"]
    stdout = [e["text"] for e in of_kind(events, "log") if e["stream"] == "stdout"]
    assert stdout == ["out"] * 5
    assert [p["phase"] for p in of_kind(events, "phase")] == ["warmup", "measure", "done"]
    samples = of_kind(events, "sample")
    assert samples[0]["values"]["thermal/nsp-0-0-0-thermal"] == 52.0
    assert samples[0]["values"]["thermal/camera-0"] is None
    assert not os.path.exists(source.state.run_dir)


async def test_drops_mid_line_lose_nothing_and_count_nothing_twice(tree, tmp_path):
    transport = FlakyTransport()
    source = source_for(
        tree, "{command: 'echo a; echo b; sleep 0.03', warmup: 2, iterations: 20}", transport
    )
    seen = 0

    def cut_now_and_then(batch):
        nonlocal seen
        for event in batch:
            if isinstance(event, Sample | Iteration):
                seen += 1
                if seen in (5, 17, 29):
                    transport.cut()

    events = await record(source, tmp_path / "run.jsonl", cut_now_and_then)
    check_complete(events, processes=22, faults=3)
    assert transport.connects == 4
    stdout = [e["text"] for e in of_kind(events, "log") if e["stream"] == "stdout"]
    assert stdout == ["a", "b"] * 22
    assert events[-1]["counts"].get("torn_lines_dropped", 0) >= 1


async def test_reconnecting_retries_with_backoff_until_the_device_answers(tree, tmp_path):
    transport = FlakyTransport()
    source = source_for(tree, "{command: 'sleep 0.02', warmup: 0, iterations: 15}", transport)
    cut = False

    def cut_once(batch):
        nonlocal cut
        if not cut and any(isinstance(e, Iteration) for e in batch):
            cut = True
            transport.refuse = 3
            transport.cut()

    events = await record(source, tmp_path / "run.jsonl", cut_once)
    check_complete(events, processes=15, faults=1)
    attempts = [e["attempt"] for e in of_kind(events, "link") if e["state"] == "reconnecting"]
    assert attempts == [1, 2, 3, 4]


async def test_stop_run_kills_the_group_and_ends_the_stream_as_stopped(tree):
    source = source_for(tree, "{command: 'sleep 30', warmup: 0, iterations: 3}")
    await source.start()
    pgid = source.state.pgid
    seen = []

    async def consume():
        async for event in source.events():
            seen.append(event)

    consumer = asyncio.create_task(consume())
    await asyncio.sleep(0.3)
    outcome = await source.stop_run()
    await asyncio.wait_for(consumer, 10)
    await source.close()
    assert outcome.signal == "TERM"
    assert not group_alive(pgid)
    end = seen[-1]
    assert isinstance(end, End) and end.reason == "stopped"
    assert not any(isinstance(e, Iteration) for e in seen)
    assert [e.state for e in seen[:2] if isinstance(e, Link)] == ["connecting", "connected"]
    assert isinstance(seen[2], Channels)


@pytest.mark.parametrize(
    "victim", ["runner", "group", "runner-after-its-state", "runner-on-a-full-disk"]
)
async def test_a_runner_killed_from_outside_ends_the_stream_as_failed(tree, tmp_path, victim):
    """The OOM killer or a kill -9 ends the run's shell before its end line: qtop must
    not follow the files for ever, and must end what the shell left running. A shell
    killed between its final state and its end line is told apart."""
    source = source_for(
        tree, "{command: 'sleep 0.05', warmup: 0, iterations: 100000}", runner_check_s=0.2
    )
    iterations = 0

    def kill_after_five_iterations(batch):
        nonlocal iterations
        before = iterations
        iterations += sum(isinstance(event, Iteration) for event in batch)
        if before < 5 <= iterations:
            if victim == "group":
                os.killpg(source.state.pgid, signal.SIGKILL)
                return
            if victim == "runner-after-its-state":
                Path(source.state.run_dir, "state").write_text("completed\n")
            if victim == "runner-on-a-full-disk":
                Path(source.state.run_dir, "state").write_text("")
            os.kill(source.state.pgid, signal.SIGKILL)

    events = await asyncio.wait_for(
        record(source, tmp_path / "run.jsonl", kill_after_five_iterations), 60
    )
    end = events[-1]
    assert end["reason"] == "failed"
    if victim == "runner-after-its-state":
        assert end["detail"].startswith("the run ended (completed) without an end line")
    elif victim == "runner-on-a-full-disk":
        assert f"its state file {source.state.run_dir}/state is empty" in end["detail"]
    else:
        assert "was killed without ending the run" in end["detail"]
    # Killing the shell alone leaves its sampler and command: qtop ends them.
    assert ("got SIGTERM" in end["detail"]) == (victim != "group")
    # The device log says it whole (the header has only the room its line leaves).
    errors = [e["text"] for e in of_kind(events, "log") if e["level"] == "error"]
    assert errors == [f"the run failed: {end['detail']}"]
    assert len(of_kind(events, "iteration")) >= 5
    assert of_kind(events, "sample")
    assert not group_alive(source.state.pgid)


async def test_a_long_quiet_iteration_is_not_taken_for_a_dead_runner(tree, tmp_path):
    source = source_for(
        tree, "{command: 'sleep 1.2', warmup: 0, iterations: 2}", runner_check_s=0.1
    )
    events = await record(source, tmp_path / "run.jsonl")
    assert events[-1]["reason"] == "completed"
    assert len(of_kind(events, "iteration")) == 2


async def test_detach_leaves_the_run_which_is_then_found_as_a_leftover(tree):
    source = source_for(tree, "{command: 'sleep 30', warmup: 0, iterations: 3}")
    await source.start()
    run_id = source.state.run_id
    await source.detach()
    events = [e async for e in source.events()]
    assert isinstance(events[-1], End) and events[-1].reason == "interrupted"
    assert run_id in events[-1].detail
    await source.close()

    again = source_for(tree, "{command: 'true', warmup: 0, iterations: 1}")
    (leftover,) = await again.leftovers()
    assert leftover.run_id == run_id and leftover.profile == "linktest"
    assert group_alive(leftover.pgid)
    outcome = await again.stop_leftover(leftover)
    assert outcome.signal == "TERM"
    assert not group_alive(leftover.pgid)
    assert await again.leftovers() == []
    await again.close()


async def test_a_vanished_run_directory_ends_the_session_as_failed(tree, tmp_path):
    source = source_for(tree, "{command: 'sleep 30', warmup: 0, iterations: 1}", FlakyTransport())
    await source.start()
    os.killpg(source.state.pgid, signal.SIGKILL)
    await control.remove(source.transport, source.state.run_dir)
    source.transport.cut()
    events = [e async for e in source.events()]
    await source.close()
    assert events[-1].reason == "failed"
    assert "is gone" in events[-1].detail
    assert any(isinstance(e, Link) and e.state == "reconnected" for e in events)
    assert any(isinstance(e, Log) and e.level == "error" for e in events)


async def test_an_unreachable_device_at_start_is_a_clear_error(tree):
    transport = FlakyTransport()
    transport.refuse = 1
    source = source_for(tree, "{command: 'true', iterations: 1}", transport)
    with pytest.raises(RunFailed, match="refused"):
        await source.start()

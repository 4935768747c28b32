"""BurstReads against a transport that records what it is told: no socket, no timing."""

import asyncio

import pytest

from qtop.transport import ssh_reads
from qtop.transport.ssh_reads import FULL_READ, BurstReads


class FakeTransport(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.reading = True
        self.closing = False
        self.calls: list[str] = []

    def is_reading(self) -> bool:
        return self.reading

    def is_closing(self) -> bool:
        return self.closing

    def pause_reading(self) -> None:
        self.calls.append("pause")
        self.reading = False

    def resume_reading(self) -> None:
        self.calls.append("resume")
        self.reading = True


class Inner(asyncio.Protocol):
    def __init__(self) -> None:
        self.received: list[bytes] = []
        self.lost: list[Exception | None] = []

    def data_received(self, data: bytes) -> None:
        self.received.append(data)

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost.append(exc)


@pytest.fixture
def instant_hold(monkeypatch):
    """Holds that end on the loop's next turn: the test waits for events, not for time."""
    monkeypatch.setattr(ssh_reads, "HOLD_S", 0.0)
    monkeypatch.setattr(ssh_reads, "AWAITING_HOLD_S", 0.0)


def following(reads: BurstReads) -> BurstReads:
    reads.following()
    return reads


async def turn() -> None:
    for _ in range(3):
        await asyncio.sleep(0)


async def test_a_small_read_is_passed_on_at_once_then_the_socket_rests():
    transport, inner = FakeTransport(), Inner()
    reads = following(BurstReads(transport, inner))
    reads.data_received(b"one line\n")
    assert inner.received == [b"one line\n"]
    assert transport.calls == ["pause"] and reads.holding and reads.holds == 1
    # Data asyncio had already read while the hold began is passed on, and holds nothing more.
    reads.data_received(b"more\n")
    assert inner.received == [b"one line\n", b"more\n"]
    assert transport.calls == ["pause"]


@pytest.mark.usefixtures("instant_hold")
async def test_the_socket_is_read_again_when_the_hold_ends():
    transport, inner = FakeTransport(), Inner()
    reads = following(BurstReads(transport, inner))
    reads.data_received(b"x")
    await turn()
    assert transport.calls == ["pause", "resume"] and not reads.holding


async def test_a_full_read_is_followed_at_once():
    transport, inner = FakeTransport(), Inner()
    reads = following(BurstReads(transport, inner))
    reads.data_received(b"x" * FULL_READ)
    assert transport.calls == [] and not reads.holding


@pytest.mark.usefixtures("instant_hold")
async def test_awaiting_an_answer_ends_a_hold_and_keeps_later_holds_short():
    transport, inner = FakeTransport(), Inner()
    reads = following(BurstReads(transport, inner))
    reads.data_received(b"x")
    with reads.awaiting():
        assert transport.calls == ["pause", "resume"] and not reads.holding
        reads.data_received(b"y")
        assert reads.holding
        await turn()
        assert not reads.holding
    assert transport.calls == ["pause", "resume", "pause", "resume"]


async def test_a_lost_connection_ends_the_hold_and_is_passed_on():
    transport, inner = FakeTransport(), Inner()
    reads = following(BurstReads(transport, inner))
    reads.data_received(b"x")
    problem = ConnectionResetError("reset")
    transport.closing = True
    reads.connection_lost(problem)
    assert inner.lost == [problem] and not reads.holding
    await turn()
    assert transport.calls == ["pause"]


async def test_a_closing_transport_is_not_paused():
    transport, inner = FakeTransport(), Inner()
    transport.closing = True
    reads = following(BurstReads(transport, inner))
    reads.data_received(b"x")
    assert transport.calls == [] and inner.received == [b"x"]


async def test_without_a_stream_open_every_read_is_an_answer_and_nothing_is_held():
    transport, inner = FakeTransport(), Inner()
    reads = BurstReads(transport, inner)
    reads.data_received(b"x")
    assert transport.calls == [] and inner.received == [b"x"]
    closed = reads.following()
    reads.data_received(b"y")
    assert reads.holding
    # The last stream closed: the hold ends at once, and later reads are not held.
    closed()
    closed()
    assert transport.calls == ["pause", "resume"] and not reads.holding
    reads.data_received(b"z")
    assert transport.calls == ["pause", "resume"]

"""Long-lived fuzz workers that survive what they run: the pool both fuzz harnesses share.

A worker is forked once and runs many inputs in its own process, one after the
other, numbered; the function it runs catches what an input raises and puts its
own per-input time limit on it (a timer signal), so a worker only goes away when
an input takes the process down (a segfault, ``os._exit``, memory) or gets stuck
where no signal reaches it (inside C code). The parent sees both: a worker whose
pipe closes died on the input it was running, one that spends ``stuck_cpu_s`` of
CPU time (or ``stuck_wall_s``) on one input is killed. Either way that input is
a finding and a fresh worker goes on with the next one, so a run never loses
the inputs after a finding, and never forks per input.

Work is handed out in chunks of consecutive numbers; the worker writes the number
it is on into shared memory, which is all the parent needs to tell which input
did it.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any

import psutil

# What one input gives: its outcome kinds counted, and its findings (picklable).
Work = Callable[[int], tuple[Counter[str], list[Any]]]
POLL_S = 0.5


@dataclass
class Lost:
    """An input that took its worker with it."""

    number: int
    kind: str  # "died" or "stuck"
    what: str


@dataclass
class Totals:
    inputs: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)


def _worker(work: Work, connection: Connection, current: Any) -> None:
    while True:
        chunk = connection.recv()
        if chunk is None:
            return
        start, stop = chunk
        counts: Counter[str] = Counter()
        for number in range(start, stop):
            current.value = number
            outcomes, findings = work(number)
            counts.update(outcomes)
            for finding in findings:
                connection.send(("finding", number, finding))
        current.value = -1
        connection.send(("chunk", stop - start, dict(counts)))


@dataclass
class _Slot:
    process: Any
    connection: Connection
    current: Any
    cpu: psutil.Process
    chunk: tuple[int, int] | None = None
    watched: int = -1
    since_cpu: float = 0.0
    since_wall: float = 0.0


class Pool:
    """``workers`` processes running ``work`` over ``range(first, stop)`` in chunks."""

    def __init__(
        self,
        work: Work,
        workers: int,
        chunk: int,
        stuck_cpu_s: float = 60.0,
        stuck_wall_s: float = 900.0,
    ) -> None:
        self.work = work
        self.workers = workers
        self.chunk = chunk
        self.stuck_cpu_s = stuck_cpu_s
        self.stuck_wall_s = stuck_wall_s
        self._context = multiprocessing.get_context("fork")

    def _start(self) -> _Slot:
        parent, child = self._context.Pipe()
        current = self._context.Value("q", -1, lock=False)
        process = self._context.Process(
            target=_worker, args=(self.work, child, current), daemon=True
        )
        process.start()
        child.close()
        return _Slot(process, parent, current, psutil.Process(process.pid))

    def run(
        self, first: int, stop: int, totals: Totals, deadline: float = float("inf")
    ) -> Iterator[tuple[int, Any] | Lost | None]:
        """Every finding as ``(number, finding)`` and every ``Lost`` input, as they come,
        and None at least every ``POLL_S`` (a moment to report progress); ``totals``
        counts the inputs done and their outcomes as it goes.

        After ``deadline`` (``time.monotonic()``) no chunk is started, and the chunks
        under way finish: chunks go out in order, so the inputs done are always
        ``first`` to ``first + totals.inputs - 1``."""
        pending: list[tuple[int, int]] = [
            (start, min(start + self.chunk, stop)) for start in range(first, stop, self.chunk)
        ]
        pending.reverse()
        slots = [self._start() for _ in range(min(self.workers, len(pending)))]
        try:
            for slot in slots:
                self._hand_out(slot, pending)
            while any(slot.chunk is not None for slot in slots):
                ready = wait([s.connection for s in slots if s.chunk is not None], POLL_S)
                for index, slot in enumerate(slots):
                    if slot.connection in ready:
                        try:
                            message = slot.connection.recv()
                        except (EOFError, OSError):
                            lost = self._replace(slots, index, pending, totals, "died")
                            yield lost
                            continue
                        if message[0] == "finding":
                            yield message[1], message[2]
                        else:
                            totals.inputs += message[1]
                            totals.outcomes.update(message[2])
                            slot.chunk = None
                            if time.monotonic() >= deadline:
                                pending.clear()
                            self._hand_out(slot, pending)
                for index, slot in enumerate(slots):
                    if slot.chunk is not None and self._stuck(slot):
                        yield self._replace(slots, index, pending, totals, "stuck")
                yield None
        finally:
            for slot in slots:
                if slot.process.is_alive():
                    with contextlib.suppress(OSError):
                        slot.connection.send(None)
                    slot.process.join(timeout=5)
                    if slot.process.is_alive():
                        slot.process.kill()
                        slot.process.join()

    def _hand_out(self, slot: _Slot, pending: list[tuple[int, int]]) -> None:
        if pending:
            slot.chunk = pending.pop()
            slot.connection.send(slot.chunk)

    def _stuck(self, slot: _Slot) -> bool:
        number = slot.current.value
        try:
            cpu = sum(slot.cpu.cpu_times()[:2])
        except psutil.Error:
            return False  # gone: its pipe says so at the next wait
        now = time.monotonic()
        if number != slot.watched:
            slot.watched, slot.since_cpu, slot.since_wall = number, cpu, now
            return False
        return number >= 0 and (
            cpu - slot.since_cpu > self.stuck_cpu_s or now - slot.since_wall > self.stuck_wall_s
        )

    def _replace(
        self,
        slots: list[_Slot],
        index: int,
        pending: list[tuple[int, int]],
        totals: Totals,
        kind: str,
    ) -> Lost:
        """The worker at ``index`` is gone with its input: a new worker takes the rest."""
        slot = slots[index]
        assert slot.chunk is not None
        number = slot.current.value
        if number < slot.chunk[0]:
            number = slot.chunk[0]  # it went before writing its first number
        if slot.process.is_alive():
            slot.process.kill()
        slot.process.join()
        slot.connection.close()
        code = slot.process.exitcode
        what = (
            f"more than {self.stuck_cpu_s:g} s of CPU or {self.stuck_wall_s:g} s on one input"
            if kind == "stuck"
            else f"the worker died (exit code {code})"
        )
        # The inputs before it in its chunk ran (their findings already came); their
        # outcome kinds went with the worker, so only the count is kept.
        totals.inputs += number - slot.chunk[0] + 1
        totals.outcomes[kind] += 1
        rest = (number + 1, slot.chunk[1])
        slots[index] = self._start()
        if rest[0] < rest[1]:
            pending.append(rest)
        self._hand_out(slots[index], pending)
        return Lost(number, kind, what)

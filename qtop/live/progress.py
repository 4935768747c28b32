"""The headless progress display: phase, iterations, elapsed and ETA, the link.

It observes the ``Session`` (batches of events) and reads the same
``SessionModel`` the UI reads. On a terminal one status line is redrawn in
place; otherwise a line is printed at each phase change and every few
seconds, so a CI log stays readable.

Phase and variant names, notes, link details and log lines come from the
device or the profile: each is printed through ``qtop.textsafe.plain``, and
every line written goes through it once more, so no control character from
them reaches the terminal (the status line's own redraw is the only escape
written).
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Sequence
from typing import TextIO

from qtop.analysis.pacing import live_pacing, short
from qtop.events import Event, Iteration, Link, Log, PhaseChange
from qtop.stats.model import PhaseState, SessionModel
from qtop.textsafe import plain, plain_lines

TTY_REDRAW_S = 0.5
PLAIN_EVERY_S = 5.0


def _duration(seconds: float | None) -> str:
    if seconds is None or not math.isfinite(seconds):
        return "?"
    seconds = max(0.0, seconds)
    if seconds < 60:
        return f"{seconds:.0f}s"
    minutes, rest = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes}m{rest:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def phase_eta_s(model: SessionModel) -> float | None:
    """Device seconds left in the warm-up or measurement, at the pace so far (None: unknown)."""
    phase = model.phase
    if phase.phase not in ("warmup", "measure") or model.end is not None:
        return None
    if phase.note.startswith("block "):
        # A block's own start says nothing about the variant's iterations in earlier blocks.
        return None
    if phase.started_t is None or model.t_last is None:
        return None
    elapsed = model.t_last - phase.started_t
    if phase.planned_duration_s:
        return max(0.0, phase.planned_duration_s - elapsed)
    done = model.done(phase.phase, phase.variant) + model.failed(phase.phase, phase.variant)
    if phase.planned_iterations and done:
        return max(0.0, elapsed / done * (phase.planned_iterations - done))
    return None


def closing_line(
    model: SessionModel, ended: PhaseState, end_t: float | None, counted: tuple[int, int]
) -> str | None:
    """How a warm-up or measurement went, once the next phase has begun (None for others).

    ``counted`` is (succeeded, failed) of the phase's iterations up to the change, as
    the printer counted them in order: the model may already hold later events of the
    same batch. Between two status lines a short phase would otherwise leave only its
    first line, taken before any iteration had arrived. An interleaved variant's block
    closes with the variant's count so far: the iterations of earlier blocks are in it.
    """
    if ended.phase not in ("warmup", "measure"):
        return None
    name = plain(ended.phase) + (f" [{plain(ended.variant)}]" if ended.variant else "")
    succeeded, failed = counted
    block = ended.note.startswith("block ")
    head = (
        f"{name} {plain(ended.note) + ' ' if block else ''}ended: {succeeded + failed} iterations"
    )
    if block:
        head += " so far"
    elif ended.started_t is not None and end_t is not None:
        head += f" in {_duration(end_t - ended.started_t)}"
    parts = [head]
    stats = model.latency_stats(ended.phase, ended.variant)
    if stats.count:
        parts.append(f"p50 {stats.quantiles((0.5,))[0.5] * 1000:.3g} ms")
    if failed:
        parts.append(f"{failed} failed")
    return ", ".join(parts)


def status_line(model: SessionModel) -> str:
    """One line: where the run is and how long is left."""
    phase = model.phase
    parts = [plain(phase.phase) + (f" [{plain(phase.variant)}]" if phase.variant else "")]
    elapsed = None
    if phase.started_t is not None and model.t_last is not None:
        elapsed = model.t_last - phase.started_t
    if phase.phase in ("warmup", "measure"):
        done = model.done(phase.phase, phase.variant) + model.failed(phase.phase, phase.variant)
        eta = phase_eta_s(model)
        if phase.planned_iterations:
            parts.append(f"{done}/{phase.planned_iterations} iterations")
        else:
            parts.append(f"{done} iterations")
        parts.append(f"elapsed {_duration(elapsed)}")
        if eta is not None:
            parts.append(f"ETA {_duration(eta)}")
        stats = model.latency_stats(phase.phase, phase.variant)
        if stats.count:
            parts.append(f"p50 {stats.quantiles((0.5,))[0.5] * 1000:.3g} ms")
        failed = model.failed(phase.phase, phase.variant)
        if failed:
            parts.append(f"{failed} failed")
        pacing = live_pacing(model, phase.phase, phase.variant)
        if pacing is not None:
            parts.append(short(pacing))
    elif elapsed is not None and phase.phase != "done":
        # Time spent in "done" says nothing; how the measured phases went is their
        # closing line (``ProgressPrinter``).
        parts.append(f"elapsed {_duration(elapsed)}")
    if model.link.state in ("disconnected", "reconnecting"):
        parts.append(f"link {plain(model.link.state)}")
    return ", ".join(parts)


class ProgressPrinter:
    """A ``Session`` observer that prints progress to ``out``."""

    def __init__(self, model: SessionModel, out: TextIO, tty: bool) -> None:
        self.model = model
        self.out = out
        self.tty = tty
        self._last_print = 0.0
        self._line_open = False
        # The phase the last PhaseChange began: its closing line is printed at the next.
        self._phase: PhaseState | None = None
        # Iterations seen so far per (phase, variant, failed).
        self._counted: Counter[tuple[str, str, bool]] = Counter()

    def __call__(self, batch: Sequence[Event]) -> None:
        for event in batch:
            message = self._message(event)
            if message:
                self.say(message)
        now = time.monotonic()
        if now - self._last_print >= (TTY_REDRAW_S if self.tty else PLAIN_EVERY_S):
            self._status(now)

    def _message(self, event: Event) -> str | None:
        if isinstance(event, Iteration):
            self._counted[event.phase, event.variant, event.exit_status != 0] += 1
            return None
        if isinstance(event, PhaseChange):
            plan = ""
            if event.planned_iterations:
                plan = f": {event.planned_iterations} iterations"
            elif event.planned_duration_s:
                plan = f": {_duration(event.planned_duration_s)}"
            variant = f" [{plain(event.variant)}]" if event.variant else ""
            note = f" ({plain(event.note)})" if event.note else ""
            line = f"phase {plain(event.phase)}{variant}{plan}{note}"
            closing = None
            if (ended := self._phase) is not None:
                counted = (
                    self._counted[ended.phase, ended.variant, False],
                    self._counted[ended.phase, ended.variant, True],
                )
                closing = closing_line(self.model, ended, event.t, counted)
            self._phase = PhaseState(
                phase=event.phase, variant=event.variant, started_t=event.t, note=event.note
            )
            return f"{closing}\n{line}" if closing else line
        if isinstance(event, Link):
            if event.state == "gap":
                span = ""
                if event.gap_from is not None and event.gap_to is not None:
                    span = f" ({event.gap_to - event.gap_from:.2f} s)"
                return f"gap{span}: {plain(event.detail)}"
            if event.state == "reconnecting" and event.attempt > 1:
                return None
            return f"link {plain(event.state)}: {plain(event.detail)}".rstrip(": ")
        if isinstance(event, Log) and event.level in ("warning", "error"):
            return f"{event.level}: [{plain(event.stream)}] {plain(event.text)}"
        return None

    def _status(self, now: float) -> None:
        self._last_print = now
        line = plain(status_line(self.model))
        if self.tty:
            self.out.write("\r\x1b[2K" + line)
            self._line_open = True
        else:
            self.out.write(line + "\n")
        self.out.flush()

    def say(self, text: str) -> None:
        """A line of its own (above the status line on a terminal)."""
        if self._line_open:
            self.out.write("\r\x1b[2K")
            self._line_open = False
        self.out.write(plain_lines(text) + "\n")
        self.out.flush()

    def finish(self) -> None:
        if self._line_open:
            self.out.write("\n")
            self._line_open = False
        self.out.flush()

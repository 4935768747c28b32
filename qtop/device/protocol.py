"""The agent's line protocol (docs/device-protocol.md) as records, and the byte
bookkeeping that makes resuming exact.

Every agent line is ``TAG <tab> SEQ <tab> TIME [<tab> FIELD...]``: SEQ counts
the lines of its file from 0, TIME is integer microseconds of the clock named
by the file's K line. Only complete lines (ending in a newline) are parsed: a
link that drops mid-line can end a stream like a normal EOF, and the torn
tail must be read again from its first byte after the reconnect.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Line:
    """A line of the device's output with its position in its file."""

    seq: int
    time_us: int


@dataclass(frozen=True, slots=True)
class ClockLine(Line):
    """K: this file's clock; ``time + offset_us`` is on the device's uptime line."""

    clock: str
    offset_us: int
    resolution_us: int


@dataclass(frozen=True, slots=True)
class SampleLine(Line):
    """S: one sampler tick; ``slot`` numbers the tick's due time, values are raw text."""

    slot: int
    values: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class SamplerEndLine(Line):
    """Q: the sampler stopped; nothing follows in its file."""


@dataclass(frozen=True, slots=True)
class CalibrationLine(Line):
    """C: durations of the empty command through the measured path."""

    durations_us: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class PhaseLine(Line):
    """P: the run entered a phase (variant 0: before any variant)."""

    phase: str
    variant: int
    planned_iterations: int | None
    planned_duration_us: int | None
    note: str


@dataclass(frozen=True, slots=True)
class StderrLine(Line):
    """E: a line of the command's stderr, written before its process's I line."""

    process: str
    text: str


@dataclass(frozen=True, slots=True)
class AgentLogLine(Line):
    """L: a note from the agent."""

    level: str
    text: str


@dataclass(frozen=True, slots=True)
class OutputLine(Line):
    """F: a profiler file the process left, moved into the run directory before its I line.

    ``stored`` is relative to the run directory; ``original`` is where the
    process wrote it.
    """

    process: int
    stored: str
    original: str


@dataclass(frozen=True, slots=True)
class ProcessLine(Line):
    """I: one run of the command exited."""

    process: int
    phase: str
    variant: int
    index: int
    start_us: int
    end_us: int
    exit_status: int
    timed_out: bool


@dataclass(frozen=True, slots=True)
class RunEndLine(Line):
    """X: the run finished; the final sizes of the command's stdout and of the samples file."""

    reason: str
    stdout_bytes: int
    samples_bytes: int
    detail: str


class ProtocolError(ValueError):
    """A line that is not in the agent's protocol."""


def _int(text: str, what: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise ProtocolError(f"{what}: {text!r} is not an integer") from None


def _optional_int(text: str) -> int | None:
    return int(text) if text.strip().lstrip("-").isdigit() else None


def parse_line(text: str) -> Line:
    """One complete line (without its newline) as a record; ``ProtocolError`` otherwise."""
    fields = text.split("\t")
    if len(fields) < 3:
        raise ProtocolError(f"too few fields in {text[:80]!r}")
    tag = fields[0]
    seq, time_us = _int(fields[1], "seq"), _int(fields[2], "time")
    rest = fields[3:]
    if tag == "S":
        if not rest:
            raise ProtocolError("S line without a slot")
        return SampleLine(seq, time_us, _int(rest[0], "slot"), tuple(rest[1:]))
    if tag == "K" and len(rest) >= 3:
        return ClockLine(seq, time_us, rest[0], _int(rest[1], "offset"), _int(rest[2], "res"))
    if tag == "Q":
        return SamplerEndLine(seq, time_us)
    if tag == "C" and rest:
        durations = tuple(_int(d, "duration") for d in rest[0].split(",") if d.strip())
        return CalibrationLine(seq, time_us, durations)
    if tag == "P" and len(rest) >= 5:
        return PhaseLine(
            seq,
            time_us,
            rest[0],
            _int(rest[1], "variant"),
            _optional_int(rest[2]),
            _optional_int(rest[3]),
            "\t".join(rest[4:]),
        )
    if tag == "E" and len(rest) >= 2:
        return StderrLine(seq, time_us, rest[0], "\t".join(rest[1:]))
    if tag == "L" and len(rest) >= 2:
        return AgentLogLine(seq, time_us, rest[0], "\t".join(rest[1:]))
    if tag == "F" and len(rest) >= 3:
        return OutputLine(seq, time_us, _int(rest[0], "process"), rest[1], "\t".join(rest[2:]))
    if tag == "I" and len(rest) >= 8:
        return ProcessLine(
            seq,
            time_us,
            _int(rest[0], "process"),
            rest[1],
            _int(rest[2], "variant"),
            _int(rest[3], "index"),
            _int(rest[4], "start"),
            _int(rest[5], "end"),
            _int(rest[6], "status"),
            rest[7].strip() == "1",
        )
    if tag == "X" and len(rest) >= 3:
        return RunEndLine(
            seq,
            time_us,
            rest[0],
            _int(rest[1], "stdout size"),
            _int(rest[2], "samples size"),
            "\t".join(rest[3:]),
        )
    raise ProtocolError(f"unknown or short {tag!r} line")


class LineBuffer:
    """Splits a byte stream into complete lines, tracking each line's end offset.

    ``offset`` is the file position just after the last complete line handed
    out: the place to resume from. Bytes after it (a partial line) are kept
    until their newline arrives, and dropped by ``discard_partial`` when the
    stream ends, so a torn line is never parsed.
    """

    def __init__(self, offset: int = 0) -> None:
        self.offset = offset
        self._partial = bytearray()

    def feed(self, data: bytes) -> list[tuple[bytes, int]]:
        """Complete lines in ``data`` (newline removed), each with its end offset."""
        lines: list[tuple[bytes, int]] = []
        self._partial += data
        start = 0
        while True:
            newline = self._partial.find(b"\n", start)
            if newline < 0:
                break
            line = bytes(self._partial[start:newline])
            self.offset += newline + 1 - start
            lines.append((line, self.offset))
            start = newline + 1
        del self._partial[:start]
        return lines

    @property
    def pending(self) -> int:
        return len(self._partial)

    def flush(self) -> tuple[bytes, int] | None:
        """The partial last line as a line: for a file known to end there without a newline."""
        if not self._partial:
            return None
        line = bytes(self._partial)
        self.offset += len(line)
        self._partial.clear()
        return line, self.offset

    def discard_partial(self) -> int:
        """Forget a torn last line; returns how many bytes it had."""
        dropped = len(self._partial)
        self._partial.clear()
        return dropped

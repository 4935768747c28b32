"""The agent's line protocol (docs/device-protocol.md) as records, and the byte
bookkeeping that makes resuming exact.

Every agent line is ``TAG <tab> SEQ <tab> TIME [<tab> FIELD...]``: SEQ counts
the lines of its file from 0, TIME is integer microseconds of the clock named
by the file's K line. The agent escapes backslash, tab, CR and newline in
every field (``\\ \t \r \n``), so a device-side string cannot end a line or
add a field; each tag has an exact number of fields, and a line that breaks
either rule is refused whole. Only complete lines (ending in a newline) are
parsed: a link that drops mid-line can end a stream like a normal EOF, and
the torn tail must be read again from its first byte after the reconnect.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Line:
    """A line of the device's output with its position in its file."""

    seq: int
    time_us: int


@dataclass(frozen=True, slots=True)
class ClockLine(Line):
    """K: this file's clock; ``time + offset_us`` is on the device's uptime line.

    ``sleep`` is how the writer waits (``read``: a builtin timed read;
    ``sleep``: a forked sleep), ``arithmetic_bits`` its shell's integers.
    """

    clock: str
    offset_us: int
    resolution_us: int
    sleep: str = ""
    arithmetic_bits: int = 64


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
    # When a paced run's schedule said it should start (None: not paced).
    scheduled_us: int | None = None


@dataclass(frozen=True, slots=True)
class RunEndLine(Line):
    """X: the run finished; the final sizes of the command's stdout and of the samples file."""

    reason: str
    stdout_bytes: int
    samples_bytes: int
    detail: str


class ProtocolError(ValueError):
    """A line that is not in the agent's protocol."""


_ESCAPES = {"\\": "\\", "t": "\t", "n": "\n", "r": "\r"}
_ESCAPE = re.compile(r"\\(.?)", re.DOTALL)
# The number of fields after TAG, SEQ and TIME; S has a slot and one value per read.
_FIELDS = {"K": 5, "Q": 0, "C": 1, "P": 5, "E": 2, "L": 2, "F": 3, "I": 9, "X": 4}


def _unescape_one(match: re.Match[str]) -> str:
    try:
        return _ESCAPES[match.group(1)]
    except KeyError:
        raise ProtocolError(f"unknown escape {match.group(0)!r}") from None


def unescape(field: str) -> str:
    """One field as the agent had it before escaping; ``ProtocolError`` on a bad escape."""
    if "\\" not in field:
        return field
    return _ESCAPE.sub(_unescape_one, field)


def split_fields(line: str) -> list[str]:
    """The fields of one escaped record (the agent's lines, probe and control records)."""
    return [unescape(field) for field in line.split("\t")]


_INTEGER = re.compile(r"-?[0-9]{1,40}\Z")


def _int(text: str, what: str) -> int:
    if not _INTEGER.match(text):
        raise ProtocolError(f"{what}: {text[:40]!r} is not an integer")
    return int(text)


def _optional_int(text: str, what: str) -> int | None:
    return None if text == "" else _int(text, what)


def parse_line(text: str) -> Line:
    """One complete line (without its newline) as a record; ``ProtocolError`` otherwise."""
    fields = split_fields(text)
    if len(fields) < 3:
        raise ProtocolError(f"too few fields in {text[:80]!r}")
    tag = fields[0]
    seq, time_us = _int(fields[1], "seq"), _int(fields[2], "time")
    rest = fields[3:]
    if tag == "S":
        if not rest:
            raise ProtocolError("S line without a slot")
        return SampleLine(seq, time_us, _int(rest[0], "slot"), tuple(rest[1:]))
    expected = _FIELDS.get(tag)
    if expected is None:
        raise ProtocolError(f"unknown tag {tag[:20]!r}")
    if len(rest) != expected:
        raise ProtocolError(f"{tag} line with {len(rest)} fields instead of {expected}")
    if tag == "K":
        uptime_us = _int(rest[1], "uptime")
        return ClockLine(
            seq,
            time_us,
            rest[0],
            uptime_us - time_us,
            _int(rest[2], "resolution"),
            rest[3],
            _int(rest[4], "arithmetic bits"),
        )
    if tag == "Q":
        return SamplerEndLine(seq, time_us)
    if tag == "C":
        durations = tuple(_int(d, "duration") for d in rest[0].split(",") if d)
        return CalibrationLine(seq, time_us, durations)
    if tag == "P":
        return PhaseLine(
            seq,
            time_us,
            rest[0],
            _int(rest[1], "variant"),
            _optional_int(rest[2], "planned iterations"),
            _optional_int(rest[3], "planned duration"),
            rest[4],
        )
    if tag == "E":
        return StderrLine(seq, time_us, rest[0], rest[1])
    if tag == "L":
        return AgentLogLine(seq, time_us, rest[0], rest[1])
    if tag == "F":
        return OutputLine(seq, time_us, _int(rest[0], "process"), rest[1], rest[2])
    if tag == "I":
        if rest[7] not in ("0", "1"):
            raise ProtocolError(f"I line: timed_out {rest[7][:10]!r} is not 0 or 1")
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
            rest[7] == "1",
            _optional_int(rest[8], "scheduled"),
        )
    return RunEndLine(
        seq,
        time_us,
        rest[0],
        _int(rest[1], "stdout size"),
        _int(rest[2], "samples size"),
        rest[3],
    )


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

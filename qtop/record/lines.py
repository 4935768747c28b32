"""Events to the lines of a recording and back (format version 2, reads version 1).

Most events are one line each, exactly as in version 1. Three things make an
hour of a busy run small (``docs/recording-format.md`` has the details):

* a run of consecutive iterations is one ``iterations`` line, field by field
  (``qtop.record.columns``), with what follows from the rest left out: back
  to back, only the first start; ``end`` when it is ``start + latency_s``;
* a run of consecutive ``stdout`` lines is one ``logs`` line, in which a text
  that has appeared before is replaced by the number a ``text`` line gave it,
  and a text repeated on consecutive lines by ``[text, count]``. A text is only
  numbered the second time it is seen, so output that differs from run to run
  stays in the file as it was printed; stderr, warnings and the output of a
  failed process are never numbered;
* a sample's values are a list in the order of the last ``channels`` line.

``LinePacker`` and ``LineUnpacker`` carry the state those lines refer to: the
numbered texts and the current channel ids. A reader that starts in the
middle of a file primes an unpacker with the ``text`` and ``channels`` lines
before that point (the index lists them).
"""

from __future__ import annotations

import itertools
import json
import operator
import re
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, NoReturn, Union, cast

import msgspec

from qtop.events import (
    EVENT_TYPES,
    Channels,
    Event,
    Finite,
    Int64,
    Iteration,
    IterationRun,
    Log,
    LogRun,
    Sample,
    describe_error,
)
from qtop.record import columns
from qtop.record.columns import (
    ColumnError,
    FloatColumn,
    IntColumn,
    OptionalBoolColumn,
    OptionalFloatColumn,
    OptionalStrColumn,
    StrColumn,
)

MAX_RUN = 512
# Readers accept longer runs than this writer makes, but not unbounded ones: a
# damaged count must not make a reader allocate a billion events.
MAX_RUN_READ = 1 << 16
MAX_TEXTS = 4096
MAX_TEXT_CHARS = 2000
FIRST_SIGHTINGS_KEPT = 4096
# Deeper than anything qtop writes (a keyframe patch is about ten levels): a line
# nested deeper is damage, refused before any recursive code sees it.
MAX_DEPTH = 64
_STRINGS = re.compile(rb'"(?:[^"\\]|\\.)*"')
_NOT_BRACKETS = bytes(set(range(256)) - set(b"[]{}"))
_INNERMOST = re.compile(rb"\[\]|\{\}")


class LineError(ValueError):
    """A line that does not decode; ``kind`` is what its ``kind`` field said, if anything."""

    def __init__(self, message: str, kind: str | None = None) -> None:
        super().__init__(message)
        self.kind = kind


class UnknownKind(LineError):
    """A line of a kind this qtop does not know (written by a newer one)."""


# --- the line schema ------------------------------------------------------------


class SampleLine(msgspec.Struct, kw_only=True, tag_field="kind", tag="sample"):
    t: Finite | None = None
    host_t: Finite | None = None
    seq: Int64 = 0
    values: dict[str, Finite | None] | None = None
    v: list[Finite | None] | None = None


class IterationsLine(msgspec.Struct, kw_only=True, tag_field="kind", tag="iterations"):
    n: Int64
    t: Finite | None = None
    host_t: OptionalFloatColumn = None
    host_dt: IntColumn | None = None
    seq: Int64 = 0
    index: IntColumn | None = None
    phase: StrColumn | None = None
    variant: StrColumn | None = None
    start0: Finite | None = None
    start: FloatColumn | None = None
    end: FloatColumn | None = None
    latency_s: FloatColumn | None = None
    exit_status: IntColumn | None = None
    error: OptionalStrColumn = None
    metrics: list[dict[str, Finite]] | None = None
    scheduled: OptionalFloatColumn = None
    lateness_s: OptionalFloatColumn = None
    missed: OptionalBoolColumn = None
    latency_uncertainty_s: OptionalFloatColumn = None


class LogsLine(msgspec.Struct, kw_only=True, tag_field="kind", tag="logs"):
    n: Int64
    text: list[str | int | tuple[str | int, int]]
    host_t: OptionalFloatColumn = None
    host_dt: IntColumn | None = None
    seq: Int64 = 0


class TextLine(msgspec.Struct, kw_only=True, tag_field="kind", tag="text"):
    id: Int64
    text: str


class KeyframeLine(msgspec.Struct, kw_only=True, tag_field="kind", tag="keyframe"):
    """A keyframe as written: a whole state, or a patch on the keyframe at ``base``."""

    t: Finite | None = None
    host_t: Finite | None = None
    state: dict[str, Any] | None = None
    base: Int64 | None = None
    patch: Any = None


class IndexLine(msgspec.Struct, kw_only=True, tag_field="kind", tag="index"):
    """The index written at close (``qtop.record.index`` reads its fields)."""


_PLAIN = tuple(cls for kind, cls in EVENT_TYPES.items() if kind not in ("sample", "keyframe"))
_LINE_TYPES = (*_PLAIN, SampleLine, IterationsLine, LogsLine, TextLine, KeyframeLine, IndexLine)
_LINE_DECODER = msgspec.json.Decoder(Union[_LINE_TYPES])  # noqa: UP007 - a runtime tuple
_KNOWN_KINDS = frozenset({*EVENT_TYPES, "iterations", "logs", "text", "index"})
_FREE_FORM = frozenset({EVENT_TYPES["header"], EVENT_TYPES["profile_report"], KeyframeLine})

_check_str = columns.checker(str)
_check_float = columns.checker(Finite)
_check_int = columns.checker(Int64)
_check_optional_str = columns.checker(str | None)
_check_optional_float = columns.checker(Finite | None)
_check_optional_bool = columns.checker(bool | None)


def too_deep(data: bytes, limit: int = MAX_DEPTH) -> bool:
    """Whether the brackets of a JSON text nest deeper than ``limit`` (or do not match).

    Strings are taken out first (a bracket inside one is text), then every
    other byte but the brackets; each pass then removes the pairs with nothing
    inside, so ``limit`` passes empty exactly what nests at most that deep. All of
    it runs in C.
    """
    # Without an escaped quote, every other piece between quotes is outside the strings.
    outside = _STRINGS.sub(b"", data) if b'\\"' in data else b"".join(data.split(b'"')[::2])
    brackets = outside.translate(None, _NOT_BRACKETS)
    for _ in range(limit):
        if not brackets:
            return False
        brackets = _INNERMOST.sub(b"", brackets)
    return bool(brackets)


def kind_of(data: bytes) -> str | None:
    """The ``kind`` a line starts with, without parsing it (writers put it first)."""
    if not data.startswith(b'{"kind":"'):
        return None
    end = data.find(b'"', 9)
    return data[9:end].decode("ascii", "replace") if end > 9 else None


# JSON escapes the C0 controls itself; these it writes raw, and a terminal acts on
# some of them (a C1 CSI is ESC [ in one character) or reorders what follows.
_RAW_CONTROLS = re.compile("[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _json_escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def dumps_text(data: dict[str, Any]) -> str:
    """One line of compact JSON with its newline; no NaN (raises ValueError).

    Non-ASCII text is written as UTF-8, except the characters a terminal acts on
    (DEL, C1 controls, bidirectional overrides), which are JSON escapes: the same
    string when read back, and nothing a ``cat`` of the file can act on.
    """
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    if not text.isascii() or "\x7f" in text:
        text = _RAW_CONTROLS.sub(_json_escape, text)
    return text + "\n"


def dumps(data: dict[str, Any]) -> bytes:
    """One line: ``dumps_text`` as UTF-8."""
    return dumps_text(data).encode("utf-8")


# --- writing ----------------------------------------------------------------------


def _packable_iteration(event: Event) -> bool:
    return type(event) is Iteration and event.t is not None and event.t == event.end


def _packable_log(event: Event) -> bool:
    return (
        type(event) is Log
        and event.t is None
        and event.stream == "stdout"
        and event.level == "info"
    )


class Line(NamedTuple):
    """A line to write, its kind, and the events it holds."""

    data: bytes
    kind: str
    events: Sequence[Event] = ()


class LinePacker:
    """Events to lines, remembering the numbered texts and the current channels."""

    def __init__(self) -> None:
        self.text_ids: dict[str, int] = {}
        self._first_sightings: OrderedDict[str, None] = OrderedDict()
        self.channel_ids: tuple[str, ...] | None = None

    def lines(self, events: Sequence[Event], literal_logs: bool = False) -> list[Line]:
        """The lines for ``events`` in order; ``literal_logs`` keeps every output text whole."""
        out: list[Line] = []
        position = 0
        while position < len(events):
            event = events[position]
            packable: Callable[[Event], bool] | None = None
            if _packable_iteration(event):
                packable = _packable_iteration
            elif _packable_log(event):
                packable = _packable_log
            if packable is not None:
                end = position + 1
                while (
                    end < len(events)
                    and end - position < MAX_RUN
                    and packable(events[end])
                    and events[end].seq == events[end - 1].seq + 1  # type: ignore[attr-defined]
                ):
                    end += 1
                if end - position >= 2:
                    run = events[position:end]
                    if packable is _packable_iteration:
                        out.append(Line(dumps(_iterations(run)), "iterations", run))  # type: ignore[arg-type]
                    else:
                        out.extend(self._logs(run, literal_logs))  # type: ignore[arg-type]
                    position = end
                    continue
            out.append(Line(self.single(event), event.kind, (event,)))
            position += 1
        return out

    def single(self, event: Event) -> bytes:
        data = event.to_dict()
        if isinstance(event, Channels):
            self.channel_ids = tuple(channel.id for channel in event.channels)
        elif isinstance(event, Sample) and self.channel_ids is not None:
            values = event.values
            if len(values) == len(self.channel_ids) and tuple(values) == self.channel_ids:
                del data["values"]
                data["v"] = list(values.values())
        return dumps(data)

    def text_line(self, identifier: int, text: str) -> bytes:
        return dumps({"kind": "text", "id": identifier, "text": text})

    def _number(self, text: str, definitions: list[Line]) -> int | None:
        known = self.text_ids.get(text)
        if known is not None:
            return known
        if len(text) > MAX_TEXT_CHARS or len(self.text_ids) >= MAX_TEXTS:
            return None
        if text in self._first_sightings:
            del self._first_sightings[text]
            identifier = self.text_ids[text] = len(self.text_ids)
            definitions.append(Line(self.text_line(identifier, text), "text"))
            return identifier
        self._first_sightings[text] = None
        if len(self._first_sightings) > FIRST_SIGHTINGS_KEPT:
            self._first_sightings.popitem(last=False)
        return None

    def _logs(self, run: Sequence[Log], literal: bool) -> list[Line]:
        definitions: list[Line] = []
        items: list[Any] = []
        for log in run:
            number = None if literal else self._number(log.text, definitions)
            item: Any = log.text if number is None else number
            previous = items[-1] if items else None
            if not literal and previous is not None:
                if isinstance(previous, list) and columns.identical(previous[0], item):
                    previous[1] += 1
                    continue
                if columns.identical(previous, item):
                    items[-1] = [item, 2]
                    continue
            items.append(item)
        data: dict[str, Any] = {"kind": "logs", "n": len(run)}
        data.update(columns.encode_host_times([log.host_t for log in run]))
        data["seq"] = run[0].seq
        data["text"] = items
        return [*definitions, Line(dumps(data), "logs", run)]


def _iterations(run: Sequence[Iteration]) -> dict[str, Any]:
    first = run[0]
    data: dict[str, Any] = {"kind": "iterations", "t": first.t, "n": len(run)}
    data.update(columns.encode_host_times([it.host_t for it in run]))
    data["seq"] = first.seq

    def column(name: str, values: list[Any], default: Any, integers: bool = False) -> None:
        encoded = columns.encode(values, default, integers)
        if encoded is not None:
            data[name] = encoded

    column("index", [it.index for it in run], 0, integers=True)
    column("phase", [it.phase for it in run], "measure")
    column("variant", [it.variant for it in run], "")
    starts = [it.start for it in run]
    ends = [it.end for it in run]
    latencies = [it.latency_s for it in run]
    if all(columns.identical(starts[k], ends[k - 1]) for k in range(1, len(run))):
        data["start0"] = starts[0]
    else:
        data["start"] = columns.encode(starts, None)
    chained = zip(starts, latencies, ends, strict=True)
    if not all(columns.identical(s + lat, e) for s, lat, e in chained):
        data["end"] = columns.encode(ends, None)
    data["latency_s"] = columns.encode(latencies, None, millionths=True)
    column("exit_status", [it.exit_status for it in run], 0, integers=True)
    column("error", [it.error for it in run], None)
    if any(it.metrics for it in run):
        data["metrics"] = [it.metrics for it in run]
    uncertainties = [it.latency_uncertainty_s for it in run]
    if any(value is not None for value in uncertainties):
        data["latency_uncertainty_s"] = columns.encode(uncertainties, None)
    if any(it.scheduled is not None for it in run):
        for name in ("scheduled", "lateness_s"):
            values = [getattr(it, name) for it in run]
            data[name] = columns.encode(values, None, millionths=None not in values)
        column("missed", [it.missed for it in run], None)
    return data


# --- reading ----------------------------------------------------------------------


class LineUnpacker:
    """Lines to events, given the numbered texts and channels of the lines before."""

    def __init__(self) -> None:
        self.texts: dict[int, str] = {}
        self.channel_ids: tuple[str, ...] | None = None

    def parse(self, data: bytes) -> Any:
        """The line as its schema type; raises LineError (UnknownKind for a newer kind)."""
        try:
            line = _LINE_DECODER.decode(data)
        except msgspec.ValidationError as exc:
            kind = kind_of(data)
            if kind is None:
                try:
                    found = msgspec.json.decode(data)
                except (msgspec.DecodeError, RecursionError):
                    found = None
                kind = found.get("kind") if isinstance(found, dict) else None
                kind = kind if isinstance(kind, str) else None
            if kind is not None and kind not in _KNOWN_KINDS:
                raise UnknownKind(f"unknown kind {kind!r}", kind) from None
            raise LineError(describe_error(kind or "line", exc), kind) from None
        except msgspec.DecodeError as exc:
            raise LineError(f"not JSON: {exc}") from None
        except RecursionError:
            raise LineError(f"nested more than {MAX_DEPTH} levels deep") from None
        # Lines with free-form parts (a profile, a report, a model state) are the ones whose
        # depth reaches code that recurses: anything deeper than qtop writes is damage.
        if (
            type(line) in _FREE_FORM
            and data.count(b"[") + data.count(b"{") > MAX_DEPTH
            and too_deep(data)
        ):
            raise LineError(
                f"nested more than {MAX_DEPTH} levels deep, or its brackets do not match",
                kind_of(data),
            )
        return line

    def events(self, line: Any) -> list[Event]:
        """The events a parsed line stands for (none for text, index and keyframe lines)."""
        found = self.items(line)
        return found if isinstance(found, list) else found.events()

    def items(self, line: Any) -> list[Event] | IterationRun | LogRun:
        """Like ``events``, but a packed run stays one object (see ``IterationRun``)."""
        kind = type(line)
        expand = _EXPANDERS.get(kind)
        if expand is None:
            if kind is Channels:
                self.channel_ids = tuple(channel.id for channel in line.channels)
            return [line]
        try:
            return expand(self, line)
        except ColumnError as exc:
            raise LineError(str(exc), kind.__struct_config__.tag) from None  # type: ignore[attr-defined]
        except msgspec.ValidationError as exc:
            tag = kind.__struct_config__.tag  # type: ignore[attr-defined]
            raise LineError(describe_error(str(tag), exc), str(tag)) from None

    def _text(self, line: TextLine) -> list[Event]:
        self.texts[line.id] = line.text
        return []

    def _sample(self, line: SampleLine) -> list[Event]:
        if line.v is not None:
            if line.values is not None:
                raise ColumnError("sample: both 'values' and 'v'")
            ids = self.channel_ids
            if ids is None:
                raise ColumnError("sample.v: no channels line before it to name the values")
            if len(ids) != len(line.v):
                raise ColumnError(
                    f"sample.v: {len(line.v)} values for the {len(ids)} channels of the "
                    "channels line before it"
                )
            values = dict(zip(ids, line.v, strict=True))
        else:
            values = line.values if line.values is not None else {}
        return [Sample(t=line.t, host_t=line.host_t, seq=line.seq, values=values)]

    def _log_run(self, line: LogsLine) -> LogRun:
        n = _run_length(line.n, "logs")
        texts: list[str] = []
        append, numbered = texts.append, self.texts
        # Most items are the numbers of texts seen before (a command's output repeats).
        for item in line.text:
            kind = type(item)
            if kind is int:
                try:
                    append(numbered[item])  # type: ignore[index]
                except KeyError:
                    _no_text(item)  # type: ignore[arg-type]
            elif kind is str:
                append(item)  # type: ignore[arg-type]
            else:
                text, count = cast(tuple[str | int, int], item)
                if count < 1 or len(texts) + count > n:
                    raise ColumnError(f"logs.text: a repeat of {count} after {len(texts)} of {n}")
                if type(text) is int:
                    known = numbered.get(text)
                    if known is None:
                        _no_text(text)
                    text = known
                texts.extend(itertools.repeat(cast(str, text), count))
        if len(texts) != n:
            raise ColumnError(f"logs.text: {len(texts)} texts for {n} lines")
        hosts = columns.host_times(line.host_t, line.host_dt, n, "logs")
        return LogRun(hosts=hosts, seq=line.seq, texts=texts)


def _no_text(number: int) -> NoReturn:
    raise ColumnError(f"logs.text: text {number} has no text line before it")


def _nothing(_: LineUnpacker, __: Any) -> list[Event]:
    return []


_EXPANDERS: dict[type, Any] = {
    IterationsLine: lambda _, line: _iteration_run(line),
    LogsLine: LineUnpacker._log_run,
    SampleLine: LineUnpacker._sample,
    TextLine: LineUnpacker._text,
    KeyframeLine: _nothing,
    IndexLine: _nothing,
}


def _run_length(n: int, kind: str) -> int:
    if not 1 <= n <= MAX_RUN_READ:
        raise ColumnError(f"{kind}.n: {n} is not a run length (1 to {MAX_RUN_READ})")
    return n


def _iteration_run(line: IterationsLine) -> IterationRun:
    n = _run_length(line.n, "iterations")
    hosts = columns.host_times(line.host_t, line.host_dt, n, "iterations")
    decode = columns.decode
    # Absent columns are their default: no call needed (most lines leave several out).
    index = (
        [0] * n if line.index is None else decode(line.index, n, 0, "iterations.index", _check_int)
    )
    phase = (
        ["measure"] * n
        if line.phase is None
        else decode(line.phase, n, "measure", "iterations.phase", _check_str)
    )
    variant = (
        [""] * n
        if line.variant is None
        else decode(line.variant, n, "", "iterations.variant", _check_str)
    )
    if line.latency_s is None:
        raise ColumnError("iterations.latency_s: missing")
    latency = decode(line.latency_s, n, 0.0, "iterations.latency_s", _check_float, numbers=True)
    status = (
        [0] * n
        if line.exit_status is None
        else decode(line.exit_status, n, 0, "iterations.exit_status", _check_int)
    )
    error = (
        [None] * n
        if line.error is None
        else decode(line.error, n, None, "iterations.error", _check_optional_str)
    )
    metrics: list[dict[str, float]] | list[None] = [None] * n
    if line.metrics is not None:
        if len(line.metrics) != n:
            raise ColumnError(f"iterations.metrics: {len(line.metrics)} values for {n} events")
        metrics = line.metrics
    paced = _paced_columns(line, n)
    uncertainty = None
    if line.latency_uncertainty_s is not None:
        uncertainty = columns.decode(
            line.latency_uncertainty_s, n, None, "iterations.latency_uncertainty_s",
            _check_optional_float, numbers=True,
        )  # fmt: skip
    given_end = None
    if line.end is not None:
        given_end = columns.decode(line.end, n, 0.0, "iterations.end", _check_float, True)
    if line.start0 is not None:
        if line.start is not None:
            raise ColumnError("iterations: both start0 and start")
        # Back to back: each starts where the one before ended (start0 + latency + ...,
        # added in order, as the writer checked).
        if given_end is not None:
            starts = [line.start0, *given_end[:-1]]
            ends = given_end
        else:
            cursor = list(itertools.accumulate(latency, operator.add, initial=line.start0))
            starts, ends = cursor[:-1], cursor[1:]
    else:
        if line.start is None:
            raise ColumnError("iterations: start0 or start is needed")
        starts = columns.decode(line.start, n, 0.0, "iterations.start", _check_float, True)
        ends = given_end if given_end is not None else list(map(operator.add, starts, latency))
    return IterationRun(
        hosts=hosts,
        seq=line.seq,
        index=index,
        phase=phase,
        variant=variant,
        starts=starts,
        ends=ends,
        latency=latency,
        status=status,
        error=error,
        metrics=metrics,
        scheduled=paced[0],
        lateness=paced[1],
        missed=paced[2],
        uncertainty=uncertainty,
        plain=(line.exit_status is None and line.metrics is None and paced[1] is None) or None,
    )


def _paced_columns(line: IterationsLine, n: int) -> tuple[Any, Any, Any]:
    """A paced run's scheduled, lateness and missed columns (``None`` for a run without)."""
    if line.scheduled is None and line.lateness_s is None and line.missed is None:
        return None, None, None
    scheduled = columns.decode(
        line.scheduled, n, None, "iterations.scheduled", _check_optional_float, numbers=True
    )
    lateness = columns.decode(
        line.lateness_s, n, None, "iterations.lateness_s", _check_optional_float, numbers=True
    )
    missed = columns.decode(line.missed, n, None, "iterations.missed", _check_optional_bool)
    return scheduled, lateness, missed

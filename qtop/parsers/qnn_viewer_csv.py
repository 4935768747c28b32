"""``qnn-profile-viewer --output X.csv``: preamble, ``, ``-separated header, a group per execute.

Rows are ``[Msg Timestamp,] Message, Time, Unit, Timing Source, Event Level,
Event Identifier``; every cell is stripped (the header uses comma+space, the
rows quoted in tutorials do not). EXECUTE rows repeat once per inference: a
ROOT row whose identifier was already seen starts the next execute, which
covers both split points third-party parsers use (the ``Number of HVX
threads used`` row and ``Accelerator (execute) time (cycles)``).

ONNX Runtime's QNN EP writes a look-alike CSV: the same header without spaces
after the commas, ``UNKNOWN`` timestamps, the QNN event type (NODE, BACKEND,
...) in ``Message``, maybe an ``ONNX Source Ops`` column. Any of these signs
refuses the file with ``OnnxRuntimeCsvError`` rather than misreading it.
"""

from __future__ import annotations

import csv
import re

from qtop.parsers.common import (
    LONGEST_LINE,
    ExecuteDraft,
    OpDraft,
    ProfileBuilder,
    ProfilerParseError,
    has_op_id,
    normalize_unit,
    parse_number,
    split_lines,
    split_op_identifier,
)
from qtop.profiling.model import TIME_UNITS_IN_US, Metric, Number, ParsedProfile, metric_key

KIND = "qnn-viewer-csv"

SECTION_NAMES: dict[str, str] = {
    "INIT": "Init Stats",
    "COMPOSE GRAPHS": "Compose Graphs Stats",
    "FINALIZE": "Finalize Stats",
    "DE-INIT": "De-Init Stats",
    "EXECUTE IPS": "Execute Stats (Overall)",
    "LIB-LOAD": "Lib-Load Stats",
}
_EXECUTE = "EXECUTE"
_ORT_MESSAGES = frozenset(
    {
        "BACKEND",
        "NODE",
        "UNKNOWN",
        "EXECUTE QUEUE WAIT",
        "EXECUTE PREPROCESS",
        "EXECUTE DEVICE",
        "EXECUTE POSTPROCESS",
    }
)
_HEADER = re.compile(r'^[ \t]*(?:"[ \t]*)?Msg Timestamp[ \t]*(?:"[ \t]*)?,', re.IGNORECASE)
_ORT_HEADER = re.compile(r"^\s*Msg Timestamp,Message,", re.IGNORECASE)
_GRAPH_IDENTIFIER = re.compile(r"^Graph\s+[0-9]+\s*:\s*(?P<name>.*)$")
# INFERRED: formats.md §1d shows no linting CSV; if linting fields come as
# sub-events they most likely reuse the text reader's identifiers.
_LINTING_FIELDS = {
    metric_key("Wait (Scheduler) time"): "wait_cycles",
    metric_key("Overlap time"): "overlap_cycles",
    metric_key("Overlap (wait) time"): "overlap_wait_cycles",
}


class QnnViewerCsvError(ProfilerParseError):
    """A qnn-profile-viewer CSV with no rows qtop can use."""


class OnnxRuntimeCsvError(QnnViewerCsvError):
    """ONNX Runtime's QNN EP CSV, which only looks like the viewer's."""


def parse(data: str, source: str = "") -> ParsedProfile:
    """Parse a viewer CSV; raises ``OnnxRuntimeCsvError`` for ONNX Runtime's look-alike."""
    lines, terminated = split_lines(data)
    builder = ProfileBuilder(KIND, source)
    if lines and not terminated:
        # A CSV row has no self-delimiting end: a cut row would read as a smaller number.
        builder.warn("cut_line", "the last line has no line end and may be cut short; not read")
        lines.pop()
    header_at = next((i for i, line in enumerate(lines) if _HEADER.match(line)), None)
    if header_at is not None:
        _check_header(lines[header_at], header_at + 1, source)
        _read_preamble(lines[:header_at], builder)
        start = header_at + 1
    else:
        start = 0
    reader = _RowReader(builder, source)
    for number in range(start, len(lines)):
        reader.feed(number + 1, lines[number])
    if not builder.has_content:
        raise QnnViewerCsvError(
            source,
            "no qnn-profile-viewer CSV rows found (expected rows like "
            "'EXECUTE, 1851, US, BACKEND, ROOT, QNN accelerator (execute) time')",
            "pass the file written by 'qnn-profile-viewer --input_log X.log --output X.csv', "
            "or choose the right format with --kind",
        )
    return builder.build()


def _onnxruntime(source: str, why: str, line: int) -> OnnxRuntimeCsvError:
    return OnnxRuntimeCsvError(
        source,
        f"this is ONNX Runtime's QNN EP profiling CSV ({why}), not qnn-profile-viewer output; "
        "its rows mean different things, so qtop does not read it",
        "profile with qnn-net-run --profiling_level basic|detailed and convert the log with "
        "'qnn-profile-viewer --input_log qnn-profiling-data_0.log --output profile.csv'",
        line,
    )


def _check_header(header: str, line: int, source: str) -> None:
    if "onnx source ops" in header.lower():
        raise _onnxruntime(source, "it has an 'ONNX Source Ops' column", line)
    if _ORT_HEADER.match(header):
        raise _onnxruntime(source, "its header has no space after the commas", line)


def _read_preamble(lines: list[str], builder: ProfileBuilder) -> None:
    # INFERRED: formats.md §1d has not seen the preamble verbatim ("version and
    # source info"); keep key: value lines, skip the rest.
    for line in lines:
        key, colon, value = line.partition(":")
        if colon and key.strip() and len(line) <= LONGEST_LINE:
            builder.info[key.strip()] = value.strip()


class _RowReader:
    def __init__(self, builder: ProfileBuilder, source: str) -> None:
        self.builder = builder
        self.source = source
        self.execute: ExecuteDraft | None = None
        self.seen_roots: set[tuple[str, str, str]] = set()
        self.op: OpDraft | None = None

    def feed(self, number: int, line: str) -> None:
        if not line.strip():
            return
        row = _split_row(line)
        if row is None:
            self.builder.unknown(number, line)
            return
        timestamp, message, time_cell, unit_cell, timing_source, level, identifier = row
        if message in _ORT_MESSAGES:
            raise _onnxruntime(self.source, f"a row's Message is {message}", number)
        if timestamp.upper() == "UNKNOWN":
            raise _onnxruntime(self.source, "a row's Msg Timestamp is UNKNOWN", number)
        value = parse_number(time_cell)
        if value is None or not identifier:
            self.builder.unknown(number, line)
            return
        if level == "UNKNOWN SUB-EVENT":
            return  # compile stages ('Graph Sequencing for Target', ...): not per execute
        unit = normalize_unit(unit_cell)
        if message == _EXECUTE:
            self._execute_row(number, line, level, identifier, value, unit, timing_source)
            return
        graph = ""
        graph_match = _GRAPH_IDENTIFIER.match(identifier)
        if graph_match is not None:
            graph, identifier = graph_match.group("name"), "NetRun"
        section = SECTION_NAMES.get(message, message.title())
        self.builder.section(section, graph).append(
            Metric(name=identifier, value=value, unit=unit, source=timing_source)
        )

    def _execute_row(
        self,
        number: int,
        line: str,
        level: str,
        identifier: str,
        value: Number,
        unit: str,
        timing_source: str,
    ) -> None:
        if level == "ROOT":
            self._root(identifier, value, unit, timing_source)
        elif level == "SUB-EVENT":
            self._sub_event(number, line, identifier, value, unit)
        else:
            self.builder.unknown(number, line)

    def _root(self, identifier: str, value: Number, unit: str, timing_source: str) -> None:
        graph = ""
        graph_match = _GRAPH_IDENTIFIER.match(identifier)
        if graph_match is not None:
            graph, identifier = graph_match.group("name"), "NetRun"
        seen_key = (metric_key(identifier), unit, timing_source)
        execute = self.execute
        if (
            execute is None
            or seen_key in self.seen_roots
            or (graph and execute.graph and graph != execute.graph)
        ):
            execute = self.execute = self.builder.new_execute(len(self.builder.executes) + 1)
            self.seen_roots = set()
        if graph and not execute.graph:
            execute.graph = graph
        self.seen_roots.add(seen_key)
        execute.metrics.append(
            Metric(name=identifier, value=value, unit=unit, source=timing_source)
        )
        self.op = None

    def _sub_event(self, number: int, line: str, identifier: str, value: Number, unit: str) -> None:
        field_name = _LINTING_FIELDS.get(metric_key(identifier))
        if field_name is not None and not has_op_id(identifier):
            if self.op is None or unit not in ("cycles", ""):
                self.builder.unknown(number, line)
            else:
                setattr(self.op, field_name, value)
            return
        if self.execute is None:
            self.execute = self.builder.new_execute(len(self.builder.executes) + 1)
        op_id, name = split_op_identifier(identifier)
        op = OpDraft(name=name, op_id=op_id)
        if unit in TIME_UNITS_IN_US:
            op.time_us = value * TIME_UNITS_IN_US[unit]
        else:
            op.cycles = value
        self.execute.ops.append(op)
        self.op = op


def _split_row(line: str) -> tuple[str, str, str, str, str, str, str] | None:
    """(timestamp, message, time, unit, timing source, level, identifier).

    The timestamp column is optional (tutorials quote rows without it); an
    identifier holding commas is joined back together.
    """
    if len(line) > LONGEST_LINE:
        return None
    if '"' in line or "\x00" in line:
        try:
            cells = [cell.strip() for cell in next(csv.reader([line], skipinitialspace=True))]
        except (csv.Error, StopIteration):
            return None
    else:
        # Without quotes (every row the viewer writes) the csv module splits on commas only.
        cells = [cell.strip() for cell in line.split(",")]
    for offset in (1, 0):
        if len(cells) < offset + 6:
            continue
        message = cells[offset].upper()
        if message == _EXECUTE or message in SECTION_NAMES or message in _ORT_MESSAGES:
            rest = cells[offset + 1 : offset + 5]
            identifier = ",".join(cells[offset + 5 :]).strip()
            timestamp = cells[0] if offset else ""
            return (
                timestamp,
                message,
                rest[0],
                rest[1],
                rest[2].upper(),
                rest[3].upper(),
                identifier,
            )
    return None

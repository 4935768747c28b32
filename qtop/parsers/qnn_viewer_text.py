"""``qnn-profile-viewer`` text output: basic report, detailed executes, linting layout.

One line-type-driven pass, never position-driven (formats.md §8.3): the
basic report with ``--- `` (QNN 2.13) or underlined (2.45) headings; the
detailed ``Execute Stat N [(graph NAME)]`` blocks with indented per-op
``(cycles)`` lines; the linting sub-lines in both spellings (``Wait
(Scheduler) time : N  cycles`` on its own line, or the seed's one-line ``NAME :
N cycles Wait(Scheduler) N Resources: DMA``), overlap contributor lists, and
SNPE diagview's ``Layer Times`` variant of the same layout.
"""

from __future__ import annotations

import re

from qtop.parsers.common import (
    LONGEST_LINE,
    ExecuteDraft,
    OpDraft,
    ProfileBuilder,
    ProfilerParseError,
    has_op_id,
    is_known_unit,
    matched_number,
    normalize_unit,
    parse_number,
    parse_resources,
    split_lines,
    split_op_identifier,
)
from qtop.profiling.model import TIME_UNITS_IN_US, Metric, Number, ParsedProfile

KIND = "qnn-viewer-text"

_VALUE_LINE = re.compile(
    r"^(?P<indent>[ \t]*)(?P<name>\S(?:.*?\S)?)\s*:\s*"
    r"(?P<value>[-+]?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)"
    r"(?:\s*(?P<unit>[A-Za-z%µ][A-Za-z%µ/]*))?"
    r"(?:\s*:\s*(?P<runtime>[A-Za-z][A-Za-z0-9_]*))?"
    r"\s*(?P<tail>(?:Wait|Overlap|Resources)\b.*)?$"
)
_EXECUTE_HEADER = re.compile(
    r"^\s*Execute\s+Stat\s+(?P<index>[0-9]{1,9})\b(?:\s*\(\s*graph\s+(?P<graph>[^\s)]+)[^)]*\))?"
)
_UNDERLINE = re.compile(r"^\s*-{3,}\s*$")
_DASH_HEADING = re.compile(r"^\s*---(?P<title>.*)$")
_GRAPH_TITLE = re.compile(r"^Graph\s+[0-9]+\s*\((?P<name>.*)\)$")
_HEADING = re.compile(r"^(?P<title>[A-Za-z][^:]*):[ \t]*$")
_PREAMBLE = re.compile(
    r"^(?P<key>Input Log File Location|Log File Created|Time Scale|Epoch Timestamp|"
    r"Generated using|Software library version)\s*:(?P<value>.*)$",
    re.IGNORECASE,
)
_VERSION_LINE = re.compile(r"^(?P<key>[A-Za-z][\w.+-]*)\s*:\s*(?P<value>v[0-9]+\.[0-9]+\S*)\s*$")
_BASIC_SOURCE = re.compile(r"^(?P<source>NetRun|Backend)\b\s*(?P<rest>.*)$")
_INLINE_WAIT = re.compile(
    r"Wait\s*\(\s*Scheduler\s*\)(?:\s*time)?\s*:?\s*(?P<value>[0-9]{1,18})(?:\s*cycles)?", re.I
)
_INLINE_OVERLAP_WAIT = re.compile(
    r"Overlap\s*\(\s*wait\s*\)(?:\s*time)?\s*:?\s*(?P<value>[0-9]{1,18})(?:\s*cycles)?", re.I
)
_INLINE_OVERLAP = re.compile(
    r"Overlap(?!\s*\()(?:\s*time)?\s*:?\s*(?P<value>[0-9]{1,18})(?:\s*cycles)?", re.I
)
_INLINE_RESOURCES = re.compile(r"Resources\s*:\s*(?P<value>.*)$", re.I)
_LINTING_START = re.compile(r"^\s*(?:Wait|Overlap|Resources)\b", re.I)

_KNOWN_NOISE = ("printing all data received from back end", "unknown event type")
_UNGROUPED = "Ungrouped"


class QnnViewerTextError(ProfilerParseError):
    """qnn-profile-viewer text that holds no stats, executes or ops."""


def parse(data: str, source: str = "", ops: bool = True) -> ParsedProfile:
    """Parse viewer text (any SDK layout); raises ``QnnViewerTextError`` if nothing is usable.

    With ``ops=False`` the per-op lines are recognised but not kept (nor their
    linting sub-lines read): the graphs, executes, root metrics and sections
    are exactly those of the full parse, for a fraction of the work. The live
    session needs only those per process (each execute's latency, the de-init
    time); the full parse is for the reports it sends now and then.
    """
    lines, terminated = split_lines(data)
    parser = _TextParser(source, ops)
    last = len(lines) - 1
    feed = parser.feed
    for number, line in enumerate(lines):
        if number == last and not terminated and not _complete_last_line(line):
            parser.builder.warn(
                "cut_line",
                "the last line has no line end and may be cut short; it was not read",
                number + 1,
            )
            break
        feed(number + 1, line)
    if not parser.builder.has_content:
        raise QnnViewerTextError(
            source,
            "no qnn-profile-viewer stats, 'Execute Stat' blocks or per-op lines found",
            "pass the text written by 'qnn-profile-viewer --input_log qnn-profiling-data_0.log' "
            "(or choose the right format with --kind)",
        )
    return parser.builder.build()


def _complete_last_line(line: str) -> bool:
    """A cut line must not be read as a smaller number: only a line ending in a unit is whole."""
    if not line.strip() or _UNDERLINE.match(line):
        return True
    match = _VALUE_LINE.match(line) if len(line) <= LONGEST_LINE else None
    return bool(
        match
        and match.group("unit")
        and is_known_unit(match.group("unit"))
        and not match.group("tail")
        and not match.group("runtime")
    )


# First characters a line needs for each pattern to have a chance (IGNORECASE ones
# included); anything else, and any non-ASCII first character, goes to the regex.
# Most lines of a render are values and ops: these tests keep them off the
# patterns they cannot match, which is most of the parser's time.
_LINTING_FIRST = frozenset("WwOoRr")
_NOISE_FIRST = frozenset("PpUu")
_PREAMBLE_FIRST = frozenset("IiLlTtEeGgSs")
# Every first character ``_structure`` looks further at (noise, underline, execute
# header, preamble, dash heading); a line starting with none of them can still be a
# version line (it holds a 'v') or a heading (it ends in ':').
_STRUCTURE_FIRST = _NOISE_FIRST | _PREAMBLE_FIRST | frozenset("-E")


def _may_start(first: str, allowed: frozenset[str]) -> bool:
    return first in allowed or not first.isascii()


class _TextParser:
    def __init__(self, source: str, ops: bool = True) -> None:
        self.builder = ProfileBuilder(KIND, source)
        self.ops = ops
        self.section_name: str | None = None
        self.section_graph = ""
        self.execute: ExecuteDraft | None = None
        self.op: OpDraft | None = None
        self.contributors: list[str] | None = None

    def feed(self, number: int, line: str) -> None:
        stripped = line.strip()
        if not stripped:
            self.contributors = None
            return
        if len(line) > LONGEST_LINE:
            self.builder.unknown(number, line)
            return
        first = stripped[0]
        ascii_first = first.isascii()
        if (first in _LINTING_FIRST or not ascii_first) and _LINTING_START.match(stripped):
            # Before headings: an empty 'Resources :' would otherwise read as one.
            if self.ops and not self._linting_fields(stripped):
                self.builder.unknown(number, line)
            return
        # Most lines of a render are values: they skip the structure tests when none can match.
        if (
            first in _STRUCTURE_FIRST or not ascii_first or stripped[-1] == ":" or "v" in stripped
        ) and self._structure(stripped, first):
            self.contributors = None
            return
        match = _VALUE_LINE.match(line) if ":" in line else None
        if match is not None:
            self.contributors = None
            self._value_line(number, match)
            return
        if not self.ops:
            return
        if self.contributors is not None and self.op is not None:
            # Background ops that overlapped the previous op (up to 10 names, indented).
            self.contributors.append(stripped)
            return
        self.builder.unknown(number, line)

    def _structure(self, stripped: str, first: str) -> bool:
        """Headings, preamble and known filler; True when the line was one of them."""
        if _may_start(first, _NOISE_FIRST) and stripped.lower().startswith(_KNOWN_NOISE):
            return True
        if first == "-" and _UNDERLINE.match(stripped):
            return True
        header = _EXECUTE_HEADER.match(stripped) if first == "E" else None
        if header is not None:
            graph = header.group("graph") or ""
            self.execute = self.builder.new_execute(int(header.group("index")), graph)
            self.op = None
            return True
        preamble = None
        if _may_start(first, _PREAMBLE_FIRST):
            preamble = _PREAMBLE.match(stripped)
        if preamble is None and "v" in stripped:
            preamble = _VERSION_LINE.match(stripped)
        if preamble is not None:
            self.builder.info[preamble.group("key")] = preamble.group("value").strip()
            return True
        if stripped.startswith("---"):
            dash = _DASH_HEADING.match(stripped)
            if dash is not None:
                self._heading(dash.group("title").strip().rstrip(":").rstrip())
            return True
        heading = _HEADING.match(stripped) if stripped[-1] == ":" else None
        if heading is not None:
            self._heading(heading.group("title").rstrip())
            return True
        return False

    def _heading(self, title: str) -> None:
        """A heading in either style (``--- X:`` in 2.13, ``X:`` underlined in 2.45)."""
        graph = _GRAPH_TITLE.match(title)
        if graph is not None:
            # INFERRED: formats.md §1a shows 'Graph N (name)' only after '--- ' (2.13);
            # 2.45's underlined style is assumed to print it as a heading of its own.
            self.section_graph = graph.group("name")
            return
        lowered = title.lower()
        if not title or lowered.endswith("statistics") or lowered == "total inference time":
            return  # the report's title, or a sub-heading that does not start a section
        self.execute = None
        self.op = None
        self.section_name = title
        self.section_graph = ""

    def _value_line(self, number: int, match: re.Match[str]) -> None:
        name, raw_value, raw_unit, tail, runtime = match.group(
            "name", "value", "unit", "tail", "runtime"
        )
        # Up to 18 digits is an int within any bound qtop sets: no need to ask matched_number.
        value: Number
        if len(raw_value) < 19 and raw_value.isdigit():
            value = int(raw_value)
        else:
            matched = matched_number(raw_value)
            if matched is None:
                self.builder.unknown(number, match.string)
                return
            value = matched
        basic = _BASIC_SOURCE.match(name) if name.startswith(("NetRun", "Backend")) else None
        if has_op_id(name) or (
            basic is None
            and self.execute is not None
            and name.endswith("(cycles)")
            and len(match.group("indent").expandtabs(4)) >= 4
        ):
            self._op_line(name, value, normalize_unit(raw_unit or ""), tail)
            return
        if tail or runtime:
            self.builder.unknown(number, match.string)
            return
        self._root_metric(name, basic, value, normalize_unit(raw_unit or ""))

    def _op_line(self, name: str, value: Number, unit: str, tail: str | None) -> None:
        execute = self.execute
        if execute is None:
            # Ops outside an 'Execute Stat' block (SNPE 'Layer Times', fragments): one execute.
            execute = self.execute = self.builder.new_execute(len(self.builder.executes) + 1)
        if not self.ops:
            return
        op_id, label = split_op_identifier(name)
        op = OpDraft(name=label, op_id=op_id)
        if unit in TIME_UNITS_IN_US:
            op.time_us = value * TIME_UNITS_IN_US[unit]
        else:
            op.cycles = value
        execute.ops.append(op)
        self.op = op
        if tail:
            self._linting_fields(tail)
            self.contributors = None

    def _linting_fields(self, text: str) -> bool:
        """Wait / Overlap / Resources fields of the current op, on their own line or inline.

        Returns False when none fit. After an overlap line the names that
        follow are that overlap's contributors.
        """
        op = self.op
        self.contributors = None
        if op is None:
            return False
        resources = _INLINE_RESOURCES.search(text)
        fields = text[: resources.start()] if resources else text
        found = resources is not None
        if resources is not None:
            op.resources = parse_resources(resources.group("value"))
        for pattern, attribute, contributors in (
            (_INLINE_WAIT, "wait_cycles", None),
            (_INLINE_OVERLAP_WAIT, "overlap_wait_cycles", op.overlap_wait_ops),
            (_INLINE_OVERLAP, "overlap_cycles", op.overlap_ops),
        ):
            field_match = pattern.search(fields)
            value = parse_number(field_match.group("value")) if field_match else None
            if value is not None:
                setattr(op, attribute, value)
                found = True
                if contributors is not None and self.contributors is None:
                    self.contributors = contributors
        return found

    def _root_metric(
        self, name: str, basic: re.Match[str] | None, value: Number, unit: str
    ) -> None:
        source = ""
        identifier = name
        if basic is not None:
            source = basic.group("source")
            rest = basic.group("rest").strip()
            if source == "Backend" and rest.startswith("(") and rest.endswith(")"):
                identifier = rest[1:-1].strip()
        metric = Metric(name=identifier, value=value, unit=unit, source=source)
        if self.execute is not None:
            self.execute.metrics.append(metric)
            self.op = None
            return
        section = self.section_name or _UNGROUPED
        self.builder.section(section, self.section_graph).append(metric)

"""What every profiler parser shares: the error base, lines, numbers, units, op ids, a builder.

Parsers are pure ``str -> ParsedProfile`` functions. They skip and count what
they do not understand, and raise only their own subclass of
``ProfilerParseError`` when a file holds nothing they can use.
"""

from __future__ import annotations

import functools
import math
import re
import reprlib
from dataclasses import dataclass, field, fields

from qtop.errors import UsageError
from qtop.profiling.model import (
    AiHubSummary,
    Execute,
    GenieQuery,
    Graph,
    Metric,
    Number,
    OpRow,
    ParsedProfile,
    ParseWarning,
    Section,
    metric_key,
)
from qtop.textsafe import plain

UNKNOWN_SAMPLE_LIMIT = 5
LONGEST_LINE = 8192  # longer lines are not profiler output; regexes must not crawl them
# No profiler writes a number this large (QNN's counters are 64-bit; Genie's doubles
# are times and rates): a bigger one is damage, and it would overflow the arithmetic
# downstream (float conversion, percentiles), so it is read as no number at all.
LARGEST_NUMBER = 2**64

_UNITS: dict[str, str] = {
    "us": "us",
    "usec": "us",
    "µs": "us",
    "microsec": "us",
    "microseconds": "us",
    "ms": "ms",
    "millisec": "ms",
    "s": "s",
    "sec": "s",
    "ns": "ns",
    "nanosec": "ns",
    "cycles": "cycles",
    "cycle": "cycles",
    "count": "count",
    "inf/sec": "inf/sec",
    "inf/s": "inf/sec",
    "toks/sec": "toks/sec",
    "toks/iteration": "toks/iteration",
    "bytes": "bytes",
    "byte": "bytes",
    "ticks": "ticks",
    "ghz": "GHz",
    "mhz": "MHz",
    "%": "%",
    "percent": "%",
    "none": "",
}

_INTEGER = re.compile(r"[-+]?[0-9]+")
_DECIMAL = re.compile(r"[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
_OP_IDENTIFIER = re.compile(r"^(?P<name>.*?)(?:\s|:|^)OpId_(?P<id>[0-9]{1,9})(?:\s*\(cycles\))?$")
_SNPE_INDEX = re.compile(r"^[0-9]+:\s+")
_RESOURCE_SPLIT = re.compile(r"[,\s|]+")

# QNN 2.45 prints these labelled "us" while they equal runtrace's 19.2 MHz tick
# counts (formats.md §1b, unit trap).
TICK_SUSPECT_KEYS = frozenset(
    {
        metric_key("Time for initial VTCM acquire"),
        metric_key("Time for HVX + HMX power on and acquire"),
    }
)
TICKS_CAVEAT = (
    "labelled us but probably 19.2 MHz timer ticks (QNN 2.45: 5936 'us' matched a 309 µs "
    "power-on in runtrace); divide by 19.2 for µs once verified on the board"
)

FLAG_RESOURCES: dict[str, str] = {
    "dma": "DMA",
    "dma_set": "DMA",
    "dma_wait": "DMA",
    "uses_hvx": "HVX",
    "uses_hmx": "HMX",
}


class ProfilerParseError(UsageError):
    """A profiler file qtop cannot read; the message names the file and, when known, the line."""

    def __init__(
        self, source: str, problem: str, fix: str | None = None, line: int | None = None
    ) -> None:
        where = source or "<input>"
        if line is not None:
            where = f"{where}:{line}"
        # The message may quote the file (a row's text, a kind name): never raw escapes.
        super().__init__(plain(f"{where}: {problem}"), None if fix is None else plain(fix))
        self.source = source
        self.line = line


def strip_bom(data: str) -> str:
    return data[1:] if data.startswith("\ufeff") else data


def split_lines(data: str) -> tuple[list[str], bool]:
    """The lines of ``data`` (BOM, CRLF and CR handled) and whether the last one was terminated.

    An unterminated last line may have been cut mid-value when the file was
    copied while its writer ran; callers accept it only when it proves complete.
    """
    text = strip_bom(data).replace("\r\n", "\n").replace("\r", "\n")
    terminated = text.endswith("\n")
    lines = text.split("\n")
    if terminated or lines[-1] == "":
        lines.pop()
        terminated = True
    return lines, terminated


def bounded(value: Number) -> Number | None:
    """``value`` when it is finite and within ``LARGEST_NUMBER``, else None."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value if -LARGEST_NUMBER <= value <= LARGEST_NUMBER else None


def parse_number(text: str) -> Number | None:
    """An int or float from plain ASCII digits within ``LARGEST_NUMBER``; None for anything else."""
    text = text.strip()
    if len(text) > 40:  # no number qtop accepts is this long; int() of 4,000 digits is slow
        return None
    if _INTEGER.fullmatch(text):
        return bounded(int(text))
    if _DECIMAL.fullmatch(text):
        return bounded(float(text))
    return None


def matched_number(text: str) -> Number | None:
    """``parse_number`` for text a pattern has already matched as a plain decimal number."""
    if len(text) > 40:
        return None
    if "." in text or "e" in text or "E" in text:
        return bounded(float(text))
    return bounded(int(text))


def json_number(value: object) -> Number | None:
    """A JSON value that is a number (not a bool) within ``LARGEST_NUMBER``, else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return bounded(value)


def is_scalar(value: object) -> bool:
    """A JSON string, number, bool or null: usable as a key.

    Identities and track ids come from the file: a list or an object there is
    damage, and it must not reach a set or a dict key.
    """
    return value is None or isinstance(value, str | int | float | bool)


def normalize_unit(text: object) -> str:
    """The unit in qtop's spelling (``US``, ``MICROSEC`` -> ``us``); unknown ones lower-cased."""
    if not isinstance(text, str):
        return ""
    return _normalized_unit(text)


@functools.lru_cache(maxsize=1024)
def _normalized_unit(text: str) -> str:
    raw = text.strip().lower()
    return _UNITS.get(raw, raw)


def is_known_unit(text: str) -> bool:
    return text.strip().lower() in _UNITS


def split_op_identifier(identifier: str) -> tuple[int | None, str]:
    """``(op id, name label)`` of ``/a/b.c:d_token_1:OpId_24 (cycles)`` or ``Input OpId_2``."""
    text = _SNPE_INDEX.sub("", identifier.strip())
    match = _OP_IDENTIFIER.match(text) if "OpId_" in text else None
    if match is None:
        return None, text.removesuffix("(cycles)").rstrip()
    name = match.group("name").strip()
    op_id = int(match.group("id"))
    return op_id, name or f"OpId_{op_id}"


def has_op_id(identifier: str) -> bool:
    if "OpId_" not in identifier:
        return False
    return _OP_IDENTIFIER.match(_SNPE_INDEX.sub("", identifier.strip())) is not None


def parse_resources(text: str) -> tuple[str, ...]:
    """``HVX, DMA`` -> ('HVX', 'DMA'); order kept, duplicates dropped."""
    seen: dict[str, None] = {}
    for part in _RESOURCE_SPLIT.split(text.strip()):
        if part:
            seen[part.upper()] = None
    return tuple(seen)


_SHORT = reprlib.Repr()
_SHORT.maxlevel, _SHORT.maxstring, _SHORT.maxother = 2, 60, 60
_SHORT.maxlist = _SHORT.maxdict = _SHORT.maxtuple = 4


def describe(value: object) -> str:
    """A short repr of a JSON value for a note: bounded in depth and length, however
    deep or big the value is (a plain repr of a hostile one can recurse or run long)."""
    return _SHORT.repr(value)


def merge(existing: tuple[str, ...], new: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys((*existing, *new)))


@dataclass
class OpDraft:
    """An op while its lines are still arriving."""

    name: str
    op_id: int | None = None
    cycles: Number | None = None
    wait_cycles: Number | None = None
    overlap_cycles: Number | None = None
    overlap_wait_cycles: Number | None = None
    dominant_path_cycles: Number | None = None
    time_us: Number | None = None
    resources: tuple[str, ...] = ()
    flags: tuple[str, ...] = ()
    thread_types: tuple[str, ...] = ()
    overlap_ops: list[str] = field(default_factory=list)
    overlap_wait_ops: list[str] = field(default_factory=list)
    op_type: str = ""
    compute_unit: str = ""
    instances: int | None = None

    def freeze(self) -> OpRow:
        values = {name: getattr(self, name) for name in _OP_ROW_FIELDS}
        values["overlap_ops"] = tuple(self.overlap_ops)
        values["overlap_wait_ops"] = tuple(self.overlap_wait_ops)
        return OpRow(**values)


_OP_ROW_FIELDS = tuple(f.name for f in fields(OpRow))


@dataclass
class ExecuteDraft:
    index: int
    graph: str = ""
    metrics: list[Metric] = field(default_factory=list)
    ops: list[OpDraft] = field(default_factory=list)


class ProfileBuilder:
    """Collects what a parser finds, then freezes it into a ``ParsedProfile``."""

    def __init__(self, kind: str, source: str) -> None:
        self.kind = kind
        self.source = source
        self.info: dict[str, str] = {}
        self.executes: list[ExecuteDraft] = []
        self.sections: dict[tuple[str, str], list[Metric]] = {}
        self.queries: list[GenieQuery] = []
        self.ai_hub: AiHubSummary | None = None
        self.warnings: list[ParseWarning] = []
        self.unknown_lines = 0
        self.unknown_samples: list[str] = []
        self.truncated = False

    def unknown(self, line: int | None, text: str) -> None:
        self.unknown_lines += 1
        if len(self.unknown_samples) < UNKNOWN_SAMPLE_LIMIT:
            where = f"line {line}: " if line is not None else ""
            self.unknown_samples.append(where + text.strip()[:120])

    def warn(self, code: str, message: str, line: int | None = None) -> None:
        self.warnings.append(ParseWarning(code=code, message=message, line=line))

    def new_execute(self, index: int, graph: str = "") -> ExecuteDraft:
        draft = ExecuteDraft(index=index, graph=graph)
        self.executes.append(draft)
        return draft

    def section(self, name: str, graph: str = "") -> list[Metric]:
        return self.sections.setdefault((name, graph), [])

    @property
    def has_content(self) -> bool:
        return bool(self.executes or self.sections or self.queries or self.ai_hub)

    def build(self) -> ParsedProfile:
        self._adopt_single_graph_name()
        flagged = 0
        graphs: dict[str, list[Execute]] = {}
        for draft in self.executes:
            metrics, count = _flag_ticks(draft.metrics)
            flagged += count
            execute = Execute(
                index=draft.index,
                metrics=metrics,
                ops=tuple(op.freeze() for op in draft.ops),
            )
            graphs.setdefault(draft.graph, []).append(execute)
        sections = []
        for (name, graph), section_metrics in self.sections.items():
            flagged_metrics, count = _flag_ticks(section_metrics)
            flagged += count
            sections.append(Section(name=name, graph=graph, metrics=flagged_metrics))
        if flagged:
            self.warn(
                "ticks_labelled_us",
                f"{flagged} value(s) of 'Time for initial VTCM acquire' / 'Time for HVX + HMX "
                f"power on and acquire' are {TICKS_CAVEAT}",
            )
        return ParsedProfile(
            kind=self.kind,
            source=self.source,
            info=dict(self.info),
            graphs=tuple(Graph(name=name, executes=tuple(ex)) for name, ex in graphs.items()),
            sections=tuple(sections),
            queries=tuple(self.queries),
            ai_hub=self.ai_hub,
            warnings=tuple(self.warnings),
            unknown_lines=self.unknown_lines,
            unknown_samples=tuple(self.unknown_samples),
            truncated=self.truncated,
        )

    def _adopt_single_graph_name(self) -> None:
        """Give unnamed executes the graph they belong to.

        After a named execute, an unnamed one continues its graph (a CSV group
        cut before its ``Graph 0: NAME`` row). When no execute is named, they
        all belong to the one graph the stats sections name, if there is one.
        """
        previous = ""
        for draft in self.executes:
            draft.graph = draft.graph or previous
            previous = draft.graph
        named = {graph for _, graph in self.sections if graph}
        if len(named) != 1 or any(draft.graph for draft in self.executes):
            return
        (only,) = named
        for draft in self.executes:
            draft.graph = only


def _flag_ticks(metrics: list[Metric]) -> tuple[tuple[Metric, ...], int]:
    out: list[Metric] = []
    flagged = 0
    for metric in metrics:
        if (
            metric.unit == "us"
            and not metric.caveat
            and metric_key(metric.name) in TICK_SUSPECT_KEYS
        ):
            metric = Metric(
                name=metric.name,
                value=metric.value,
                unit=metric.unit,
                source=metric.source,
                caveat=TICKS_CAVEAT,
                note=metric.note,
            )
            flagged += 1
        out.append(metric)
    return tuple(out), flagged

"""What a profiler file says, independent of which tool wrote it.

Every parser in ``qtop.parsers`` turns its format into one ``ParsedProfile``:
graphs with their executes (root metrics and per-op rows), the stats sections
of the basic report, Genie queries, an AI Hub summary, and what the parser
noticed on the way (warnings, unknown lines). Values keep the unit the file
gave them; nothing is converted behind the reader's back.

``ParsedProfile.to_dict()`` is the ``report`` field of the ``profile_report``
event: plain JSON types only, and ``ParsedProfile.from_dict`` restores the
exact same object.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any

from qtop.codec import decode_dataclass, encode_dataclass

Number = int | float

SCHEMA_VERSION = 1

# Metric keys (see ``metric_key``) the breakdown model relies on.
ACCELERATOR_KEY = "accelerator execute"
EXCLUDING_WAIT_KEY = "accelerator execute excluding wait"
CRITICAL_PATH_KEY = "accelerator critical path execute"

TIME_UNITS_IN_US: dict[str, float] = {"ns": 0.001, "us": 1.0, "ms": 1000.0, "s": 1_000_000.0}

_KEY_NOISE = re.compile(r"[()]")
_SPACES = re.compile(r"\s+")
_TIME_WORD = re.compile(r"\btime\b")
_TRAILING_CYCLES = re.compile(r"\s*\bcycles$")
_OPID_SUFFIX = re.compile(r"(?:\s|:)OpId_[0-9]+(?: ?\(cycles\))?$")
_TOKEN_SUFFIX = re.compile(r"_token_[0-9]+(?:_[0-9]+)*$")


class ProfileDecodeError(ValueError):
    """A dict that does not describe a parsed profile (a damaged or foreign report)."""


@functools.lru_cache(maxsize=4096)
def metric_key(name: str) -> str:
    """A spelling-independent key: lower case, no parentheses, no word 'time', no 'cycles' tail.

    ``Accelerator (execute excluding wait) time`` and the seed's ``Accelerator
    (execute excluding wait)`` share one key; so do ``... (critical path
    execute) time (cycles)`` and ``... (critical path execute)``: the unit
    tells cycles from microseconds, not the name.
    """
    key = _KEY_NOISE.sub(" ", name.lower())
    key = _TIME_WORD.sub(" ", key)
    key = _SPACES.sub(" ", key).strip()
    return _TRAILING_CYCLES.sub("", key)


def op_join_key(name: str) -> str:
    """The name an op has in every tool: AI Hub layer names lack ':OpId_n' and '_token_n'."""
    stripped = _OPID_SUFFIX.sub("", name.strip())
    stripped = _TOKEN_SUFFIX.sub("", stripped)
    return stripped.lstrip("/")


@dataclass(frozen=True, slots=True)
class Metric:
    """One named value with the unit the file printed (normalised spelling: us, cycles, ...).

    ``caveat`` is set when the value should not be trusted as labelled, such as
    the QNN 2.45 fields whose ``us`` are really 19.2 MHz timer ticks; ``note``
    says where a value qtop computed came from (a count recomputed from rate x
    time, say).
    """

    name: str
    value: Number
    unit: str = ""
    source: str = ""
    caveat: str = ""
    note: str = ""

    @property
    def key(self) -> str:
        return metric_key(self.name)

    def in_us(self) -> float | None:
        """The value in microseconds, or None when the unit is not a time or is in doubt."""
        scale = TIME_UNITS_IN_US.get(self.unit)
        if scale is None or self.caveat:
            return None
        return self.value * scale


def find_metric(metrics: tuple[Metric, ...], key: str, units: tuple[str, ...]) -> Metric | None:
    """The first metric with this key whose unit is one of ``units``."""
    for metric in metrics:
        if metric.unit in units and metric.key == key:
            return metric
    return None


def time_metric_us(metrics: tuple[Metric, ...], key: str) -> float | None:
    metric = find_metric(metrics, key, tuple(TIME_UNITS_IN_US))
    return None if metric is None else metric.in_us()


def cycles_metric(metrics: tuple[Metric, ...], key: str) -> Number | None:
    metric = find_metric(metrics, key, ("cycles",))
    return None if metric is None else metric.value


@dataclass(frozen=True, slots=True)
class OpRow:
    """One op in one execute. Cycle fields are HTP cycles summed over threads (work, not wall).

    ``op_id`` is the QNN ``OpId_<n>`` number when the file gives one; the name is
    a label only (names repeat, and differ between tools).
    """

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
    overlap_ops: tuple[str, ...] = ()
    overlap_wait_ops: tuple[str, ...] = ()
    op_type: str = ""
    compute_unit: str = ""
    instances: int | None = None

    @property
    def key(self) -> str:
        return f"OpId_{self.op_id}" if self.op_id is not None else self.name


@dataclass(frozen=True, slots=True)
class Execute:
    """One execution of a graph: root metrics in file order, then its ops."""

    index: int
    metrics: tuple[Metric, ...] = ()
    ops: tuple[OpRow, ...] = ()


@dataclass(frozen=True, slots=True)
class Graph:
    """A graph (one context-binary split, say) and its executes in file order."""

    name: str
    executes: tuple[Execute, ...] = ()


@dataclass(frozen=True, slots=True)
class Section:
    """A block of metrics outside the executes: Init Stats, Finalize Stats, a Genie event, ..."""

    name: str
    graph: str = ""
    metrics: tuple[Metric, ...] = ()


@dataclass(frozen=True, slots=True)
class GenieQuery:
    """One Genie dialog query; metric names are as the file spells them."""

    index: int
    metrics: tuple[Metric, ...] = ()
    component: str = ""
    complete: bool = True
    response: str = ""

    def value(self, *names: str) -> Number | None:
        wanted = {metric_key(n) for n in names}
        for metric in self.metrics:
            if metric.key in wanted:
                return metric.value
        return None

    def time_us(self, *names: str) -> float | None:
        wanted = {metric_key(n) for n in names}
        for metric in self.metrics:
            if metric.key in wanted:
                return metric.in_us()
        return None


@dataclass(frozen=True, slots=True)
class AiHubSummary:
    """AI Hub's cloud profile: headline figures and the per-run time lists (µs)."""

    metrics: tuple[Metric, ...] = ()
    inference_times_us: tuple[Number, ...] = ()
    first_load_times_us: tuple[Number, ...] = ()
    warm_load_times_us: tuple[Number, ...] = ()


@dataclass(frozen=True, slots=True)
class ParseWarning:
    """Something the parser noticed and the reader should know (a trap, a cut file)."""

    code: str
    message: str
    line: int | None = None


@dataclass(frozen=True, slots=True)
class ParsedProfile:
    """Everything one profiler file says, in one format-independent shape."""

    kind: str
    source: str = ""
    info: dict[str, str] = field(default_factory=dict)
    graphs: tuple[Graph, ...] = ()
    sections: tuple[Section, ...] = ()
    queries: tuple[GenieQuery, ...] = ()
    ai_hub: AiHubSummary | None = None
    warnings: tuple[ParseWarning, ...] = ()
    unknown_lines: int = 0
    unknown_samples: tuple[str, ...] = ()
    truncated: bool = False

    @property
    def execute_count(self) -> int:
        return sum(len(graph.executes) for graph in self.graphs)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"schema": SCHEMA_VERSION}
        out.update(encode_dataclass(self))
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ParsedProfile:
        if not isinstance(data, dict):
            raise ProfileDecodeError(f"a profile report must be an object, got {type(data)}")
        schema = data.get("schema", SCHEMA_VERSION)
        if not isinstance(schema, int) or schema > SCHEMA_VERSION:
            raise ProfileDecodeError(
                f"profile report schema {schema!r} is newer than this qtop reads "
                f"({SCHEMA_VERSION}); upgrade qtop"
            )
        body = {key: value for key, value in data.items() if key != "schema"}
        try:
            return decode_dataclass(cls, body, "report")
        except ValueError as exc:
            raise ProfileDecodeError(str(exc)) from None

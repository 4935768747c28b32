"""The wait breakdown: per graph and per execute, then over the measured executes.

Wait share uses the µs roots, never cycles (cycles are summed over threads,
formats.md §8.6): ``(Accelerator (execute) - Accelerator (execute excluding
wait)) / Accelerator (execute)``; the seed's 1384 µs against 159 µs is 88.5%
waiting. Per op: cycles, scheduler wait, overlap, resources and flags, keyed
by OpId with the name as a label. The first ``warmup`` executes of each graph
are marked and left out of the medians and P95s (power-on and VTCM acquire
land there); an op's share of the execute's op cycles is compared between the
first and the last third of the measured executes to show which ops grow as
the device heats.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from qtop.profiling.model import (
    ACCELERATOR_KEY,
    CRITICAL_PATH_KEY,
    EXCLUDING_WAIT_KEY,
    Execute,
    Metric,
    Number,
    OpRow,
    ParsedProfile,
    cycles_metric,
    time_metric_us,
)
from qtop.stats.quantiles import percentile

DEFAULT_WARMUP = 1
AVERAGE_SECTION = "Execute Stats (Average)"
GROWTH_THRESHOLD = 0.001  # a tenth of a percentage point: below it an op's share is steady
SORT_KEYS = ("wait", "cycles")


@dataclass(frozen=True, slots=True)
class ExecuteBreakdown:
    """One execute: µs roots, wait share, cycle totals."""

    index: int
    warmup: bool
    accelerator_us: float | None
    excluding_wait_us: float | None
    wait_us: float | None
    wait_share: float | None
    accelerator_cycles: Number | None
    critical_path_cycles: Number | None
    op_cycles: Number | None
    op_wait_cycles: Number | None
    ops: int


@dataclass(frozen=True, slots=True)
class OpBreakdown:
    """One op over the measured executes of its graph. Cycle figures are HTP cycles."""

    key: str
    name: str
    op_id: int | None
    op_type: str
    executes: int
    cycles_median: float | None
    cycles_p95: float | None
    wait_median: float | None
    wait_p95: float | None
    overlap_median: float | None
    dominant_path_median: float | None
    time_us_median: float | None
    share_median: float | None
    early_share: float | None
    late_share: float | None
    share_growth: float | None
    resources: tuple[str, ...]
    flags: tuple[str, ...]
    thread_types: tuple[str, ...]
    compute_unit: str


@dataclass(frozen=True, slots=True)
class GraphBreakdown:
    """A graph's executes and its ops; ``source`` is 'executes' or 'average' (basic report)."""

    name: str
    source: str
    executes: tuple[ExecuteBreakdown, ...]
    warmup: int
    measured: int
    accelerator_us_median: float | None
    accelerator_us_p95: float | None
    excluding_wait_us_median: float | None
    wait_us_median: float | None
    wait_share_median: float | None
    wait_share_p95: float | None
    ops: tuple[OpBreakdown, ...]
    growing: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class AiHubBreakdown:
    """AI Hub's headline against the distribution of its own runs (µs)."""

    estimated_us: float | None
    runs: int
    warmup: int
    min_us: float | None
    median_us: float | None
    p95_us: float | None


@dataclass(frozen=True, slots=True)
class Breakdown:
    graphs: tuple[GraphBreakdown, ...]
    warmup: int
    notes: tuple[str, ...]
    ai_hub: AiHubBreakdown | None = None

    def graph(self, name: str) -> GraphBreakdown | None:
        return next((graph for graph in self.graphs if graph.name == name), None)

    def to_dict(self) -> dict[str, Any]:
        """Every field, ``None`` included, as plain JSON types."""
        return _plain(dataclasses.asdict(self))


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value


def median(values: Iterable[float]) -> float | None:
    ordered = sorted(values)
    return percentile(ordered, 0.5) if ordered else None


def p95(values: Iterable[float]) -> float | None:
    ordered = sorted(values)
    return percentile(ordered, 0.95) if ordered else None


def wait_split(metrics: tuple[Metric, ...]) -> tuple[float | None, float | None, float | None]:
    """(accelerator µs, excluding-wait µs, wait share) from an execute's root metrics.

    The share exists only when the two roots make sense together: the time
    excluding wait can be neither negative nor longer than the whole.
    """
    accelerator = time_metric_us(metrics, ACCELERATOR_KEY)
    excluding = time_metric_us(metrics, EXCLUDING_WAIT_KEY)
    if accelerator is None or excluding is None or not 0 <= excluding <= accelerator:
        return accelerator, excluding, None
    return accelerator, excluding, ratio(accelerator - excluding, accelerator)


def ratio(part: Number, whole: Number) -> float | None:
    """``part / whole`` when it is a finite number (a denormal ``whole`` makes infinities)."""
    if not whole:
        return None
    value = part / whole
    return value if math.isfinite(value) else None


def _sum(values: Iterable[Number | None]) -> Number | None:
    present = [value for value in values if value is not None]
    return sum(present) if present else None


def execute_breakdown(execute: Execute, warmup: bool) -> ExecuteBreakdown:
    accelerator, excluding, share = wait_split(execute.metrics)
    return ExecuteBreakdown(
        index=execute.index,
        warmup=warmup,
        accelerator_us=accelerator,
        excluding_wait_us=excluding,
        wait_us=None if accelerator is None or excluding is None else accelerator - excluding,
        wait_share=share,
        accelerator_cycles=cycles_metric(execute.metrics, ACCELERATOR_KEY),
        critical_path_cycles=cycles_metric(execute.metrics, CRITICAL_PATH_KEY),
        op_cycles=_sum(op.cycles for op in execute.ops),
        op_wait_cycles=_sum(op.wait_cycles for op in execute.ops),
        ops=len(execute.ops),
    )


def breakdown(profile: ParsedProfile, warmup: int = DEFAULT_WARMUP) -> Breakdown:
    """The breakdown of every graph, leaving the first ``warmup`` executes of each out."""
    if warmup < 0:
        raise ValueError("warmup must be 0 or more")
    notes: list[str] = []
    graphs = []
    for graph in profile.graphs:
        count = len(graph.executes)
        dropped = min(warmup, max(count - 1, 0))
        if dropped < warmup and count > 1:
            notes.append(
                f"graph {graph.name or '(unnamed)'}: {count} execute(s), so {dropped} "
                f"warm-up execute(s) left out instead of {warmup}"
            )
        graphs.append(_graph(graph.name, graph.executes, dropped, "executes"))
    named = {graph.name for graph in profile.graphs if graph.executes}
    for section in profile.sections:
        if section.name == AVERAGE_SECTION and section.graph not in named:
            average = Execute(index=0, metrics=section.metrics)
            graphs.append(_graph(section.graph, (average,), 0, "average"))
    return Breakdown(
        graphs=tuple(graphs),
        warmup=warmup,
        notes=tuple(notes),
        ai_hub=_ai_hub(profile, warmup),
    )


def _graph(name: str, executes: tuple[Execute, ...], warmup: int, source: str) -> GraphBreakdown:
    rows = tuple(execute_breakdown(ex, index < warmup) for index, ex in enumerate(executes))
    measured_rows = [row for row in rows if not row.warmup]
    measured = executes[warmup:]
    accelerator = [row.accelerator_us for row in measured_rows if row.accelerator_us is not None]
    excluding = [
        row.excluding_wait_us for row in measured_rows if row.excluding_wait_us is not None
    ]
    waits = [row.wait_us for row in measured_rows if row.wait_us is not None]
    shares = [row.wait_share for row in measured_rows if row.wait_share is not None]
    ops = _ops(measured)
    growing = sorted(
        (op for op in ops if op.share_growth is not None and op.share_growth > GROWTH_THRESHOLD),
        key=lambda op: op.share_growth or 0.0,
        reverse=True,
    )
    return GraphBreakdown(
        name=name,
        source=source,
        executes=rows,
        warmup=warmup,
        measured=len(measured),
        accelerator_us_median=median(accelerator),
        accelerator_us_p95=p95(accelerator),
        excluding_wait_us_median=median(excluding),
        wait_us_median=median(waits),
        wait_share_median=median(shares),
        wait_share_p95=p95(shares),
        ops=ops,
        growing=tuple(op.key for op in growing),
    )


def _ops(executes: tuple[Execute, ...]) -> tuple[OpBreakdown, ...]:
    """Per-op statistics over ``executes``; an op's rows within one execute are added up."""
    per_op: dict[str, list[tuple[int, OpRow]]] = {}
    shares: dict[str, list[tuple[int, float]]] = {}
    for position, execute in enumerate(executes):
        total = _sum(op.cycles for op in execute.ops)
        for op in _merge_repeats(execute.ops):
            per_op.setdefault(op.key, []).append((position, op))
            share = None if total is None or op.cycles is None else ratio(op.cycles, total)
            if share is not None:
                shares.setdefault(op.key, []).append((position, share))
    third = max(1, len(executes) // 3)
    early_positions = set(range(third))
    late_positions = set(range(len(executes) - third, len(executes)))
    out = []
    for key, rows in per_op.items():
        op_rows = [row for _, row in rows]
        op_shares = shares.get(key, [])
        early = median(share for pos, share in op_shares if pos in early_positions)
        late = median(share for pos, share in op_shares if pos in late_positions)
        growth = None
        if len(executes) >= 2 and early is not None and late is not None:
            growth = late - early
        first = op_rows[0]
        out.append(
            OpBreakdown(
                key=key,
                name=first.name,
                op_id=first.op_id,
                op_type=first.op_type,
                executes=len(op_rows),
                cycles_median=median(_present(r.cycles for r in op_rows)),
                cycles_p95=p95(_present(r.cycles for r in op_rows)),
                wait_median=median(_present(r.wait_cycles for r in op_rows)),
                wait_p95=p95(_present(r.wait_cycles for r in op_rows)),
                overlap_median=median(_present(r.overlap_cycles for r in op_rows)),
                dominant_path_median=median(_present(r.dominant_path_cycles for r in op_rows)),
                time_us_median=median(_present(r.time_us for r in op_rows)),
                share_median=median(share for _, share in op_shares),
                early_share=early,
                late_share=late,
                share_growth=growth,
                resources=_union(r.resources for r in op_rows),
                flags=_union(r.flags for r in op_rows),
                thread_types=_union(r.thread_types for r in op_rows),
                compute_unit=first.compute_unit,
            )
        )
    return tuple(out)


def _present(values: Iterable[Number | None]) -> list[float]:
    return [value for value in values if value is not None]


def _union(groups: Iterable[tuple[str, ...]]) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for group in groups:
        seen.update(dict.fromkeys(group))
    return tuple(seen)


def _merge_repeats(ops: tuple[OpRow, ...]) -> list[OpRow]:
    """One row per op key: an OpId printed twice in one execute is one op's work, added up."""
    merged: dict[str, OpRow] = {}
    for op in ops:
        earlier = merged.get(op.key)
        if earlier is None:
            merged[op.key] = op
            continue
        merged[op.key] = dataclasses.replace(
            earlier,
            cycles=_sum((earlier.cycles, op.cycles)),
            wait_cycles=_sum((earlier.wait_cycles, op.wait_cycles)),
            overlap_cycles=_sum((earlier.overlap_cycles, op.overlap_cycles)),
            overlap_wait_cycles=_sum((earlier.overlap_wait_cycles, op.overlap_wait_cycles)),
            dominant_path_cycles=_sum((earlier.dominant_path_cycles, op.dominant_path_cycles)),
            time_us=_sum((earlier.time_us, op.time_us)),
            resources=_union((earlier.resources, op.resources)),
            flags=_union((earlier.flags, op.flags)),
        )
    return list(merged.values())


def _ai_hub(profile: ParsedProfile, warmup: int) -> AiHubBreakdown | None:
    summary = profile.ai_hub
    if summary is None:
        return None
    times = list(summary.inference_times_us)
    dropped = min(warmup, max(len(times) - 1, 0))
    measured = times[dropped:]
    estimate = next(
        (m.in_us() for m in summary.metrics if m.name == "estimated_inference_time"), None
    )
    return AiHubBreakdown(
        estimated_us=estimate,
        runs=len(times),
        warmup=dropped,
        min_us=min(times) if times else None,
        median_us=median(measured),
        p95_us=p95(measured),
    )


def sort_ops(ops: Iterable[OpBreakdown], by: str) -> list[OpBreakdown]:
    """Largest first by median scheduler wait or by median cycles; ops without the figure last."""
    if by not in SORT_KEYS:
        raise ValueError(f"sort key must be one of {SORT_KEYS}, got {by!r}")

    def figure(op: OpBreakdown) -> float:
        value = op.wait_median if by == "wait" else op.cycles_median
        if value is None and by == "cycles":
            value = op.time_us_median
        return -1.0 if value is None else float(value)

    return sorted(ops, key=figure, reverse=True)

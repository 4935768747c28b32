"""HTP optrace renders: ``chrometrace.json`` (ops), the runtrace and the QHAS summary JSON.

Optrace (formats.md §2a): every op event appears on the "Core 0 Overview"
process and again on a per-core process, so events are de-duplicated by
(ID, tid, ts, dur); ``ts``/``dur`` are cycles put in the µs fields, and the
thread's unit (HVX, HMX, ...) comes only from ``thread_name`` metadata, never
from the tid number. Many HTP micro-ops make one QNN op; they are summed per
QNN op. Runtrace (§2b) ``dur`` is 19.2 MHz ticks; its ``summary_time_us``
carries the µs. QHAS (§2c) is the analysis summary of the same run.
"""

from __future__ import annotations

import re
from typing import Any

from qtop.parsers.common import (
    FLAG_RESOURCES,
    ExecuteDraft,
    OpDraft,
    ProfileBuilder,
    ProfilerParseError,
    describe,
    is_scalar,
    json_number,
    merge,
)
from qtop.parsers.lenient_json import is_partial, load_document
from qtop.profiling.model import Metric, ParsedProfile

KIND_OPTRACE = "optrace"
KIND_RUNTRACE = "runtrace"
KIND_QHAS = "qhas"

RUNTRACE_TICKS_PER_US = 19.2
_THREAD_TYPE = re.compile(r"Type:\s*(?P<type>[A-Za-z0-9_]+)")
_QHAS_FLAGS = {"hvx": "uses_hvx", "hmx": "uses_hmx"}
_QHAS_FLAG_KEYS = ("hmx", "hvx", "dma_wait", "dma_set", "dma", "sync")
_QHAS_SUMMARY_UNITS = {
    "time_us": "us",
    "graph_execute_us": "us",
    "inf_per_s": "inf/sec",
    "percent_idle": "%",
    "percent_utilization": "%",
    "peak_vtcm_alloc": "bytes",
    "total_dram": "bytes",
    "qnn_nodes": "count",
    "htp_nodes": "count",
}
_QHAS_RESOURCE_UNITS = {
    "timeline_cycles": "cycles",
    "cycles_used": "cycles",
    "utilization": "%",
    "dram_read": "bytes",
    "dram_write": "bytes",
    "vtcm_read": "bytes",
    "vtcm_write": "bytes",
}


class OptraceError(ProfilerParseError):
    """An optrace, runtrace or QHAS file without the events or tables qtop reads."""


def _fix(what: str) -> str:
    return (
        f"pass the {what} written by 'qnn-profile-viewer --reader "
        "libQnnHtpOptraceProfilingReader.so --schematic X_schematic.bin --input_log X.log "
        "--output chrometrace.json', or use --kind"
    )


def _trace_events(document: Any, source: str, what: str) -> list[Any]:
    # A bare list is the Chrome trace "array format".
    events = document.get("traceEvents") if isinstance(document, dict) else document
    if not isinstance(events, list):
        raise OptraceError(source, "no 'traceEvents' list", _fix(what))
    return events


def _header_info(builder: ProfileBuilder, document: Any) -> None:
    if isinstance(document, dict) and isinstance(document.get("header"), dict):
        artifact = document["header"].get("artifact_type")
        if isinstance(artifact, str):
            builder.info["artifact_type"] = artifact


def _hex_low_op_id(value: Any) -> int | None:
    # INFERRED: formats.md §2a/§2c: the low 32 bits of an optrace/QHAS ID are the QNN
    # OpId (true throughout the public 2.45 sample: Input 2, Output 3, MatMul_4 45).
    if not isinstance(value, str):
        return None
    try:
        return int(value, 16) & 0xFFFFFFFF
    except ValueError:
        return None


def parse_chrometrace(data: str, source: str = "") -> ParsedProfile:
    """Optrace chrometrace: HTP micro-ops summed per QNN op, as one execute."""
    builder = ProfileBuilder(KIND_OPTRACE, source)
    document = load_document(data, source, OptraceError, _fix("chrometrace.json"), builder)
    _header_info(builder, document)
    events = _trace_events(document, source, "chrometrace.json")
    thread_types = _thread_types(events)
    # INFERRED: formats.md §2a: a trace holds one execute (the sample spans one graph run).
    execute = builder.new_execute(1)
    ops: dict[str, OpDraft] = {}
    seen: set[tuple[Any, ...]] = set()
    first_ts: float | None = None
    last_end: float | None = None
    for event in events:
        if not isinstance(event, dict) or is_partial(event) or event.get("ph") != "X":
            continue
        args = event.get("args")
        if not isinstance(args, dict) or not isinstance(args.get("QNN Op Name"), str):
            continue  # tensors that never execute ($Const, $Shape) and other tracks
        ts, dur = json_number(event.get("ts")), json_number(event.get("dur"))
        if ts is None or dur is None:
            builder.unknown(None, f"op event without ts/dur: {describe(event.get('name'))}")
            continue
        identity = (args.get("ID"), event.get("tid"), ts, dur, event.get("name"))
        if not all(map(is_scalar, identity)) or not is_scalar(event.get("pid")):
            builder.unknown(None, "op event with a list or object as its ID, tid, pid or name")
            continue
        if identity in seen:
            continue
        seen.add(identity)
        track = _track(event)
        _add_htp_op(ops, args, dur, thread_types.get(track) if track is not None else None)
        first_ts = ts if first_ts is None else min(first_ts, ts)
        last_end = ts + dur if last_end is None else max(last_end, ts + dur)
    if not ops:
        raise OptraceError(
            source, "no op events carrying a 'QNN Op Name'", _fix("chrometrace.json")
        )
    execute.ops.extend(ops.values())
    if first_ts is not None and last_end is not None:
        execute.metrics.append(Metric("Op trace span", last_end - first_ts, "cycles"))
    execute.metrics.append(Metric("HTP op instances", len(seen), "count"))
    return builder.build()


def _track(event: dict[str, Any]) -> tuple[Any, Any] | None:
    """(pid, tid) of an event, or None when either is a list or an object (damage)."""
    pid, tid = event.get("pid"), event.get("tid")
    return (pid, tid) if is_scalar(pid) and is_scalar(tid) else None


def _thread_types(events: list[Any]) -> dict[tuple[Any, Any], str]:
    """(pid, tid) -> unit type, from ``thread_name`` metadata; a tid's type also covers its pids."""
    by_track: dict[tuple[Any, Any], str] = {}
    by_tid: dict[Any, str] = {}
    for event in events:
        if not isinstance(event, dict) or event.get("ph") != "M":
            continue
        if event.get("name") != "thread_name" or not isinstance(event.get("args"), dict):
            continue
        label = event["args"].get("name")
        match = _THREAD_TYPE.search(label) if isinstance(label, str) else None
        track = _track(event)
        if match is not None and track is not None:
            by_track[track] = match.group("type").upper()
            by_tid.setdefault(track[1], match.group("type").upper())
    for event in events:
        if isinstance(event, dict) and event.get("ph") == "X":
            track = _track(event)
            if track is not None and track not in by_track and track[1] in by_tid:
                by_track[track] = by_tid[track[1]]
    return by_track


def _add_htp_op(
    ops: dict[str, OpDraft], args: dict[str, Any], dur: float, thread_type: str | None
) -> None:
    name = args["QNN Op Name"]
    op_id = _hex_low_op_id(args.get("ID"))
    key = f"OpId_{op_id}" if op_id is not None else f"name:{name}"
    op = ops.get(key)
    if op is None:
        op_type = args.get("QNN Op Type")
        op = ops[key] = OpDraft(
            name=name, op_id=op_id, op_type=op_type if isinstance(op_type, str) else ""
        )
        op.cycles = 0
        op.dominant_path_cycles = 0
        op.instances = 0
    cycles = json_number(args.get("Duration (cycles)"))
    op.cycles = (op.cycles or 0) + (cycles if cycles is not None else dur)
    dominant = json_number(args.get("Dominant Path Cycles"))
    op.dominant_path_cycles = (op.dominant_path_cycles or 0) + (dominant or 0)
    op.instances = (op.instances or 0) + 1
    flags = args.get("Flags")
    if isinstance(flags, list):
        names = [flag for flag in flags if isinstance(flag, str)]
        op.flags = merge(op.flags, names)
        op.resources = merge(
            op.resources, [FLAG_RESOURCES[f] for f in names if f in FLAG_RESOURCES]
        )
    if thread_type:
        op.thread_types = merge(op.thread_types, [thread_type])


def parse_runtrace(data: str, source: str = "") -> ParsedProfile:
    """Runtrace: one execute per ``QNN DSP Execute`` with its VTCM, power-on and graph phases."""
    builder = ProfileBuilder(KIND_RUNTRACE, source)
    document = load_document(data, source, OptraceError, _fix("chrometrace_runtrace.json"), builder)
    _header_info(builder, document)
    events = _trace_events(document, source, "chrometrace_runtrace.json")
    phases = []
    seen: set[tuple[Any, ...]] = set()
    for event in events:
        if not isinstance(event, dict) or is_partial(event) or event.get("ph") != "X":
            continue
        ts, dur = json_number(event.get("ts")), json_number(event.get("dur"))
        name = event.get("name")
        if ts is None or dur is None or not isinstance(name, str):
            builder.unknown(None, f"runtrace event {describe(event.get('name'))} without ts/dur")
            continue
        identity = (name, event.get("tid"), ts, dur)
        if not is_scalar(event.get("tid")):
            builder.unknown(None, f"runtrace event {describe(name)}: its tid is a list or object")
            continue
        if identity not in seen:
            seen.add(identity)
            phases.append((ts, dur, name, event.get("args")))
    phases.sort(key=lambda phase: phase[0])
    execute: ExecuteDraft | None = None
    for _, dur, name, args in phases:
        args = args if isinstance(args, dict) else {}
        if name == "QNN DSP Execute" or execute is None:
            graph = args.get("graph_name")
            execute = builder.new_execute(
                len(builder.executes) + 1, graph if isinstance(graph, str) else ""
            )
        execute.metrics.extend(_phase_metrics(name, dur, args))
    if execute is None:
        raise OptraceError(source, "no runtrace phases ('ph': 'X' events)", _fix("runtrace"))
    return builder.build()


def _phase_metrics(name: str, ticks: float, args: dict[str, Any]) -> list[Metric]:
    metrics = []
    micros = json_number(args.get("summary_time_us"))
    if micros is not None:
        metrics.append(Metric(name, micros, "us"))
    else:
        metrics.append(
            Metric(name, ticks / RUNTRACE_TICKS_PER_US, "us", note="computed as ticks / 19.2")
        )
    metrics.append(Metric(f"{name} (ticks)", ticks, "ticks"))
    clock = json_number(args.get("summary_htp_frequency_ghz"))
    if clock is not None:
        metrics.append(Metric(f"{name} HTP clock", clock, "GHz"))
    rate = json_number(args.get("summary_inf/s"))
    if rate is not None:
        metrics.append(Metric(f"{name} rate", rate, "inf/sec"))
    return metrics


def parse_qhas(data: str, source: str = "") -> ParsedProfile:
    """QHAS summary: overall figures, per-unit utilisation, and QNN ops with their HTP flags."""
    builder = ProfileBuilder(KIND_QHAS, source)
    fix = _fix("chrometrace_qnn_htp_analysis_summary.json (viewer --config with qhas_json)")
    document = load_document(data, source, OptraceError, fix, builder)
    tables = document.get("data") if isinstance(document, dict) else None
    if not isinstance(tables, dict):
        raise OptraceError(source, "no 'data' object with QHAS tables", fix)
    _header_info(builder, document)
    graph = document.get("model_id") if isinstance(document.get("model_id"), str) else ""
    execute = builder.new_execute(1, graph)
    for summary in _rows(tables, "htp_overall_summary"):
        htp = summary.get("htp")
        core = f"HTP {htp}" if isinstance(htp, int) and not isinstance(htp, bool) else ""
        for key, unit in _QHAS_SUMMARY_UNITS.items():
            value = json_number(summary.get(key))
            if value is not None:
                execute.metrics.append(Metric(key, value, unit, source=core))
        resources = summary.get("htp_resources")
        for resource in _rows({"r": resources}, "r"):
            unit_type, tid = resource.get("type"), resource.get("tid")
            name = f"HTP resource {unit_type} (tid {tid})"
            metrics = builder.section(name, graph)
            for key, unit in _QHAS_RESOURCE_UNITS.items():
                value = json_number(resource.get(key))
                if value is not None:
                    metrics.append(Metric(key, value, unit, source=core))
    execute.ops.extend(_qhas_ops(tables))
    if not execute.ops and not execute.metrics:
        raise OptraceError(source, "the QHAS tables hold no summary or op rows", fix)
    return builder.build()


def _rows(tables: dict[str, Any], name: str) -> list[dict[str, Any]]:
    table = tables.get(name)
    rows = table.get("data") if isinstance(table, dict) else None
    if not isinstance(rows, list):
        return []
    return [row for row in rows if isinstance(row, dict) and not is_partial(row)]


def _qhas_ops(tables: dict[str, Any]) -> list[OpDraft]:
    ops: dict[str, OpDraft] = {}
    for row in _rows(tables, "qnn_op_instances_nodes"):
        name = row.get("qnn_op")
        if not isinstance(name, str):
            continue
        op = ops.setdefault(name, OpDraft(name=name))
        op_type = row.get("qnn_op_type")
        op.op_type = op_type if isinstance(op_type, str) else op.op_type
        op.cycles = json_number(row.get("cycles"))
    from_nodes = bool(ops)
    for row in _rows(tables, "htp_op_instances"):
        name = row.get("qnn_op")
        if not isinstance(name, str):
            continue
        op = ops.setdefault(name, OpDraft(name=name))
        op.op_id = op.op_id if op.op_id is not None else _hex_low_op_id(row.get("op_id"))
        cycles = json_number(row.get("cycles"))
        if not from_nodes and cycles is not None:
            op.cycles = (op.cycles or 0) + cycles
        dominant = json_number(row.get("num_dominant_path_cycles"))
        if dominant is not None:
            op.dominant_path_cycles = (op.dominant_path_cycles or 0) + dominant
        op.instances = (op.instances or 0) + 1
        flags = [_QHAS_FLAGS.get(key, key) for key in _QHAS_FLAG_KEYS if row.get(key) is True]
        op.flags = merge(op.flags, flags)
        op.resources = merge(
            op.resources, [FLAG_RESOURCES[f] for f in flags if f in FLAG_RESOURCES]
        )
    return list(ops.values())

"""File renders of a simulated profiling log: CSV (§1d), standardized JSON (§1e), traces (§2).

* CSV: the preamble lines, then the comma+space header and one group of
  EXECUTE rows per execute, each group starting at ``Number of HVX threads used``;
* standardized JSON: ``metadata`` plus ``messages[].profilingEvents[]`` with
  op ``sub-events`` (identifiers without `` (cycles)``);
* optrace chrometrace: op instances duplicated on pid 0 and a per-core pid,
  ``thread_name`` metadata naming each tid, DMA counters with an empty-string
  key, cycles stuffed into ``ts``/``dur``;
* the averaged chrometrace of libQnnChrometraceProfilingReader (INFERRED).
"""

from __future__ import annotations

import json
from typing import Any

from qtop.sim.tools.profiling_log import ExecuteStat, ProfilingLog, StageStat
from qtop.sim.tools.render_text import preamble

CSV_HEADER = (
    "Msg Timestamp, Message, Time, Unit of Measurement, Timing Source, Event Level, "
    "Event Identifier"
)


def _stage_rows(stage: StageStat, message: str, event: str, ts: int) -> list[str]:
    return [
        f"{ts},{message},{stage.netrun_us},US,NETRUN,ROOT,NetRun",
        f"{ts},{message},{stage.rpc_us},US,BACKEND,ROOT,RPC ({event}) time",
        f"{ts},{message},{stage.qnn_accel_us},US,BACKEND,ROOT,QNN accelerator ({event}) time",
        f"{ts},{message},{stage.accel_us},US,BACKEND,ROOT,Accelerator ({event}) time",
        f"{ts},{message},{stage.qnn_us},US,BACKEND,ROOT,QNN ({event}) time",
    ]


def render_csv(log: ProfilingLog, input_log: str) -> str:
    ts = log.steady_clock_us
    rows = [*preamble(log, input_log), "", CSV_HEADER]
    rows += _stage_rows(log.init, "INIT", "load binary", ts)
    rows.append(f"{ts},COMPOSE GRAPHS,{log.compose_us},US,NETRUN,ROOT,NetRun")
    ts += log.init.netrun_us
    detailed = log.level != "basic"
    for stat in log.executes:
        graph = log.graphs[stat.graph_index]
        rows += [
            f"{ts},EXECUTE,{stat.hvx_threads},COUNT,BACKEND,ROOT,Number of HVX threads used",
            f"{ts},EXECUTE,{stat.netrun_us},US,NETRUN,ROOT,Graph {stat.graph_index}: {graph}",
            f"{ts},EXECUTE,{stat.rpc_us},US,BACKEND,ROOT,RPC (execute) time",
            f"{ts},EXECUTE,{stat.qnn_accel_us},US,BACKEND,ROOT,QNN accelerator (execute) time",
        ]
        if detailed:
            rows.append(
                f"{ts},EXECUTE,{stat.accel_cycles},CYCLES,BACKEND,ROOT,"
                "Accelerator (execute) time (cycles)"
            )
            rows += [
                f"{ts},EXECUTE,{op.cycles},CYCLES,BACKEND,SUB-EVENT,{op.name} (cycles)"
                for op in stat.ops
            ]
        rows += [
            f"{ts},EXECUTE,{stat.accel_us},US,BACKEND,ROOT,Accelerator (execute) time",
            f"{ts},EXECUTE,{stat.accel_excl_wait_us},US,BACKEND,ROOT,"
            "Accelerator (execute excluding wait) time",
            f"{ts},EXECUTE,{stat.qnn_us},US,BACKEND,ROOT,QNN (execute) time",
        ]
        ts += stat.netrun_us
    rows += _stage_rows(log.deinit, "DE-INIT", "deinit", ts)
    rows.append(f"{ts},EXECUTE IPS,{log.ips:.4f},INF/SEC,NETRUN,ROOT,NetRun IPS")
    return "\n".join(rows) + "\n"


def _event(identifier: str, unit: str, kind: str, value: int) -> dict[str, Any]:
    return {"identifier": identifier, "unit": unit, "type": kind, "value": value}


def _execute_events(stat: ExecuteStat, detailed: bool) -> list[dict[str, Any]]:
    events = [
        _event("Number of HVX threads used", "COUNT", "", stat.hvx_threads),
        _event("RPC (execute) time", "MICROSEC", "", stat.rpc_us),
        _event("QNN accelerator (execute) time", "MICROSEC", "", stat.qnn_accel_us),
        _event(
            "Accelerator (execute excluding wait) time", "MICROSEC", "", stat.accel_excl_wait_us
        ),
        _event("Accelerator (execute) time", "MICROSEC", "", stat.accel_us),
        _event("QNN (execute) time", "MICROSEC", "EXECUTE", stat.qnn_us),
    ]
    if detailed:
        cycles = _event("Accelerator (execute) time (cycles)", "CYCLES", "", stat.accel_cycles)
        cycles["sub-events"] = [_event(op.name, "CYCLES", "NODE", op.cycles) for op in stat.ops]
        events.append(cycles)
    return events


def render_json(log: ProfilingLog) -> str:
    init, deinit = log.init, log.deinit
    messages: list[dict[str, Any]] = [
        {
            "method": "BACKEND_CREATE_FROM_BINARY",
            "profilingEvents": [
                _event("RPC (load binary) time", "MICROSEC", "INIT", init.rpc_us),
                _event("QNN accelerator (load binary) time", "MICROSEC", "INIT", init.qnn_accel_us),
                _event("Accelerator (load binary) time", "MICROSEC", "INIT", init.accel_us),
                _event("QNN (load binary) time", "MICROSEC", "INIT", init.qnn_us),
            ],
        }
    ]
    detailed = log.level != "basic"
    messages += [
        {"method": "BACKEND_EXECUTE", "profilingEvents": _execute_events(stat, detailed)}
        for stat in log.executes
    ]
    messages.append(
        {
            "method": "BACKEND_DEINIT",
            "profilingEvents": [
                _event("RPC (deinit) time", "MICROSEC", "DEINIT", deinit.rpc_us),
                _event("QNN (deinit) time", "MICROSEC", "DEINIT", deinit.qnn_us),
            ],
        }
    )
    document = {
        "metadata": {"appName": "qnn-net-run", "appVersion": log.sdk_version},
        "messages": messages,
    }
    return json.dumps(document, indent=1) + "\n"


_HMX_TID = 256
_HVX_TIDS = (512, 513, 514, 515)
_CORE_PID = 2
_FLAGS = {"DMA": "dma", "HVX": "uses_hvx", "HMX": "uses_hmx"}


def _tid_for(resources: tuple[str, ...], position: int) -> int:
    if "HVX" in resources:
        return _HVX_TIDS[position % len(_HVX_TIDS)]
    return _HMX_TID


def render_optrace(log: ProfilingLog, htp_ops: list[str]) -> str:
    """The optrace chrometrace: every op event on pid 0 and again on the per-core pid."""
    events: list[dict[str, Any]] = []
    clock = 34
    for execute_number, stat in enumerate(log.executes):
        for position, op in enumerate(stat.ops):
            htp_op = htp_ops[position] if position < len(htp_ops) else "q::Op"
            flags = [_FLAGS[r] for r in op.resources if r in _FLAGS]
            if op.name.startswith("Output"):
                flags = ["dma_wait"]
            qnn_name = op.name.split(":OpId_")[0].split(" OpId_")[0].lstrip("/")
            args = {
                "ID": f"0x0000{execute_number:04x}{position + 2:08x}",
                "HTP Op Type": htp_op,
                "Data Type": "QUInt8",
                "Rank": 4,
                "Flags": flags,
                "QNN Op Type": qnn_name.split("/")[-1] or qnn_name,
                "QNN Op Name": qnn_name,
                "Start Cycle": 1668553966074 + clock,
                "Duration (cycles)": max(op.cycles, 1),
                "Dominant Path Cycles": max(op.cycles, 1),
            }
            tid = _tid_for(op.resources, position)
            for pid in (0, _CORE_PID):
                events.append(
                    {
                        "name": htp_op,
                        "ph": "X",
                        "tid": tid,
                        "pid": pid,
                        "ts": clock,
                        "dur": max(op.cycles, 1),
                        "args": args,
                    }
                )
            if "DMA" in op.resources:
                events.append(
                    {
                        "name": "DmaCheckpointSet",
                        "ph": "X",
                        "tid": tid,
                        "pid": 0,
                        "ts": clock + max(op.cycles, 1),
                        "dur": 266,
                        "args": {
                            "HTP Op Type": "DmaCheckpointSet",
                            "Data Type": "",
                            "Rank": 0,
                            "Flags": ["dma_set"],
                            "QNN Op Name": args["QNN Op Name"],
                            "Dominant Path Cycles": 266,
                        },
                    }
                )
                for counter in ("VTCM read", "DRAM write"):
                    events.append(
                        {
                            "name": counter,
                            "ph": "C",
                            "tid": 0,
                            "pid": 0,
                            "ts": clock,
                            "args": {"": 65536},
                        }
                    )
            clock += max(op.cycles, 1) + op.wait_cycles
    events += _optrace_metadata()
    document = {
        "header": {
            "header_version": {"major": 1, "minor": 0, "patch": 0},
            "version": {"major": 1, "minor": 1, "patch": 0},
            "artifact_type": "OP_TRACE",
        },
        "traceEvents": events,
    }
    return json.dumps(document) + "\n"


def _optrace_metadata() -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    names = {_HMX_TID: "HMX", **{tid: "HVX" for tid in _HVX_TIDS}}
    for tid, unit in names.items():
        events.append(
            {
                "cat": "__metadata",
                "pid": 0,
                "tid": tid,
                "ph": "M",
                "name": "thread_name",
                "args": {"name": f"Type: {unit}"},
            }
        )
        events.append(
            {
                "cat": "__metadata",
                "pid": _CORE_PID,
                "tid": tid,
                "ph": "M",
                "name": "thread_name",
                "args": {"name": f"Core:0 Type: {unit} Tid: {tid}"},
            }
        )
    events += [
        {
            "cat": "__metadata",
            "pid": 0,
            "ph": "M",
            "name": "process_name",
            "args": {"name": "Core 0 Overview"},
        },
        {
            "cat": "__metadata",
            "pid": 0,
            "ph": "M",
            "name": "process_sort_index",
            "args": {"sort_index": 1},
        },
        {
            "cat": "__metadata",
            "pid": _CORE_PID,
            "ph": "M",
            "name": "process_name",
            "args": {"name": "Core 0"},
        },
    ]
    return events


def render_averaged_trace(log: ProfilingLog) -> str:
    """INFERRED (formats.md §2d): the all-runs average of each root time as one slice each."""
    events: list[dict[str, Any]] = []
    count = len(log.executes) or 1
    fields = (
        ("QNN (execute) time", "qnn_us"),
        ("RPC (execute) time", "rpc_us"),
        ("Accelerator (execute) time", "accel_us"),
    )
    for name, attribute in fields:
        average = sum(getattr(s, attribute) for s in log.executes) / count
        events.append(
            {"name": name, "ph": "X", "pid": 0, "tid": 0, "ts": 0, "dur": round(average, 3)}
        )
    events.append(
        {
            "cat": "__metadata",
            "pid": 0,
            "tid": 0,
            "ph": "M",
            "name": "thread_name",
            "args": {"name": "Execute (average)"},
        }
    )
    return json.dumps({"traceEvents": events}) + "\n"

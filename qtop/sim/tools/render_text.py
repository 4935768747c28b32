"""Text renders of a simulated profiling log, in the shapes of formats.md §1.0-§1c.

* basic: the QNN 2.45 underlined statistics (§1a);
* detailed: basic plus ``Printing All Data Received From Back End`` and one
  ``Execute Stat n`` block per execute (§1b);
* linting: the HTP reader's per-op view with ``Wait (Scheduler)``,
  ``Overlap`` and ``Resources`` sub-lines and ``(graph <name>)`` after each
  ``Execute Stat n`` (§1c).
Spacing is deliberate: ``NetRun: 17795 us`` in the basic part, ``: 8480  us``
(two spaces before the unit) in the backend dump, a trailing space after
``Generated using:`` and ``Execute Stats:``.
"""

from __future__ import annotations

import time

from qtop.sim.tools.profiling_log import ExecuteStat, ProfilingLog, StageStat


def preamble(log: ProfilingLog, input_log: str) -> list[str]:
    created = time.strftime("%a %b %d %H:%M:%S %Y", time.localtime(log.created_epoch_us / 1e6))
    return [
        f"Input Log File Location: {input_log}",
        f"Log File Created: {created}",
        "Time Scale: 1e-06",
        f"Epoch Timestamp: {log.created_epoch_us} Steady Clock Timestamp: {log.steady_clock_us}",
        "Generated using: ",
        f"qnn-profile-viewer: {log.sdk_version}",
        f"qnn-net-run: {log.sdk_version}",
        f"Backend: {log.sdk_version}",
    ]


def _stage_lines(stage: StageStat, event: str) -> list[str]:
    return [
        f"    NetRun: {stage.netrun_us} us",
        f"    Backend (RPC ({event}) time): {stage.rpc_us} us",
        f"    Backend (QNN accelerator ({event}) time): {stage.qnn_accel_us} us",
        f"    Backend (Accelerator ({event}) time): {stage.accel_us} us",
        f"    Backend (QNN ({event}) time): {stage.qnn_us} us",
    ]


def _average(values: list[int]) -> int:
    return round(sum(values) / len(values)) if values else 0


def basic_lines(log: ProfilingLog) -> list[str]:
    lines = [
        "Qnn Init/Prepare/Finalize/De-Init/Execute/Lib-Load Statistics:",
        "-" * 60,
        "Init Stats:",
        "-----------",
        *_stage_lines(log.init, "load binary"),
        "",
        "Compose Graphs Stats:",
        "--------------",
        f"    NetRun: {log.compose_us} us",
        "",
        "De-Init Stats:",
        "--------------",
        *_stage_lines(log.deinit, "deinit"),
    ]
    if log.optrace or not log.executes:
        # The QNN 2.45 optrace renders carry no execute averages (formats.md §1b).
        return lines
    lines += [
        "",
        "Execute Stats (Average):",
        "------------------------",
        "Total Inference Time:",
        "---------------------",
    ]
    for index, graph in enumerate(log.graphs):
        stats = [s for s in log.executes if s.graph_index == index]
        if not stats:
            continue
        lines += [
            f"Graph {index} ({graph}):",
            f"    NetRun: {_average([s.netrun_us for s in stats])} us",
            f"    Backend (Number of HVX threads used): {stats[0].hvx_threads} count",
            f"    Backend (RPC (execute) time): {_average([s.rpc_us for s in stats])} us",
            "    Backend (QNN accelerator (execute) time): "
            f"{_average([s.qnn_accel_us for s in stats])} us",
            f"    Backend (Accelerator (execute) time): {_average([s.accel_us for s in stats])} us",
            f"    Backend (QNN (execute) time): {_average([s.qnn_us for s in stats])} us",
        ]
    lines += [
        "",
        "Execute Stats (Overall):",
        "------------------------",
        f"    NetRun IPS (includes IO and misc. time): {log.ips:.4f} inf/sec",
    ]
    return lines


def _root(name: str, value: int, unit: str) -> str:
    return f"{name} : {value}  {unit}"


def _execute_block(log: ProfilingLog, number: int, stat: ExecuteStat, linting: bool) -> list[str]:
    title = f"Execute Stat {number}"
    if linting:
        title += f" (graph {log.graphs[stat.graph_index]})"
    lines = [
        title,
        "",
        _root("Number of HVX threads used", stat.hvx_threads, "count"),
        _root("RPC (execute) time", stat.rpc_us, "us"),
        _root("QNN accelerator (execute) time", stat.qnn_accel_us, "us"),
        _root("Num times yield occured", stat.yield_count, "count"),
        _root("Time for initial VTCM acquire", stat.vtcm_acquire, "us"),
        _root("Time for HVX + HMX power on and acquire", stat.power_on, "us"),
    ]
    if linting:
        lines.append(
            _root("Accelerator (critical path execute) time (cycles)", stat.accel_cycles, "cycles")
        )
    else:
        lines.append(_root("Accelerator (execute) time (cycles)", stat.accel_cycles, "cycles"))
    for op in stat.ops:
        lines.append(f"    {op.name} (cycles) : {op.cycles}  cycles")
        if linting:
            lines.append(f"        Wait (Scheduler) time : {op.wait_cycles}  cycles")
            lines.append(f"        Overlap time : {op.overlap_cycles}  cycles")
            lines += [f"            {name}" for name in op.overlap_ops[:10]]
            lines.append(f"        Overlap (wait) time : {op.overlap_wait_cycles}  cycles")
            lines.append(f"        Resources : {', '.join(op.resources)}".rstrip())
    lines += [
        _root("Accelerator (execute) time", stat.accel_us, "us"),
        _root("Accelerator (execute excluding wait) time", stat.accel_excl_wait_us, "us"),
    ]
    if log.optrace:
        lines.append("Unknown event type :   object")
    lines += [_root("QNN (execute) time", stat.qnn_us, "us"), ""]
    return lines


def backend_lines(log: ProfilingLog, linting: bool) -> list[str]:
    """The per-execute dump that follows the basic statistics."""
    init = log.init
    lines = [
        "",
        "Printing All Data Received From Back End",
        "",
        "Create From Binary Stats:",
        _root("RPC (load binary) time", init.rpc_us, "us"),
        _root("QNN accelerator (load binary) time", init.qnn_accel_us, "us"),
        _root("Accelerator (load binary) time", init.accel_us, "us"),
        _root("QNN (load binary) time", init.qnn_us, "us"),
        "",
        "",
        "Execute Stats: ",
        "",
    ]
    for number, stat in enumerate(log.executes, start=1):
        lines += _execute_block(log, number, stat, linting)
    return lines


def render_text(log: ProfilingLog, input_log: str, linting_reader: bool) -> str:
    """What the viewer prints: basic only for basic logs, plus the per-execute dump otherwise."""
    lines = [*preamble(log, input_log), "", *basic_lines(log)]
    if log.level != "basic":
        lines += backend_lines(log, linting=linting_reader and log.level == "linting")
    return "\n".join(lines).rstrip("\n") + "\n"

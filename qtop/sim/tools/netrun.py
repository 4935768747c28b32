"""Simulated ``qnn-net-run``: loads a (simulated) context, executes it, writes the log at exit.

stdout follows the real tool (formats.md §4): pid, build version, log level,
``Processing inference input(s):``, ``Creating context from binary file``,
``Executing Graphs``, ``Finished Executing Graphs``; no per-inference
latency. The profiling log is written into ``--output_dir`` only when the
process exits normally; a killed run leaves none.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

from qtop.sim.tools.args import ArgError, float_option, int_option, parse_options, text_option
from qtop.sim.tools.executes import PERF_PROFILES, execute_stat, sample_latency_us
from qtop.sim.tools.models import BadContextBinary, ContextSpec, GraphSpec, read_context
from qtop.sim.tools.profiling_log import SDK_VERSION, ExecuteStat, ProfilingLog, StageStat, encode
from qtop.sim.tools.service import ToolAborted, ToolContext

OPTIONS = {
    "--backend": True,
    "--retrieve_context": True,
    "--retrieve_context_list": True,
    "--model": True,
    "--input_list": True,
    "--output_dir": True,
    "--num_inferences": True,
    "--duration": True,
    "--perf_profile": True,
    "--profiling_level": True,
    "--profiling_option": True,
    "--config_file": True,
    "--keep_num_outputs": True,
    "--use_native_input_files": False,
    "--use_native_output_files": False,
    "--log_level": True,
    "--device_id": True,
    "--core_ids": True,
    "--version": False,
    "--help": False,
    "--debug": False,
}
PROFILING_LEVELS = {"basic": 1, "detailed": 2, "client": 1, "backend": 3}
LOG_LEVELS = ("error", "warn", "info", "verbose", "debug")
MAX_RESULT_DIRS = 1000
BUILD = f"{SDK_VERSION}_131419"


class NetRunError(Exception):
    """A failure the real tool reports on stderr before exiting 1."""


@dataclass(frozen=True, slots=True)
class LoadedContext:
    name: str | None
    path: Path
    spec: ContextSpec
    graphs: tuple[GraphSpec, ...]


def run_netrun(ctx: ToolContext) -> int:
    try:
        options = parse_options(ctx.argv, OPTIONS, {"-h": "--help"})
    except ArgError as exc:
        ctx.err(f"ERROR: {exc}")
        return 1
    if options.get("--version"):
        ctx.out(f"qnn-net-run pid:{ctx.pid}")
        ctx.out(f"QNN SDK {SDK_VERSION}")
        return 0
    if options.get("--help"):
        ctx.out(
            "usage: qnn-net-run --backend BACKEND (--retrieve_context CTX | "
            "--retrieve_context_list LIST) --input_list LIST [options]"
        )
        return 0
    try:
        return _run(ctx, options)
    except NetRunError as exc:
        ctx.err(str(exc))
        return 1
    except ArgError as exc:
        ctx.err(f"ERROR: {exc}")
        return 1


def _run(ctx: ToolContext, options: dict[str, str | bool]) -> int:
    board = ctx.board
    latency_config = board.config.latency
    log_level = text_option(options, "--log_level") or "error"
    if log_level not in LOG_LEVELS:
        raise ArgError(f"Invalid log level: {log_level}")
    chatty = LOG_LEVELS.index(log_level) >= LOG_LEVELS.index("info")
    _check_backend(ctx, text_option(options, "--backend"))
    level, option_optrace = _profiling(ctx, options)
    perf = text_option(options, "--perf_profile") or "default"
    if perf not in PERF_PROFILES:
        raise ArgError(f"Invalid perf profile: {perf}")
    num_inferences = int_option(options, "--num_inferences")
    duration_s = float_option(options, "--duration")
    if num_inferences is not None and duration_s is not None:
        raise ArgError("--num_inferences and --duration cannot be used together")
    contexts, input_lines = _contexts(ctx, options)
    if num_inferences is None and duration_s is None:
        num_inferences = input_lines
    keep = int_option(options, "--keep_num_outputs")
    output_dir = ctx.path(text_option(options, "--output_dir") or "./output")

    ctx.out(f"qnn-net-run pid:{ctx.pid}")
    ctx.out(f"qnn-net-run build version: {BUILD}")
    ctx.out(f"qnn-net-run log level is : QNN_LOG_LEVEL_{log_level.upper()}")
    if chatty and level:
        ctx.out(f"Profiling turned on; level = {PROFILING_LEVELS[_level_flag(options)]}")
        if option_optrace:
            ctx.out("Profiling option set; option = 1")
    ctx.out("Processing inference input(s):")
    for loaded in contexts:
        ctx.out(f"Creating context from binary file: {loaded.path}")
    weights = max(c.spec.weights_bytes for c in contexts)
    if not board.npu.try_acquire(ctx.invocation):
        ctx.err(f"fastrpc memory map for fd: 49 with length: {weights} failed with error: 0x1")
        ctx.err("Failed to map weights buffer to device! err: 1002")
        ctx.err("Could not create context from binary.")
        ctx.truth.update({"npu_busy_by_other": True})
        return 1

    init_us = round(latency_config.init_ms * 1000)
    deadline = ctx.start + init_us / 1e6
    if not ctx.sleep_until(deadline):
        raise ToolAborted()
    ctx.out("Executing Graphs")
    executes, truth, deadline = _execute(
        ctx,
        contexts,
        num_inferences,
        duration_s,
        PERF_PROFILES[perf],
        chatty,
        keep,
        output_dir,
        deadline,
    )
    ctx.out("Finished Executing Graphs")
    deinit_us = round(latency_config.deinit_ms * 1000)
    # Encoding happens during de-init so only the write itself lands after it, at exit.
    encoded = _encode_logs(contexts, level, option_optrace, executes, init_us, deinit_us)
    if not ctx.sleep_until(deadline + deinit_us / 1e6):
        raise ToolAborted()
    ctx.check_alive()
    logs = _write_logs(output_dir, encoded)
    truth.update(
        {
            "init_us": init_us,
            "deinit_us": deinit_us,
            "profiling_logs": logs,
            "output_dir": str(output_dir),
            "perf_profile": perf,
        }
    )
    ctx.truth.update(truth)
    return 0


def _check_backend(ctx: ToolContext, backend: str | None) -> None:
    if not backend:
        raise ArgError("Missing required argument: --backend")
    if "/" in backend and not ctx.path(backend).exists():
        raise NetRunError(
            f"Unable to load backend. dlerror(): {backend}: cannot open shared "
            "object file: No such file or directory"
        )
    if "htp" not in Path(backend).name.lower():
        raise NetRunError(f"qtop simulated board: only the HTP backend is simulated, not {backend}")


def _level_flag(options: dict[str, str | bool]) -> str:
    return text_option(options, "--profiling_level") or ""


def _profiling(ctx: ToolContext, options: dict[str, str | bool]) -> tuple[str | None, bool]:
    """The effective level (basic, detailed, linting or None) and whether optrace is on."""
    flag = _level_flag(options)
    option = text_option(options, "--profiling_option")
    if option is not None and option != "optrace":
        raise ArgError(f"Invalid profiling option: {option}")
    config_file = text_option(options, "--config_file")
    backend_level = _backend_config_level(ctx, config_file) if config_file else None
    if not flag:
        if option:
            raise ArgError("--profiling_option needs --profiling_level")
        return None, False
    if flag not in PROFILING_LEVELS:
        raise ArgError(f"Invalid profiling level: {flag}")
    if flag == "backend":
        if backend_level not in ("basic", "detailed", "linting"):
            raise NetRunError(
                "[ERROR] Backend extension config file does not specify a valid profiling level."
            )
        return backend_level, bool(option)
    return ("basic" if flag == "client" else flag), bool(option)


def _backend_config_level(ctx: ToolContext, config_file: str) -> str | None:
    """The two-level backend extension config of seed 000: netrun config -> HTP config."""
    outer = _json_file(ctx, config_file)
    extensions = outer.get("backend_extensions") if isinstance(outer, dict) else None
    if not isinstance(extensions, dict):
        keys = ", ".join(f"Unknown Key={key} passed in config" for key in outer) if outer else ""
        raise NetRunError(f"[ERROR] {keys or 'backend_extensions missing in config'}")
    inner_path = extensions.get("config_file_path")
    if not isinstance(inner_path, str):
        return None
    inner = _json_file(ctx, inner_path)
    devices = inner.get("devices") if isinstance(inner, dict) else None
    if isinstance(devices, list) and devices and isinstance(devices[0], dict):
        level = devices[0].get("profiling_level")
        return level if isinstance(level, str) else None
    return None


def _json_file(ctx: ToolContext, name: str) -> dict:
    path = ctx.path(name)
    try:
        data = json.loads(path.read_text())
    except OSError:
        raise NetRunError(f"[ERROR] Could not open config file: {name}") from None
    except ValueError:
        raise NetRunError(f"[ERROR] Config file is not valid JSON: {name}") from None
    return data if isinstance(data, dict) else {}


def _contexts(ctx: ToolContext, options: dict[str, str | bool]) -> tuple[list[LoadedContext], int]:
    if text_option(options, "--model"):
        raise NetRunError("qtop simulated board: --model is not simulated; use --retrieve_context")
    single = text_option(options, "--retrieve_context")
    listed = text_option(options, "--retrieve_context_list")
    if bool(single) == bool(listed):
        raise ArgError("Exactly one of --retrieve_context or --retrieve_context_list is required")
    if single:
        spec = _load(ctx, single)
        input_list = text_option(options, "--input_list")
        if not input_list:
            raise ArgError("Missing required argument: --input_list")
        if len(spec.graphs) != 1:
            raise NetRunError(
                f"[ERROR] Number of graphs and input lists differ: {len(spec.graphs)} != 1"
            )
        return [LoadedContext(None, ctx.path(single), spec, spec.graphs)], _lines(ctx, input_list)
    return _context_list(ctx, listed or "")


def _context_list(ctx: ToolContext, name: str) -> tuple[list[LoadedContext], int]:
    try:
        data = yaml.safe_load(ctx.path(name).read_text())
    except OSError:
        raise NetRunError(f"[ERROR] Could not open context list: {name}") from None
    except yaml.YAMLError:
        raise NetRunError(f"[ERROR] Context list is not valid YAML: {name}") from None
    entries = data.get("contexts") if isinstance(data, dict) else None
    if not isinstance(entries, list) or not entries:
        raise NetRunError(f"[ERROR] No contexts in {name}")
    contexts: list[LoadedContext] = []
    lines = 0
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("binaryFilePath"), str):
            raise NetRunError(f"[ERROR] Each context in {name} needs a binaryFilePath")
        spec = _load(ctx, entry["binaryFilePath"])
        enabled = (entry.get("contextConfig") or {}).get("enable_graphs")
        graphs = spec.graphs if not enabled else tuple(g for g in spec.graphs if g.name in enabled)
        inputs = {
            i.get("graphName"): i.get("inputFilePath")
            for i in entry.get("inputFilePath") or []
            if isinstance(i, dict)
        }
        for graph in graphs:
            input_list = inputs.get(graph.name)
            if not isinstance(input_list, str):
                raise NetRunError(f"[ERROR] No inputFilePath for graph {graph.name} in {name}")
            lines = max(lines, _lines(ctx, input_list))
        contexts.append(
            LoadedContext(
                str(entry.get("name") or "ctx"), ctx.path(entry["binaryFilePath"]), spec, graphs
            )
        )
    return contexts, lines


def _load(ctx: ToolContext, name: str) -> ContextSpec:
    try:
        return read_context(ctx.path(name))
    except BadContextBinary as exc:
        raise NetRunError(f"[ERROR] Could not create context from binary: {exc}") from None


def _lines(ctx: ToolContext, name: str) -> int:
    try:
        text = ctx.path(name).read_text()
    except OSError:
        raise NetRunError(f"[ERROR] Could not open input list: {name}") from None
    count = sum(1 for line in text.splitlines() if line.strip() and not line.startswith("#"))
    if count == 0:
        raise NetRunError(f"[ERROR] Input list is empty: {name}")
    return count


def _execute(
    ctx: ToolContext,
    contexts: list[LoadedContext],
    num_inferences: int | None,
    duration_s: float | None,
    perf_factor: float,
    chatty: bool,
    keep: int | None,
    output_dir: Path,
    deadline: float,
) -> tuple[list[list[ExecuteStat]], dict, float]:
    board = ctx.board
    latency_config = board.config.latency
    per_context: list[list[ExecuteStat]] = [[] for _ in contexts]
    latencies: list[int] = []
    states: list[int] = []
    temps: list[float] = []
    graphs: list[str] = []
    multipliers: list[float] = []
    first_start = deadline
    index = 0
    keep_limit = min(keep if keep is not None else MAX_RESULT_DIRS, MAX_RESULT_DIRS)
    board.npu.set_busy(True)
    try:
        while True:
            if num_inferences is not None and index >= num_inferences:
                break
            if duration_s is not None and deadline - first_start >= duration_s:
                break
            for context_index, loaded in enumerate(contexts):
                for graph_index, graph in enumerate(loaded.graphs):
                    snap = board.snapshot()
                    position = len(latencies)
                    latency = sample_latency_us(
                        graph,
                        latency_config,
                        ctx.rng,
                        snap.latency_multiplier,
                        perf_factor,
                        position,
                    )
                    deadline += latency / 1e6
                    per_context[context_index].append(
                        execute_stat(
                            graph,
                            graph_index,
                            latency,
                            snap.cdsp_state,
                            snap.latency_multiplier,
                            latency_config,
                            ctx.rng,
                            position,
                        )
                    )
                    latencies.append(latency)
                    states.append(snap.cdsp_state)
                    temps.append(round(snap.nsp_temp_c, 3))
                    graphs.append(graph.name)
                    multipliers.append(round(snap.latency_multiplier, 6))
                    if index < keep_limit:
                        _write_result(output_dir, index, graph.name, len(loaded.graphs) > 1)
                    if not ctx.sleep_until(deadline):
                        raise ToolAborted()
                    if chatty:
                        ctx.out(f"Graph {graph.name} execution finished with result 0")
            index += 1
    finally:
        board.npu.set_busy(False)
    truth = {
        "inferences": index,
        "latencies_us": latencies,
        "graphs": graphs,
        "cdsp_state": states,
        "nsp_temp_c": temps,
        "latency_multiplier": multipliers,
        "planned_s": sum(latencies) / 1e6
        + (latency_config.init_ms + latency_config.deinit_ms) / 1e3,
    }
    return per_context, truth, deadline


def _write_result(output_dir: Path, index: int, graph: str, per_graph: bool) -> None:
    directory = output_dir / f"Result_{index}"
    if per_graph:
        directory = directory / graph
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "output_0.raw").write_bytes(b"\0\0\0\0")


def _encode_logs(
    contexts: list[LoadedContext],
    level: str | None,
    optrace: bool,
    executes: list[list[ExecuteStat]],
    init_us: int,
    deinit_us: int,
) -> list[tuple[str, bytes]]:
    """Each context's log file name and content (none without profiling)."""
    if not level:
        return []
    encoded = []
    now_us = time.time_ns() // 1000
    for loaded, stats in zip(contexts, executes, strict=True):
        total_us = sum(s.netrun_us for s in stats)
        log = ProfilingLog(
            created_epoch_us=now_us,
            steady_clock_us=time.monotonic_ns() // 1000,
            level=level,
            optrace=optrace,
            graphs=tuple(g.name for g in loaded.graphs),
            init=_stage(init_us, (0.48, 0.47, 0.45, 0.998)),
            deinit=_stage(deinit_us, (0.36, 0.33, 0.30, 0.99)),
            executes=tuple(stats),
            ips=round(len(stats) / (total_us / 1e6), 4) if total_us else 0.0,
            extra={"htp_ops": {g.name: [op.htp_op for op in g.ops] for g in loaded.graphs}},
        )
        # Seed 000: with a context list the log is named after the context.
        name = (
            "qnn-profiling-data_0.log"
            if loaded.name is None
            else (f"qnn-profiling-data-{loaded.name}_0.log")
        )
        encoded.append((name, encode(log)))
    return encoded


def _write_logs(output_dir: Path, encoded: list[tuple[str, bytes]]) -> list[str]:
    written = []
    for name, data in encoded:
        output_dir.mkdir(parents=True, exist_ok=True)
        path = output_dir / name
        temporary = path.with_name(f".{name}.partial")
        temporary.write_bytes(data)
        temporary.replace(path)
        written.append(str(path))
    return written


def _stage(netrun_us: int, shares: tuple[float, float, float, float]) -> StageStat:
    rpc, qnn_accel, accel, qnn = (round(netrun_us * share) for share in shares)
    return StageStat(
        netrun_us=netrun_us, rpc_us=rpc, qnn_accel_us=qnn_accel, accel_us=accel, qnn_us=qnn
    )

"""How fast the profiler parsers are: python bench/parser_speed.py

Prints, best of 3 (CPU time of this process):
- the demo's render per qnn-net-run process (the simulated viewer's linting
  text, 20 executes of 3 ops, as sim-evk writes it): the full parse and the
  timing-only parse the live hook does for every process;
- a detailed viewer text of 1,000 executes with 30 ops each, and its breakdown;
- a 60 MB linting render through ``qtop ops`` (parse, breakdown, text);
- an optrace chrometrace of about 10 MB, every op event duplicated on a
  per-core track as the real files have it: whole, and cut 5 kB before its end;
- 400 kB of JSON cut inside 60 nested objects (the old salvage read it 60 times).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from qtop.commands.ops import ops_output
from qtop.parsers import parse, qnn_viewer_text
from qtop.parsers.lenient_json import load_json
from qtop.profiling.aggregate import breakdown
from qtop.sim.tools.profiling_log import ExecuteStat, OpStat, ProfilingLog, StageStat
from qtop.sim.tools.render_text import render_text

EXECUTES = 1000
OPS = 30
TRACE_OPS = 13_000
BIG_TEXT_BYTES = 60_000_000


def demo_render() -> str:
    """What the simulated viewer prints for one sim-evk process (HTP linting reader)."""
    ops = (
        OpStat("Input OpId_2", 0, 0, 0, 0, ()),
        OpStat("/Gather:OpId_21", 7356, 417, 0, 83, ("DMA",)),
        OpStat("Output OpId_3", 4990, 87, 0, 17, ("DMA",), ("/Gather:OpId_21",)),
    )
    stage = StageStat(netrun_us=2600, rpc_us=936, qnn_accel_us=858, accel_us=780, qnn_us=2574)
    executes = tuple(
        ExecuteStat(
            graph_index=0, netrun_us=2289 + n, rpc_us=2264, qnn_accel_us=1479, accel_us=1396,
            accel_excl_wait_us=160, qnn_us=2286 + n, accel_cycles=12850, vtcm_acquire=517,
            power_on=5936 if n == 0 else 10, ops=ops,
        )
        for n in range(20)
    )  # fmt: skip
    log = ProfilingLog(
        created_epoch_us=1796122020303988,
        steady_clock_us=645303472,
        level="linting",
        optrace=False,
        graphs=("token_ar1_cl4096_1_of_6",),
        init=stage,
        deinit=stage,
        executes=executes,
        ips=436.9,
    )
    return render_text(log, "/spool/run/prof/1.0", linting_reader=True)


def detailed_text() -> str:
    lines = ["Input Log File Location: device_out/qnn-profiling-data_0.log", "", "Execute Stats: "]
    for execute in range(1, EXECUTES + 1):
        lines += [
            "",
            f"Execute Stat {execute}",
            "",
            "Number of HVX threads used : 4  count",
            f"RPC (execute) time : {3100 + execute % 50}  us",
            f"QNN accelerator (execute) time : {820 + execute % 20}  us",
            f"Accelerator (execute) time (cycles) : {250000 + execute}  cycles",
        ]
        lines += [
            f"    /layers.{op}/MatMul_token_{op}:OpId_{op + 10} (cycles) : {1000 + op}  cycles"
            for op in range(OPS)
        ]
        lines += [
            f"Accelerator (execute) time : {428 + execute % 7}  us",
            "Accelerator (execute excluding wait) time : 56  us",
            f"QNN (execute) time : {3950 + execute % 30}  us",
        ]
    return "\n".join(lines) + "\n"


def big_render(render: str) -> str:
    """The demo render's executes repeated to about 60 MB: a very long profiled run."""
    head, marker, blocks = render.partition("Execute Stat 1 ")
    block = marker + blocks
    return head + block * (BIG_TEXT_BYTES // len(block))


def chrometrace() -> str:
    events: list[dict] = [
        {"cat": "__metadata", "pid": 0, "tid": 256, "ph": "M", "name": "thread_name",
         "args": {"name": "Type: HMX"}},
        {"cat": "__metadata", "pid": 2, "tid": 256, "ph": "M", "name": "thread_name",
         "args": {"name": "Core:0 Type: HMX Tid: 256"}},
    ]  # fmt: skip
    for index in range(TRACE_OPS):
        args = {
            "ID": f"0x{index:016x}", "HTP Op Type": "q::ConvLayer.opt.inconv",
            "Flags": ["uses_hvx"] if index % 2 else ["dma_wait"], "QNN Op Type": "Conv2d",
            "QNN Op Name": f"conv_{index % 300}", "Duration (cycles)": 100 + index % 900,
            "Dominant Path Cycles": 50 + index % 400, "Dims": [1, 64, 64, 32],
            "Inputs Ops": [f"0x{index + 1:016x}"],
        }  # fmt: skip
        for pid in (0, 2):
            events.append({"name": "q::ConvLayer.opt.inconv", "ph": "X", "tid": 256, "pid": pid,
                           "ts": index * 10, "dur": 100 + index % 900, "args": args})  # fmt: skip
    header = {"header_version": {"major": 1, "minor": 0, "patch": 0}, "artifact_type": "OP_TRACE"}
    return json.dumps({"header": header, "traceEvents": events})


def best_of(runs: int, work: Callable[[], object]) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(runs):
        started = time.process_time()
        result = work()
        best = min(best, time.process_time() - started)
    return best, result


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms" if seconds < 1 else f"{seconds:.2f} s"


def main() -> None:
    render = demo_render()
    full, _ = best_of(20, lambda: qnn_viewer_text.parse(render, "bench"))
    timing, _ = best_of(20, lambda: qnn_viewer_text.parse(render, "bench", ops=False))
    print(
        f"demo render per process ({render.count(chr(10))} lines, 20 executes): "
        f"full parse {ms(full)}, timing only {ms(timing)}"
    )
    text = detailed_text()
    seconds, profile = best_of(3, lambda: parse("qnn-viewer-text", text, "bench"))
    split, _ = best_of(3, lambda: breakdown(profile, warmup=1))  # type: ignore[arg-type]
    print(
        f"detailed text, {EXECUTES} executes x {OPS} ops ({len(text) / 1e6:.1f} MB): "
        f"parse {ms(seconds)}, breakdown {ms(split)}"
    )
    big = big_render(render)
    seconds, _ = best_of(3, lambda: ops_output(big, "bench"))
    print(f"qtop ops on a {len(big) / 1e6:.0f} MB linting render: {ms(seconds)}")
    trace = chrometrace()
    cut = trace[: len(trace) - 5000]
    whole, profile = best_of(3, lambda: parse("optrace", trace, "bench"))
    split, _ = best_of(3, lambda: breakdown(profile, warmup=1))  # type: ignore[arg-type]
    salvaged, _ = best_of(3, lambda: parse("optrace", cut, "bench"))
    print(
        f"optrace chrometrace, {TRACE_OPS} ops on 2 tracks ({len(trace) / 1e6:.1f} MB): "
        f"parse {ms(whole)}, breakdown {ms(split)}; cut 5 kB short: {ms(salvaged)}"
    )
    nested = '{"k": ' * 60 + "[" + '{"v": [1, 2, 3]}, ' * 22_000
    seconds, _ = best_of(3, lambda: load_json(nested))
    print(f"JSON cut inside 60 nested objects ({len(nested) / 1e3:.0f} kB): {ms(seconds)}")


if __name__ == "__main__":
    main()

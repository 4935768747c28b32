"""How fast the profiler parsers are on large inputs: python bench/parser_speed.py

Prints the time to parse (best of 3) and to break down:
- a detailed qnn-profile-viewer text of 1,000 executes with 30 ops each;
- an optrace chrometrace of about 10 MB, every op event duplicated on a
  per-core track as the real files have it.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from qtop.parsers import parse
from qtop.profiling.aggregate import breakdown

EXECUTES = 1000
OPS = 30
TRACE_OPS = 13_000


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


def best_of(runs: int, work) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(runs):
        started = time.perf_counter()
        result = work()
        best = min(best, time.perf_counter() - started)
    return best, result


def main() -> None:
    for kind, text, label in (
        ("qnn-viewer-text", detailed_text(), f"detailed text, {EXECUTES} executes x {OPS} ops"),
        ("optrace", chrometrace(), f"optrace chrometrace, {TRACE_OPS} ops on 2 tracks"),
    ):
        seconds, profile = best_of(3, lambda k=kind, t=text: parse(k, t, "bench"))
        split_seconds, _ = best_of(3, lambda p=profile: breakdown(p, warmup=1))
        size = len(text.encode()) / 1e6
        print(f"{label} ({size:.1f} MB): parse {seconds:.2f} s, breakdown {split_seconds:.3f} s")


if __name__ == "__main__":
    main()

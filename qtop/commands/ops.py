"""qtop ops: the per-op breakdown of one profiler output file, without a session."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

HELP = "per-op breakdown of a profiler file (viewer text/CSV/JSON, optrace, Genie, AI Hub)"
DESCRIPTION = """\
Print the per-op breakdown of one profiler output file pulled from a board:
per graph and per execute the accelerator time against the time excluding
wait (the wait share), and per op its cycles, scheduler wait, overlap,
resources (HVX, HMX, DMA) and optrace flags, with the median and P95 over the
executes after the warm-up ones.

Reads (kind detected from the content; --kind to force):
  qnn-viewer-text   qnn-profile-viewer text: basic, detailed, linting layouts
  qnn-viewer-csv    qnn-profile-viewer --output X.csv (not ONNX Runtime's CSV)
  qnn-viewer-json   --standardized_json_output with libQnnJsonProfilingReader.so
  optrace           optrace chrometrace.json (libQnnHtpOptraceProfilingReader.so)
  runtrace          chrometrace_runtrace.json
  qhas              chrometrace_qnn_htp_analysis_summary.json
  genie-profile     genie-t2t-run --profile FILE
  genie-stdout      what genie-t2t-run printed
  ai-hub            AI Hub profile_job.download_profile() JSON

Cycles are summed over HVX/HMX threads (work, not wall time); the wait share
uses the microsecond roots. docs/profiler-formats.md explains the numbers.

examples:
  qtop ops linting_htp.txt
  qtop ops profile.csv --sort cycles --top 10
  qtop ops chrometrace.json --json | jq '.breakdown.graphs[0].ops[0]'
"""

SORT_CHOICES = ("wait", "cycles")
# The same names as qtop.parsers.KINDS (a test keeps them equal); spelled out
# here so that building the command line does not import the parsers.
KIND_CHOICES = (
    "qnn-viewer-text",
    "qnn-viewer-csv",
    "qnn-viewer-json",
    "optrace",
    "runtrace",
    "qhas",
    "genie-profile",
    "genie-stdout",
    "ai-hub",
)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="profiler output file")
    parser.add_argument(
        "--kind", choices=KIND_CHOICES, help="the file's format (default: detected)"
    )
    parser.add_argument("--json", action="store_true", help="print the parsed report as JSON")
    parser.add_argument(
        "--top",
        type=_count,
        default=20,
        metavar="N",
        help="show the N largest ops per graph (default 20; 0 = all)",
    )
    parser.add_argument(
        "--sort",
        choices=SORT_CHOICES,
        help="order ops by median scheduler wait or by median cycles "
        "(default: wait when the file has it, else cycles)",
    )
    parser.add_argument(
        "--warmup",
        type=_count,
        default=1,
        metavar="N",
        help="leave the first N executes of each graph out of medians (default 1)",
    )


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected 0 or more, got {value}")
    return value


def read_profiler_file(path: Path) -> str:
    """The file's text; a clear ``UsageError`` when it is missing, unreadable or binary."""
    from qtop.errors import UsageError

    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file", "check the path") from None
    except IsADirectoryError:
        raise UsageError(f"{path}: is a directory", "pass one profiler output file") from None
    except OSError as exc:
        raise UsageError(f"{path}: cannot read it ({exc.strerror})", "check permissions") from None
    if b"\x00" in raw[:4096]:
        raise UsageError(
            f"{path}: binary data, not profiler text or JSON (the qnn-profiling-data_N.log "
            "that qnn-net-run writes is binary)",
            "convert it on the board: qnn-profile-viewer --input_log qnn-profiling-data_0.log "
            "--output profile.csv (or .json, or no --output for text), then pass that file",
        )
    return raw.decode("utf-8", errors="replace")


def run(args: argparse.Namespace) -> int:
    from qtop.parsers import detect_kind, parse
    from qtop.profiling.aggregate import breakdown, sort_ops
    from qtop.profiling.render import render

    path = Path(args.file)
    text = read_profiler_file(path)
    kind = args.kind or detect_kind(text, str(path))
    profile = parse(kind, text, str(path))
    result = breakdown(profile, warmup=args.warmup)
    if args.json:
        document: dict[str, Any] = {
            "kind": profile.kind,
            "source": profile.source,
            "report": profile.to_dict(),
            "breakdown": result.to_dict(),
        }
        for graph, graph_dict in zip(result.graphs, document["breakdown"]["graphs"], strict=True):
            by = args.sort or (
                "wait" if any(op.wait_median is not None for op in graph.ops) else "cycles"
            )
            ordered = [op.key for op in sort_ops(graph.ops, by)]
            kept = ordered if args.top == 0 else ordered[: args.top]
            by_key = {op["key"]: op for op in graph_dict["ops"]}
            graph_dict["ops"] = [by_key[key] for key in kept]
            graph_dict["ops_sorted_by"] = by
        sys.stdout.write(json.dumps(document, indent=1, allow_nan=False) + "\n")
        return 0
    sys.stdout.write(render(profile, result, top=args.top, sort=args.sort) + "\n")
    return 0

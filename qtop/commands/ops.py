"""qtop ops: the per-op breakdown of one profiler output file, without a session."""

from __future__ import annotations

import argparse
import json
import os
import re
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
  qtop ops linting_htp.txt --against aihub_profile.json
"""

SORT_CHOICES = ("wait", "cycles")
# Real profiler output is a few MB (a 1,000-execute linting render is about 2 MB);
# past this a file is more likely a mistake than a profile, and parsing it takes a while.
DEFAULT_MAX_BYTES = 200 * 10**6
_SIZE = re.compile(r"(?P<number>[0-9]+(?:\.[0-9]+)?)\s*(?P<unit>|b|kb?|mb?|gb?)")
_SIZE_UNITS = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9}
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
        "--against",
        metavar="AIHUB_JSON",
        help="line the ops up with AI Hub's profile of the same model "
        "(profile_job.download_profile()) and show where the device departs from it",
    )
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
    parser.add_argument(
        "--max-size",
        type=parse_size,
        default=DEFAULT_MAX_BYTES,
        metavar="SIZE",
        help=f"refuse bigger files (default {DEFAULT_MAX_BYTES // 10**6}MB; 0 = no limit)",
    )


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected 0 or more, got {value}")
    return value


def parse_size(text: str) -> int:
    """``200MB``, ``1.5GB``, ``800k`` or plain bytes; 0 means no limit."""
    match = _SIZE.fullmatch(text.strip().lower())
    if match is None:
        raise argparse.ArgumentTypeError(f"expected a size like 200MB, or 0 for no limit: {text!r}")
    value = float(match.group("number")) * _SIZE_UNITS[match.group("unit").rstrip("b")]
    if value > 2**62:
        raise argparse.ArgumentTypeError(f"{text!r} is more than any file could be")
    return int(value)


def read_profiler_file(path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> str:
    """The file's text; a clear ``UsageError`` when it is missing, unreadable, too big or binary."""
    from qtop.errors import UsageError
    from qtop.textsafe import plain

    shown = plain(str(path))
    try:
        with path.open("rb") as file:
            size = os.fstat(file.fileno()).st_size
            if max_bytes and size > max_bytes:
                raise UsageError(
                    f"{shown}: {size / 1e6:.3g} MB, more than the {max_bytes / 1e6:.3g} MB qtop "
                    "ops reads (real profiler output is a few MB: is this one?)",
                    f"raise the limit with --max-size {_round_up_mb(size)}MB, or 0 for none",
                )
            raw = file.read(max_bytes + 1) if max_bytes else file.read()
    except FileNotFoundError:
        raise UsageError(f"{shown}: no such file", "check the path") from None
    except IsADirectoryError:
        raise UsageError(f"{shown}: is a directory", "pass one profiler output file") from None
    except OSError as exc:
        raise UsageError(f"{shown}: cannot read it ({exc.strerror})", "check permissions") from None
    if max_bytes and len(raw) > max_bytes:
        # A file that grew while it was read (a FIFO, a log still being written).
        raise UsageError(
            f"{shown}: more than {max_bytes / 1e6:g} MB", "raise the limit with --max-size"
        )
    if b"\x00" in raw[:4096]:
        raise UsageError(
            f"{shown}: binary data, not profiler text or JSON (the qnn-profiling-data_N.log "
            "that qnn-net-run writes is binary)",
            "convert it on the board: qnn-profile-viewer --input_log qnn-profiling-data_0.log "
            "--output profile.csv (or .json, or no --output for text), then pass that file",
        )
    return raw.decode("utf-8", errors="replace")


def _round_up_mb(size: int) -> int:
    return -(-size // 10**6)


def ops_output(
    text: str,
    source: str,
    *,
    kind: str | None = None,
    as_json: bool = False,
    top: int = 20,
    sort: str | None = None,
    warmup: int = 1,
) -> str:
    """What ``qtop ops`` prints for ``text``; raises the parser's error when it cannot read it.

    Every string that came from the file is escaped (``qtop.textsafe``) in the
    text output, and JSON escapes control characters itself.
    """
    from qtop.parsers import detect_kind, parse
    from qtop.profiling.aggregate import breakdown, sort_ops
    from qtop.profiling.render import render

    profile = parse(kind or detect_kind(text, source), text, source)
    result = breakdown(profile, warmup=warmup)
    if not as_json:
        return render(profile, result, top=top, sort=sort) + "\n"
    document: dict[str, Any] = {
        "kind": profile.kind,
        "source": profile.source,
        "report": profile.to_dict(),
        "breakdown": result.to_dict(),
    }
    for graph, graph_dict in zip(result.graphs, document["breakdown"]["graphs"], strict=True):
        by = sort or ("wait" if any(op.wait_median is not None for op in graph.ops) else "cycles")
        ordered = [op.key for op in sort_ops(graph.ops, by)]
        kept = ordered if top == 0 else ordered[:top]
        by_key = {op["key"]: op for op in graph_dict["ops"]}
        graph_dict["ops"] = [by_key[key] for key in kept]
        graph_dict["ops_sorted_by"] = by
    return json.dumps(document, indent=1, allow_nan=False) + "\n"


def against_output(
    text: str,
    source: str,
    hub_text: str,
    hub_source: str,
    *,
    kind: str | None = None,
    as_json: bool = False,
    top: int = 20,
    warmup: int = 1,
) -> str:
    """What ``qtop ops FILE --against AIHUB`` prints; a ``UsageError`` when nothing lines up."""
    from qtop.errors import UsageError
    from qtop.parsers import detect_kind, parse
    from qtop.profiling.against import compare_ops, device_ops
    from qtop.profiling.aggregate import breakdown
    from qtop.profiling.render_against import render_against
    from qtop.textsafe import plain

    device = parse(kind or detect_kind(text, source), text, source)
    hub = parse("ai-hub", hub_text, hub_source)
    result = compare_ops(breakdown(device, warmup=warmup), hub, breakdown(hub, warmup=warmup))
    if not result.matched and not result.hub_fused and not result.hub_off_npu:
        device_names = list(device_ops(breakdown(device)))[:3]
        hub_names = [layer.key for layer in result.hub_only][:3]
        raise UsageError(
            f"no op of {plain(source)} has a layer of the same name in {plain(hub_source)} "
            f"(device: {plain(', '.join(device_names)) or 'no ops'}; AI Hub: "
            f"{plain(', '.join(hub_names)) or 'no layers'})",
            "pass AI Hub's profile of the model the device ran, and a device profile with "
            "per-op rows (qnn-profile-viewer linting or detailed output, or optrace)",
        )
    if as_json:
        document = {"device": source, "ai_hub": hub_source, "against": result.to_dict()}
        return json.dumps(document, indent=1, allow_nan=False) + "\n"
    return render_against(result, source, hub_source, top)


def run(args: argparse.Namespace) -> int:
    path = Path(args.file)
    text = read_profiler_file(path, args.max_size)
    if args.against is not None:
        hub_path = Path(args.against)
        hub_text = read_profiler_file(hub_path, args.max_size)
        sys.stdout.write(
            against_output(
                text,
                str(path),
                hub_text,
                str(hub_path),
                kind=args.kind,
                as_json=args.json,
                top=args.top,
                warmup=args.warmup,
            )
        )
        return 0
    output = ops_output(
        text,
        str(path),
        kind=args.kind,
        as_json=args.json,
        top=args.top,
        sort=args.sort,
        warmup=args.warmup,
    )
    sys.stdout.write(output)
    return 0

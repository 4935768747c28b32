"""qtop export: a recording as CSV or as a Chrome/Perfetto trace."""

from __future__ import annotations

import argparse
import sys

HELP = "export a recording as CSV or a Perfetto trace"
DESCRIPTION = """\
Export a recording for other tools.

  --format csv       one row per sampler tick: t_s, seq, then one column per
                     channel named <channel id>_<unit> (sorted, stable); an
                     unreadable sensor is an empty cell. --table iterations
                     writes one row per iteration instead (latency, phase,
                     variant, exit status, and the tool's metrics).
  --format perfetto  a Chrome/Perfetto JSON trace: iterations as slices (one
                     track per variant), phases, markers and link gaps, and
                     every sensor as a counter track. Open it at
                     https://ui.perfetto.dev next to a QNN chrometrace.

The output goes next to the recording (<name>.csv, <name>.iterations.csv or
<name>.perfetto.json) unless -o says otherwise; -o - writes to stdout.

examples:
  qtop export run.jsonl --format csv
  qtop export run.jsonl --format csv --table iterations -o - | head
  qtop export run.jsonl --format perfetto -o run.trace.json
"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="the recording (.jsonl)")
    parser.add_argument(
        "--format", choices=("csv", "perfetto"), required=True, help="what to write"
    )
    parser.add_argument(
        "--table",
        choices=("samples", "iterations"),
        default="samples",
        help="for csv: one row per sample (default) or per iteration",
    )
    parser.add_argument("-o", "--output", metavar="PATH", help="where to write ('-': stdout)")


def _default_output(source: str, fmt: str, table: str) -> str:
    from pathlib import Path

    path = Path(source)
    stem = path.name
    for suffix in (".gz", ".jsonl", ".json"):
        stem = stem.removesuffix(suffix)
    if fmt == "perfetto":
        name = f"{stem}.perfetto.json"
    else:
        name = f"{stem}.iterations.csv" if table == "iterations" else f"{stem}.csv"
    return str(path.with_name(name))


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from qtop.errors import UsageError
    from qtop.export.csv import write_iterations_csv, write_samples_csv
    from qtop.export.perfetto import write_perfetto
    from qtop.record.reader import open_recording

    recording = open_recording(args.file)
    events = list(recording.events())
    for warning in recording.warnings():
        sys.stderr.write(f"qtop export: warning: {warning}\n")
    if args.format == "perfetto":
        writer, what = write_perfetto, "trace events"
    elif args.table == "iterations":
        writer, what = write_iterations_csv, "rows"
    else:
        writer, what = write_samples_csv, "rows"
    target = args.output or _default_output(args.file, args.format, args.table)
    if target == "-":
        writer(events, sys.stdout)
        return 0
    if Path(target).resolve() == Path(args.file).resolve():
        raise UsageError(
            f"{target}: the output would overwrite the recording", "choose another path with -o"
        )
    try:
        with open(target, "w", encoding="utf-8", newline="") as out:
            count = writer(events, out)
    except OSError as exc:
        raise UsageError(
            f"{target}: cannot write: {exc.strerror or exc}", "choose a writable path with -o"
        ) from None
    sys.stderr.write(f"qtop export: wrote {count} {what} to {target}\n")
    return 0

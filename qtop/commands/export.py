"""qtop export: a recording as CSV, as a Chrome/Perfetto trace, or one event per line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from qtop.events import Event
    from qtop.record.reader import Recording

HELP = "export a recording as CSV, a Perfetto trace or one event per line"
DESCRIPTION = """\
Export a recording for other tools.

  --format csv       one row per sampler tick: t_s, seq, then one column per
                     channel named <channel id>_<unit> (sorted, stable); an
                     unreadable sensor is an empty cell. --table iterations
                     writes one row per iteration instead (latency, phase,
                     variant, exit status, a paced run's scheduled start,
                     lateness and deadline miss, and the tool's metrics).
  --format perfetto  a Chrome/Perfetto JSON trace: iterations as slices (one
                     track per variant), phases, markers and link gaps, and
                     every sensor as a counter track. Open it at
                     https://ui.perfetto.dev next to a QNN chrometrace.
  --format jsonl     every event on a line of its own, as format version 1
                     wrote them: runs of iterations and output lines unpacked,
                     numbered texts written out, no keyframes or index. For
                     tools that want one JSON object per event.

The output goes next to the recording (<name>.csv, <name>.iterations.csv,
<name>.perfetto.json or <name>.events.jsonl) unless -o says otherwise; -o -
writes to stdout. Like a recording, the file is created with mode 0600 (--mode
to choose another) and never overwrites anything: an existing file (or a
symbolic link) of that name stops the export, unless --force, which replaces it
in one step (the link itself, never the file it points to). The file appears
only once it is complete.

Text from the device (channel names, variants, errors) keeps its data, but its
control characters are written as visible escapes (\x1b, \n) in CSV cells and
headers, and as JSON escapes in the JSON formats, so no exported file can drive
a terminal it is printed on.

examples:
  qtop export run.jsonl --format csv
  qtop export run.jsonl --format csv --table iterations -o - | head
  qtop export run.jsonl --format perfetto -o run.trace.json --force --mode 644
  qtop export run.jsonl --format jsonl -o - | jq -r 'select(.kind=="iteration") | .latency_s'
"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="the recording (.jsonl)")
    parser.add_argument(
        "--format", choices=("csv", "perfetto", "jsonl"), required=True, help="what to write"
    )
    parser.add_argument(
        "--table",
        choices=("samples", "iterations"),
        default="samples",
        help="for csv: one row per sample (default) or per iteration",
    )
    parser.add_argument("-o", "--output", metavar="PATH", help="where to write ('-': stdout)")
    parser.add_argument(
        "--force", action="store_true", help="replace an existing output file (atomically)"
    )
    parser.add_argument(
        "--mode",
        type=_mode,
        default=None,
        metavar="OCTAL",
        help="permissions of the output file (default 600: only you can read it)",
    )


def _mode(text: str) -> int:
    from qtop.export.output import parse_mode

    try:
        return parse_mode(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _default_output(source: str, fmt: str, table: str) -> str:
    from pathlib import Path

    path = Path(source)
    stem = path.name
    for suffix in (".gz", ".jsonl", ".json"):
        stem = stem.removesuffix(suffix)
    if fmt == "perfetto":
        name = f"{stem}.perfetto.json"
    elif fmt == "jsonl":
        name = f"{stem}.events.jsonl"
    else:
        name = f"{stem}.iterations.csv" if table == "iterations" else f"{stem}.csv"
    return str(path.with_name(name))


class _Events:
    """The recording's events, read again each time they are iterated (nothing held)."""

    def __init__(self, recording: Recording) -> None:
        self.recording = recording

    def __iter__(self) -> Iterator[Event]:
        return self.recording.events(keyframes=False)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from qtop.errors import UsageError
    from qtop.export.csv import write_iterations_csv, write_samples_csv
    from qtop.export.output import DEFAULT_MODE, write_file
    from qtop.export.perfetto import write_perfetto
    from qtop.record.reader import open_recording

    recording = open_recording(args.file)
    events: Iterable[Event] = _Events(recording)
    writer: Callable[[Any, TextIO], int]
    if args.format == "jsonl":
        writer, what = write_event_lines, "events"
    elif args.format == "perfetto":
        writer, what = write_perfetto, "trace events"
    elif args.table == "iterations":
        writer, what = write_iterations_csv, "rows"
    else:
        writer, what = write_samples_csv, "rows"
    target = args.output or _default_output(args.file, args.format, args.table)
    try:
        if target == "-":
            writer(events, sys.stdout)
            _warn(recording)
            return 0
        if Path(target).resolve() == Path(args.file).resolve():
            raise UsageError(
                f"{target}: the output would overwrite the recording",
                "choose another path with -o",
            )
        mode = DEFAULT_MODE if args.mode is None else args.mode
        count = write_file(
            Path(target), lambda out: writer(events, out), force=args.force, mode=mode
        )
    finally:
        recording.close()
    _warn(recording)
    sys.stderr.write(f"qtop export: wrote {count} {what} to {target}\n")
    return 0


def _warn(recording: Recording) -> None:
    from qtop.textsafe import plain

    for warning in recording.warnings():
        sys.stderr.write(f"qtop export: warning: {plain(warning)}\n")


def write_event_lines(events: Iterable[Event], out: TextIO) -> int:
    """Each event as one compact JSON line (its ``to_dict``, a time no float holds as
    null); returns how many.

    Control characters in text are JSON escapes (``\\u009b``), never raw.
    """
    from qtop.record.lines import dumps_text
    from qtop.report.render import non_finite_as_null

    count = 0
    for event in events:
        out.write(dumps_text(non_finite_as_null(event.to_dict())))
        count += 1
    return count

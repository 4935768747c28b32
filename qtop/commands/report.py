"""qtop report: summarise one or more recordings."""

from __future__ import annotations

import argparse
import sys

HELP = "summarise recordings: latency percentiles, energy, thermal, link"
DESCRIPTION = """\
Summarise one or more recordings.

For several files (or variants) it ends with one row per recording and variant,
like the seed's results table: config, P50, P95, P99, peak memory and energy per
inference where known.

examples:
  qtop report recordings/2026-11-29T10-00-00-sim-evk.jsonl
  qtop report base.jsonl new.jsonl --format markdown >> $GITHUB_STEP_SUMMARY
"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="+", metavar="FILE", help="recordings (.jsonl)")
    parser.add_argument(
        "--format",
        choices=("text", "markdown", "json", "csv"),
        default="text",
        help="output format (default: text)",
    )


def run(args: argparse.Namespace) -> int:
    from qtop.report.render import render
    from qtop.report.summary import summarize_recording

    summaries = [summarize_recording(path)[0] for path in args.files]
    sys.stdout.write(render(summaries, args.format) + "\n")
    return 0

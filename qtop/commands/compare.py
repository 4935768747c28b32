"""qtop compare: two recordings side by side, with confidence and regression gates."""

from __future__ import annotations

import argparse
import sys

HELP = "compare two recordings: deltas with confidence intervals; regression gates for CI"
DESCRIPTION = """\
Compare two recordings (BASE, then NEW) variant by variant: P50/P90/P95/P99/P99.9,
mean latency, energy per inference (gross and net of the idle baseline),
stability and throttling onset, each change with a bootstrap confidence interval,
plus a Mann-Whitney U test of the latency distributions.

A gate --max-regression METRIC=PERCENT fails (exit 1) only when the regression
exceeds PERCENT beyond the measurement's own noise: when the lower end of the
confidence interval of the change is above PERCENT. Metrics: p50 p90 p95 p99
p999 mean energy energy_net. Two single-variant recordings are compared
whatever their variant names; otherwise variants are matched by name.

exit status: 0 all gates passed, 1 a gate failed, 2 bad usage or unreadable input

examples:
  qtop compare base.jsonl new.jsonl
  qtop compare base.jsonl new.jsonl --max-regression p95=5% --max-regression energy=10%
  qtop compare base.jsonl new.jsonl --format markdown >> $GITHUB_STEP_SUMMARY
"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("base", metavar="BASE", help="the reference recording (.jsonl)")
    parser.add_argument("new", metavar="NEW", help="the recording to check (.jsonl)")
    parser.add_argument(
        "--max-regression",
        action="append",
        default=[],
        metavar="METRIC=PERCENT",
        help="fail when METRIC regresses by more than PERCENT beyond the noise (repeatable)",
    )
    parser.add_argument(
        "--format",
        choices=("text", "markdown", "json"),
        default="text",
        help="output format (default: text)",
    )
    parser.add_argument(
        "--confidence",
        type=float,
        default=0.95,
        help="confidence level of the intervals and gates (default: 0.95)",
    )
    parser.add_argument(
        "--resamples", type=int, default=2000, help="bootstrap resamples (default: 2000)"
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="seed of the bootstrap, for repeatable output"
    )


def run(args: argparse.Namespace) -> int:
    import json

    from qtop.analysis.compare import compare_sessions, parse_gate
    from qtop.analysis.render_compare import (
        render_comparison_markdown,
        render_comparison_text,
    )
    from qtop.analysis.session import analyze
    from qtop.errors import EXIT_FAILED, EXIT_OK
    from qtop.record.reader import open_recording

    gates = [parse_gate(text) for text in args.max_regression]
    analyses = []
    for path in (args.base, args.new):
        recording = open_recording(path)
        analyses.append(analyze(recording.events()))
        for warning in recording.warnings():
            sys.stderr.write(f"qtop compare: warning: {warning}\n")
    comparison = compare_sessions(
        analyses[0],
        analyses[1],
        gates,
        base_label=args.base,
        new_label=args.new,
        confidence=args.confidence,
        resamples=args.resamples,
        seed=args.seed,
    )
    if args.format == "json":
        text = json.dumps(comparison.to_dict(), indent=2, allow_nan=False)
    elif args.format == "markdown":
        text = render_comparison_markdown(comparison)
    else:
        text = render_comparison_text(comparison)
    sys.stdout.write(text + "\n")
    return EXIT_FAILED if comparison.failed else EXIT_OK

"""qtop compare: two recordings (or two variants) side by side, with confidence and gates."""

from __future__ import annotations

import argparse
import os
import sys

HELP = "compare two recordings or two variants: deltas with confidence intervals; CI gates"
DESCRIPTION = """\
Compare BASE with NEW variant by variant: P50/P90/P95/P99/P99.9, mean latency,
energy per inference (gross and net of the idle baseline), stability and
throttling onset, each change with a confidence interval, plus a Mann-Whitney U
test of the latency distributions.

BASE and NEW are recordings (.jsonl), or one variant of a recording written
FILE:VARIANT, so two variants of one sweep compare like two recordings:
  qtop compare sweep.jsonl:w8a8 sweep.jsonl:w8a16

The intervals know that iterations of a sustained run are not independent
(it drifts with temperature): iterations are resampled in blocks as long as
their autocorrelation reaches, and the output gives each side's effective
number of iterations. When the profile repeated its runs (run.repeat: N),
the spread between repetitions widens the intervals.

A gate --max-regression METRIC=PERCENT fails (exit 1) only when the regression
exceeds PERCENT beyond the measurement's own noise: when the lower end of the
confidence interval of the change is above PERCENT. Metrics: p50 p90 p95 p99
p999 mean energy energy_net. Two single-variant sides are compared whatever
their variant names; otherwise variants are matched by name.

BASE and NEW may come from different devices (the glasses and the reference
phone of 'qtop run A B'): the output then names both devices and says that
the changes are between devices.

exit status: 0 all gates passed, 1 a gate failed, 2 bad usage or unreadable input

examples:
  qtop compare base.jsonl new.jsonl
  qtop compare base.jsonl new.jsonl --max-regression p95=5% --max-regression energy=10%
  qtop compare sweep.jsonl:w8a8 sweep.jsonl:w8a16 --max-regression p50=2%
  qtop compare base.jsonl new.jsonl --format markdown >> $GITHUB_STEP_SUMMARY
"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "base", metavar="BASE", help="the reference: a recording (.jsonl) or FILE:VARIANT"
    )
    parser.add_argument(
        "new", metavar="NEW", help="the one to check: a recording (.jsonl) or FILE:VARIANT"
    )
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


def split_side(text: str) -> tuple[str, str | None]:
    """``FILE`` or ``FILE:VARIANT`` -> (file, variant or None).

    An existing file wins, so a path with a colon in it still works; variant
    names cannot contain a colon, so the last one separates them.
    """
    if os.path.exists(text) or ":" not in text:
        return text, None
    path, _, variant = text.rpartition(":")
    return path, variant


def run(args: argparse.Namespace) -> int:
    import json
    from dataclasses import replace

    from qtop.analysis.compare import compare_sessions, parse_gate
    from qtop.analysis.render_compare import (
        render_comparison_markdown,
        render_comparison_text,
    )
    from qtop.analysis.session import SessionAnalysis, analyze
    from qtop.errors import EXIT_FAILED, EXIT_OK, UsageError
    from qtop.record.reader import open_recording
    from qtop.report.summary import device_name
    from qtop.textsafe import plain, plain_lines

    gates = [parse_gate(text) for text in args.max_regression]
    sides = [split_side(args.base), split_side(args.new)]
    for text, (path, variant) in zip((args.base, args.new), sides, strict=True):
        if variant == "":
            raise UsageError(
                f"{text}: no variant after the colon", f"write {path}:VARIANT, or just {path}"
            )
    analyses: dict[str, SessionAnalysis] = {}
    devices: dict[str, str] = {}
    for path, _ in sides:
        if path in analyses:
            continue
        recording = open_recording(path)
        devices[path] = device_name(recording.header.device)
        analyses[path] = analyze(recording.events())
        for warning in recording.warnings():
            sys.stderr.write(f"qtop compare: warning: {plain(warning)}\n")
    (base_path, base_variant), (new_path, new_variant) = sides
    comparison = compare_sessions(
        analyses[base_path],
        analyses[new_path],
        gates,
        base_label=args.base,
        new_label=args.new,
        base_variant=base_variant,
        new_variant=new_variant,
        confidence=args.confidence,
        resamples=args.resamples,
        seed=args.seed,
    )
    base_device, new_device = devices[base_path], devices[new_path]
    if base_device != new_device:
        comparison = replace(comparison, devices=(base_device or "?", new_device or "?"))
    if args.format == "json":
        text = json.dumps(comparison.to_dict(), indent=2, allow_nan=False)
    elif args.format == "markdown":
        # Variant names and labels come from the recordings: no control character printed.
        text = plain_lines(render_comparison_markdown(comparison))
    else:
        text = plain_lines(render_comparison_text(comparison))
    sys.stdout.write(text + "\n")
    return EXIT_FAILED if comparison.failed else EXIT_OK

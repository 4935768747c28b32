"""Options shared by the commands that run a live session (run, demo)."""

from __future__ import annotations

import argparse


def _positive_float(text: str) -> float:
    from qtop.profiles import parse_duration

    try:
        value = parse_duration(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if value <= 0:
        raise argparse.ArgumentTypeError("must be more than 0")
    return value


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError("must be 0 or more")
    return value


def add_live_options(parser: argparse.ArgumentParser) -> None:
    session = parser.add_argument_group("session")
    session.add_argument(
        "--headless", action="store_true", help="print progress and a summary instead of the UI"
    )
    session.add_argument(
        "--record", metavar="FILE", help="recording path (default: a timestamped file)"
    )
    session.add_argument("--no-record", action="store_true", help="do not write a recording")
    plan = parser.add_argument_group("run plan (overrides the profile)")
    plan.add_argument("--warmup", type=_count, metavar="N", help="warm-up iterations")
    plan.add_argument("--iterations", type=_count, metavar="N", help="measured iterations")
    plan.add_argument(
        "--duration", type=_positive_float, metavar="SECONDS", help="measure for a duration (10m)"
    )
    plan.add_argument(
        "--interval", type=_positive_float, metavar="SECONDS", help="sensor sampling interval"
    )
    plan.add_argument(
        "--variant", action="append", metavar="NAME", help="run only these variants (repeatable)"
    )


def wants_headless(args: argparse.Namespace) -> bool:
    """--headless, or a standard output that is no terminal (a pipe, a CI log).

    The UI needs a terminal to draw on; writing its escape codes into a file
    and waiting for a key nobody can press would help no one.
    """
    import sys

    if args.headless:
        return True
    if not sys.stdout.isatty():
        sys.stderr.write("standard output is not a terminal: running headless\n")
        return True
    return False

"""Options shared by the commands that run a live session (run, demo).

The run-plan options take text and are checked by the profile schema's own
rules (``qtop.live.overrides``), so ``--duration 20``, ``--duration 20s`` and
``duration: 20`` in a profile are the same thing, with the same limits and
the same messages.
"""

from __future__ import annotations

import argparse
import re
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from qtop.metrics.address import ListenAddress
    from qtop.profiles import Profile

# argparse takes '-5s' for an option unless it looks like a negative number: let
# anything starting '-<digit>' be a value, so that '--duration -5s' gets the
# schema's message rather than "expected one argument" (no option of qtop's
# starts with a digit).
_NEGATIVE_VALUE = re.compile(r"^-\.?\d")


def _limits(section: str, attribute: str) -> str:
    from qtop.profiles.model import DeviceProfile, RunProfile
    from qtop.profiles.schema import field_named

    cls = RunProfile if section == "run" else DeviceProfile
    return field_named(cls, attribute).key.kind.accepts()


def add_live_options(parser: argparse.ArgumentParser) -> None:
    parser._negative_number_matcher = _NEGATIVE_VALUE
    session = parser.add_argument_group("session")
    session.add_argument(
        "--headless", action="store_true", help="print progress and a summary instead of the UI"
    )
    session.add_argument(
        "--record", metavar="FILE", help="recording path (default: a timestamped file)"
    )
    session.add_argument("--no-record", action="store_true", help="do not write a recording")
    session.add_argument(
        "--metrics-listen",
        metavar="HOST:PORT",
        help="serve live figures to Prometheus at http://HOST:PORT/metrics (docs/metrics.md); "
        "needs pip install 'qtop[metrics]'",
    )
    session.add_argument(
        "--metrics-all-interfaces",
        action="store_true",
        help="allow --metrics-listen on 0.0.0.0 or [::]: unauthenticated, on every interface",
    )
    plan = parser.add_argument_group(
        "run plan (overrides the profile; durations: 90, 0.5, 250ms, 30s, 10m, 1h30m)"
    )
    plan.add_argument(
        "--warmup", metavar="N", help=f"warm-up iterations ({_limits('run', 'warmup')})"
    )
    plan.add_argument(
        "--iterations",
        metavar="N",
        help=f"measured iterations ({_limits('run', 'iterations')})",
    )
    plan.add_argument(
        "--duration",
        metavar="DURATION",
        help=f"measure for this long instead ({_limits('run', 'duration_s')})",
    )
    plan.add_argument(
        "--interval",
        metavar="DURATION",
        help=f"sensor sampling interval ({_limits('device', 'sample_interval_s')})",
    )
    plan.add_argument(
        "--variant", action="append", metavar="NAME", help="run only these variants (repeatable)"
    )


def load_run_profile(args: argparse.Namespace) -> Profile:
    """The profile the command line names, with its options applied and checked.

    Says which file a name resolved to, and prints the warnings that still apply
    once the options have replaced what they replace.
    """
    from qtop.live.overrides import apply_overrides, print_warning, replaced_keys
    from qtop.profiles import Issue, load_profile, resolve

    resolved = resolve(args.profile)
    if resolved.by_name:
        sys.stderr.write(resolved.describe() + "\n")
    warnings: list[Issue] = []
    profile = load_profile(resolved.path, on_warning=warnings.append)
    replaced = replaced_keys(args)
    for issue in warnings:
        if issue.key not in replaced:
            print_warning(args.command, issue)
    return apply_overrides(profile, args)


def metrics_listen(args: argparse.Namespace) -> ListenAddress | None:
    """The checked --metrics-listen address (None without it), before anything starts."""
    if args.metrics_listen is None:
        if args.metrics_all_interfaces:
            from qtop.errors import UsageError

            raise UsageError(
                "--metrics-all-interfaces without --metrics-listen",
                "add --metrics-listen 0.0.0.0:9464, or drop --metrics-all-interfaces",
            )
        return None
    from qtop.metrics.address import parse_listen
    from qtop.metrics.server import require_client

    address = parse_listen(args.metrics_listen, args.metrics_all_interfaces)
    require_client()
    return address


def wants_headless(args: argparse.Namespace) -> bool:
    """--headless, or a standard output that is no terminal (a pipe, a CI log).

    The UI needs a terminal to draw on; writing its escape codes into a file
    and waiting for a key nobody can press would help no one.
    """
    if args.headless:
        return True
    if not sys.stdout.isatty():
        sys.stderr.write("standard output is not a terminal: running headless\n")
        return True
    return False

"""qtop run: a live session against the device of a profile."""

from __future__ import annotations

import argparse

from qtop.commands._live_options import add_live_options

HELP = "run a profile's benchmark on its device and watch it live"
DESCRIPTION = """\
Connect to the device of PROFILE over SSH, run its warm-up and measured
iterations (or a sustained run), and watch latency, power and thermals live.
PROFILE is a path or a name from 'qtop profiles'. The session is recorded to
a timestamped file under ./recordings unless --record or --no-record says otherwise.

examples:
  qtop run iq9075-qwen-netrun
  qtop run profiles/glasses-prismml.yaml --variant w8a16 --headless
"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("profile", metavar="PROFILE", help="profile path or name")
    target = parser.add_argument_group("target")
    target.add_argument("--host", help="override the profile's host (name or ssh alias)")
    target.add_argument("--local", action="store_true", help="run on this machine instead")
    target.add_argument(
        "--accept-new-host-key",
        action="store_true",
        help="trust an unknown host key and add it to known_hosts (a changed key is refused)",
    )
    add_live_options(parser)


def run(args: argparse.Namespace) -> int:
    from qtop.commands._stub import not_available

    raise not_available("run", "it needs the device link")

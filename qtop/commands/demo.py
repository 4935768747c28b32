"""qtop demo: the whole product against a simulated IQ-9075 board."""

from __future__ import annotations

import argparse

from qtop.commands._live_options import add_live_options

HELP = "start a simulated IQ-9075 board on loopback and watch a run on it"
DESCRIPTION = """\
Start the simulated board (an SSH server on 127.0.0.1 with a thermal model and
simulated qnn-net-run / genie-t2t-run) and open the live UI on a run against it:
everything qtop does, with no hardware.

examples:
  qtop demo
  qtop demo --headless --duration 30s
"""


def configure(parser: argparse.ArgumentParser) -> None:
    add_live_options(parser)


def run(args: argparse.Namespace) -> int:
    from qtop.commands._stub import not_available

    raise not_available("demo", "it needs the simulated board and the device link")

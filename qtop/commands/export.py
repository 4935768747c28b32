"""qtop export (placeholder until its implementation lands)."""

from __future__ import annotations

import argparse

HELP = "export (not available yet)"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("args", nargs="*")


def run(args: argparse.Namespace) -> int:
    from qtop.commands._stub import not_available

    raise not_available("export", "in progress")

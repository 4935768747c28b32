"""The ``qtop`` command line: one module per subcommand under ``qtop.commands``.

Each command module exposes ``HELP`` (one line), ``DESCRIPTION`` (the ``--help``
text), ``configure(parser)`` and ``run(args) -> int``. Command modules keep
their heavy imports inside ``run`` so that ``qtop --help`` stays fast and the
headless commands never import Textual.

Exit codes (contract): 0 ok, 1 failed run or gate, 2 bad usage or input.
"""

from __future__ import annotations

import argparse
import importlib
import shlex
import sys
import traceback
from collections.abc import Sequence
from types import ModuleType
from typing import NoReturn

from qtop import __version__
from qtop.errors import EXIT_FAILED, EXIT_OK, EXIT_USAGE, QtopError

COMMANDS: tuple[str, ...] = (
    "demo",
    "run",
    "probe",
    "replay",
    "report",
    "compare",
    "ops",
    "export",
    "sim",
    "profiles",
)


class _Parser(argparse.ArgumentParser):
    """argparse that exits with the contract's usage code and a fix hint."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        sys.stderr.write(f"{self.prog}: error: {message}\n  fix: see '{self.prog} --help'\n")
        raise SystemExit(EXIT_USAGE)


def _command_module(name: str) -> ModuleType:
    return importlib.import_module(f"qtop.commands.{name}")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="qtop",
        description=(
            "Watch on-device inference runs on Qualcomm edge boards over SSH: latency "
            "percentiles, power and energy, thermal zones, per-op profiler breakdowns. "
            "Every session is recorded and can be replayed, reported, compared and exported."
        ),
        epilog=(
            "Start with 'qtop demo': the whole product against a simulated board (an "
            "IQ-9075 EVK, or Snapdragon glasses with --board glasses). On a real board, "
            "start with 'qtop probe PROFILE|HOST'."
        ),
    )
    parser.add_argument("--version", action="version", version=f"qtop {__version__}")
    parser.add_argument(
        "--debug", action="store_true", help="show a traceback when something goes wrong"
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in COMMANDS:
        module = _command_module(name)
        sub = subparsers.add_parser(
            name,
            help=module.HELP,
            description=getattr(module, "DESCRIPTION", module.HELP),
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        module.configure(sub)
        sub.set_defaults(_run=module.run)
    return parser


def _debug_command(argv: Sequence[str]) -> str:
    """The same command line with --debug where qtop takes it: before the subcommand."""
    from qtop.textsafe import plain

    return plain(shlex.join(["qtop", "--debug", *(word for word in argv if word != "--debug")]))


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return EXIT_USAGE
    try:
        return int(args._run(args) or EXIT_OK)
    except QtopError as exc:
        if args.debug:
            traceback.print_exc()
        sys.stderr.write(f"qtop {args.command}: error: {exc}\n")
        return exc.exit_code
    except KeyboardInterrupt:
        sys.stderr.write(f"qtop {args.command}: interrupted\n")
        return EXIT_FAILED
    except BrokenPipeError:
        # `qtop report ... | head` closes our stdout early; that is not an error.
        return EXIT_OK
    except Exception as exc:
        if args.debug:
            traceback.print_exc()
            fix = "this is a bug in qtop; please report it with the traceback above"
        else:
            command = _debug_command(argv)
            fix = f"this is a bug in qtop; report it with the traceback this shows: {command}"
        sys.stderr.write(
            f"qtop {args.command}: internal error: {type(exc).__name__}: {exc}\n  fix: {fix}\n"
        )
        return EXIT_FAILED


if __name__ == "__main__":
    raise SystemExit(main())

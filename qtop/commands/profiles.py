"""qtop profiles: list the profiles qtop can find, or check profile files."""

from __future__ import annotations

import argparse
import sys

HELP = "list profiles, or check a profile file: 'qtop profiles check FILE'"
DESCRIPTION = """\
List the profiles qtop can find (./profiles, ~/.config/qtop/profiles, and the
ones shipped with qtop), or validate profile files.

examples:
  qtop profiles
  qtop profiles check profiles/glasses-prismml.yaml

The profile format is described in docs/profiles.md.
"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "action", nargs="?", choices=("list", "check"), default="list", help="default: list"
    )
    parser.add_argument("files", nargs="*", metavar="FILE", help="profile files to check")


def run(args: argparse.Namespace) -> int:
    from qtop.errors import UsageError
    from qtop.profiles import iter_profile_files, load_profile, resolve_profile
    from qtop.report.table import text_table

    if args.action == "check":
        if not args.files:
            raise UsageError("nothing to check", "give one or more profile files")
        for name in args.files:
            profile = load_profile(resolve_profile(name))
            run = profile.run
            amount = (
                f"{run.iterations} iterations"
                if run.iterations is not None
                else f"{run.duration_s:g} s"
            )
            variants = ", ".join(v.name for v in run.variants) or "one configuration"
            target = profile.device.host or "(no host: use --host or --local)"
            sys.stdout.write(
                f"{profile.source}: ok: {profile.name} on {target}, warm-up {run.warmup}, "
                f"{amount}, {variants}\n"
            )
        return 0
    if args.files:
        raise UsageError("'qtop profiles' takes no files", "use 'qtop profiles check FILE'")
    rows = []
    for path in iter_profile_files():
        try:
            profile = load_profile(path)
            rows.append([path.stem, profile.device.host or "—", profile.description, str(path)])
        except UsageError as exc:
            rows.append([path.stem, "—", f"INVALID: {exc.problem}", str(path)])
    if not rows:
        sys.stdout.write("no profiles found\n")
        return 0
    sys.stdout.write(text_table(("name", "host", "description", "file"), rows) + "\n")
    return 0

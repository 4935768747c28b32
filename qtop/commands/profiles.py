"""qtop profiles: list the profiles qtop can find, check profile files, print the schema."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from qtop.profiles import Checked

HELP = "list profiles; 'qtop profiles check FILE' validates one; 'schema' prints the JSON Schema"
DESCRIPTION = """\
List the profiles qtop can find (./profiles, ~/.config/qtop/profiles, and the
ones shipped with qtop), check profile files, or print the profile JSON Schema.

check prints every error and warning of each file, each with file:line:key and
its fix; it exits 2 when a file has an error, 0 otherwise (warnings included).
--json prints the same as one JSON document, for editors and CI.

schema prints the JSON Schema YAML language servers use for completion and
inline errors: save it next to your profiles and start each profile with
  # yaml-language-server: $schema=profile.schema.json

examples:
  qtop profiles
  qtop profiles check profiles/glasses-prismml.yaml
  qtop profiles check --json my-board.yaml
  qtop profiles schema > profiles/profile.schema.json

The profile format is described in docs/profiles.md.
"""


def configure(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    actions.add_parser("list", help="list the profiles qtop can find (the default)")
    check = actions.add_parser("check", help="check profile files: every error and warning")
    check.add_argument("files", nargs="+", metavar="FILE", help="profile files or names")
    check.add_argument("--json", action="store_true", help="print the result as JSON")
    actions.add_parser("schema", help="print the profile JSON Schema (for YAML editors)")


def _summary(checked: Checked) -> str:
    profile = checked.profile
    assert profile is not None
    run = profile.run
    amount = f"{run.iterations} iterations" if run.iterations is not None else None
    if amount is None and run.duration_s is not None:
        from qtop.profiles import format_duration

        amount = format_duration(run.duration_s)
    variants = ", ".join(v.name for v in run.variants) or "one configuration"
    target = profile.device.host or "(no host: use --host or --local)"
    return f"{profile.name} on {target}, warm-up {run.warmup}, {amount}, {variants}"


def _check(names: list[str], as_json: bool) -> int:
    from qtop.errors import UsageError
    from qtop.profiles import check_profile, resolve

    checks = []
    for name in names:
        try:
            path = str(resolve(name).path)
        except UsageError:
            path = name  # checked as a path: the check says it does not exist
        checks.append(check_profile(path))
    failed = any(checked.errors for checked in checks)
    if as_json:
        document = {
            "ok": not failed,
            "files": [
                {
                    "file": checked.source,
                    "ok": not checked.errors,
                    "profile": checked.profile.name if checked.profile else None,
                    "errors": len(checked.errors),
                    "warnings": len(checked.warnings),
                    "issues": [issue.to_json() for issue in checked.issues],
                }
                for checked in checks
            ],
        }
        sys.stdout.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
        return 2 if failed else 0
    for checked in checks:
        for issue in checked.issues:
            sys.stderr.write(f"qtop profiles: {issue.severity}: {issue.with_fix()}\n")
        if checked.profile is not None:
            sys.stdout.write(f"{checked.source}: ok: {_summary(checked)}\n")
        counts = [
            f"{len(found)} {word}{'s' if len(found) != 1 else ''}"
            for found, word in ((checked.errors, "error"), (checked.warnings, "warning"))
            if found
        ]
        if counts:
            sys.stdout.write(f"{checked.source}: {', '.join(counts)}\n")
    return 2 if failed else 0


def run(args: argparse.Namespace) -> int:
    from qtop.errors import UsageError
    from qtop.profiles import iter_profile_files, load_profile
    from qtop.table import text_table

    if args.action == "check":
        return _check(args.files, args.json)
    if args.action == "schema":
        from qtop.profiles.generate import json_schema_text

        sys.stdout.write(json_schema_text())
        return 0
    rows = []
    for path in iter_profile_files():
        try:
            profile = load_profile(path)
            rows.append([path.stem, profile.device.host or "—", profile.description, str(path)])
        except UsageError as exc:
            rows.append([path.stem, "—", f"INVALID: {exc.problem.splitlines()[0]}", str(path)])
    if not rows:
        sys.stdout.write("no profiles found\n")
        return 0
    sys.stdout.write(text_table(("name", "host", "description", "file"), rows) + "\n")
    return 0

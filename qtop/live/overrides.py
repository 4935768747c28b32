"""Command-line options of ``run``/``demo`` applied to a profile, by the schema's rules.

Each plan option sets one profile key and is checked by that key's kind (same
limits, same message and fix as in a profile), then the plan as a whole is
checked again: ``--iterations 0``, ``--warmup`` that leaves a process nothing
to measure and the like are refused here, before anything starts on the device.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from qtop.errors import UsageError
from qtop.profiles import Issue, PlanOption, Profile, apply_options

PLAN_OPTIONS: dict[str, PlanOption] = {
    "warmup": PlanOption("--warmup", "run", "warmup"),
    "iterations": PlanOption("--iterations", "run", "iterations", clears=("duration_s",)),
    "duration": PlanOption("--duration", "run", "duration_s", clears=("iterations",)),
    "interval": PlanOption("--interval", "device", "sample_interval_s"),
}
# --adb [SERIAL]: the device over adb; the SSH keys of the profile no longer apply.
ADB_TRANSPORT = PlanOption(
    "--adb",
    "device",
    "transport",
    clears=("host", "port", "user", "identity_file", "known_hosts", "jump_host"),
)
ADB_SERIAL = PlanOption("--adb", "device", "serial")


def _selected_variants(profile: Profile, wanted: list[str]) -> Profile:
    known = {variant.name: variant for variant in profile.run.variants}
    unknown = [name for name in wanted if name not in known]
    if unknown:
        raise UsageError(
            f"--variant {unknown[0]!r}: the profile has no such variant",
            f"use one of: {', '.join(known) or '(the profile has no variants)'}",
        )
    chosen = tuple(known[name] for name in dict.fromkeys(wanted))
    return profile.replace_run(variants=chosen)


def replaced_keys(args: argparse.Namespace) -> set[str]:
    """The profile keys the options given make moot (a warning about them would mislead)."""
    replaced = {
        path
        for dest, option in PLAN_OPTIONS.items()
        if getattr(args, dest, None) is not None
        for path in option.replaces
    }
    if getattr(args, "adb", None) is not None:
        replaced.update(ADB_TRANSPORT.replaces)
        if args.adb:
            replaced.update(ADB_SERIAL.replaces)
    return replaced


def apply_overrides(
    profile: Profile,
    args: argparse.Namespace,
    on_warning: Callable[[Issue], None] | None = None,
) -> Profile:
    """The profile as used: --warmup, --iterations, --duration, --interval, --variant, --adb."""
    if getattr(args, "iterations", None) is not None and getattr(args, "duration", None):
        raise UsageError(
            "--iterations and --duration are both given; the run would stop at whichever "
            "comes first, which is rarely what was meant",
            "give one of them",
        )
    wanted = getattr(args, "variant", None)
    if wanted:
        profile = _selected_variants(profile, wanted)
    given = [
        (option, str(getattr(args, dest)))
        for dest, option in PLAN_OPTIONS.items()
        if getattr(args, dest, None) is not None
    ]
    adb = getattr(args, "adb", None)
    if adb is not None:
        given.append((ADB_TRANSPORT, "adb"))
        if adb:
            given.append((ADB_SERIAL, adb))
    if on_warning is None:
        command = getattr(args, "command", None) or "run"

        def on_warning(issue: Issue) -> None:
            print_warning(command, issue)

    return apply_options(profile, given, on_warning)


def print_warning(command: str, issue: Issue) -> None:
    """A warning about a profile or an option, the way the command line prints errors."""
    sys.stderr.write(f"qtop {command}: warning: {issue.with_fix()}\n")

"""Command-line options of ``run``/``demo`` applied to a profile."""

from __future__ import annotations

import argparse

from qtop.errors import UsageError
from qtop.profiles import Profile

MIN_INTERVAL_S = 0.01


def apply_overrides(profile: Profile, args: argparse.Namespace) -> Profile:
    """The profile as used: --warmup, --iterations, --duration, --interval, --variant."""
    run_changes: dict[str, object] = {}
    if getattr(args, "warmup", None) is not None:
        run_changes["warmup"] = args.warmup
    if getattr(args, "iterations", None) is not None:
        run_changes.update(iterations=args.iterations, duration_s=None)
    if getattr(args, "duration", None) is not None:
        run_changes.update(duration_s=args.duration, iterations=None)
    wanted = getattr(args, "variant", None)
    if wanted:
        known = {variant.name: variant for variant in profile.run.variants}
        unknown = [name for name in wanted if name not in known]
        if unknown:
            raise UsageError(
                f"--variant {unknown[0]}: the profile has no such variant",
                f"use one of: {', '.join(known) or '(the profile has no variants)'}",
            )
        run_changes["variants"] = tuple(known[name] for name in wanted)
    if run_changes:
        profile = profile.replace_run(**run_changes)
    interval = getattr(args, "interval", None)
    if interval is not None:
        if interval < MIN_INTERVAL_S:
            raise UsageError(
                f"--interval {interval:g}: faster than any sysfs sensor refreshes",
                "use 0.05 s or more; 0.1 s (10 Hz) is the usual choice",
            )
        profile = profile.replace_device(sample_interval_s=interval)
    return profile

"""Profiles: a device (how to reach it, what to sample) and a run (what to execute).

A profile is a YAML file loaded with the safe loader and validated against one
schema (``model.py``: every key declared once, with its kind, limits, default
and documentation). Every problem is reported at once, each naming the file,
the line and the key, with its fix. ``docs/profiles.md`` is the reference.

Modules: ``model`` (the schema as dataclasses), ``schema``/``values``/
``sections`` (the kinds of value and how a mapping is built), ``rules``
(checks across keys), ``loader`` (YAML with line numbers, bounded),
``validate`` (files, text and command-line options), ``discovery`` (where
profiles live), ``durations``, ``generate`` (JSON Schema and docs tables).
"""

from qtop.profiles.discovery import (
    Resolved,
    builtin_profile,
    builtin_profile_dir,
    iter_profile_files,
    profile_dirs,
    resolve,
    resolve_profile,
    user_profile_dir,
)
from qtop.profiles.durations import DurationError, format_duration, parse_duration
from qtop.profiles.issues import ERROR, WARNING, Issue, ProfileError
from qtop.profiles.model import (
    ALL,
    AUTO,
    LATENCY_SOURCES,
    NONE,
    PROFILER_KINDS,
    Cooldown,
    DeviceProfile,
    MeterChannel,
    Profile,
    ProfilerOutput,
    PushItem,
    RunProfile,
    Variant,
)
from qtop.profiles.validate import (
    Checked,
    PlanOption,
    apply_options,
    check_profile,
    check_profile_text,
    load_profile,
    load_profile_text,
)

__all__ = [
    "ALL",
    "AUTO",
    "ERROR",
    "LATENCY_SOURCES",
    "NONE",
    "PROFILER_KINDS",
    "WARNING",
    "Checked",
    "Cooldown",
    "DeviceProfile",
    "DurationError",
    "Issue",
    "MeterChannel",
    "PlanOption",
    "Profile",
    "ProfileError",
    "ProfilerOutput",
    "PushItem",
    "Resolved",
    "RunProfile",
    "Variant",
    "apply_options",
    "builtin_profile",
    "builtin_profile_dir",
    "check_profile",
    "check_profile_text",
    "format_duration",
    "iter_profile_files",
    "load_profile",
    "load_profile_text",
    "parse_duration",
    "profile_dirs",
    "resolve",
    "resolve_profile",
    "user_profile_dir",
]

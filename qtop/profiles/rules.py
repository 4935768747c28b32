"""Checks across keys: a plan that cannot measure anything, or keys that contradict each other.

Each rule names the keys it reads (it is skipped while one of them has an
error of its own, so a bad value is not reported twice) and, where JSON Schema
can say the same, the fragment that says it. The rules run on the profile as
used: after loading, and again after the command-line options change it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from qtop.profiles.durations import format_duration
from qtop.profiles.issues import ERROR, WARNING
from qtop.profiles.model import METER_UNITS, MeterChannel, Profile, ProfilerOutput, RunProfile

_NUM_INFERENCES = re.compile(r"--num_inferences(?:\s+|=)['\"]?(\d{1,12})\b")


@dataclass(frozen=True, slots=True)
class Finding:
    """A problem across keys; ``keys[0]`` is where it is reported."""

    keys: tuple[str, ...]
    message: str
    fix: str | None
    severity: str = ERROR


@dataclass(frozen=True, slots=True)
class Rule:
    reads: tuple[str, ...]
    check: Callable[[Profile], Iterator[Finding]]
    section: type | None = None
    json_schema: dict[str, Any] | None = None


def _run_length(profile: Profile) -> Iterator[Finding]:
    run = profile.run
    if run.iterations is None and run.duration_s is None:
        yield Finding(
            ("run",),
            "say how long to measure",
            "add 'iterations: 200' (a count) or 'duration: 10m' (a sustained run)",
        )
    elif run.iterations is not None and run.duration_s is not None:
        yield Finding(
            ("run.duration", "run.iterations"),
            "'iterations' and 'duration' are both set; the run would stop at whichever comes "
            "first, which is rarely what was meant",
            "keep one of them",
        )


def _genie_needs_its_profile(profile: Profile) -> Iterator[Finding]:
    run = profile.run
    if run.latency_source == "genie" and (
        run.profiler is None or run.profiler.kind != "genie_profile"
    ):
        yield Finding(
            ("run.latency_source", "run.profiler"),
            "'genie' reads the Genie profile, but no genie_profile is set",
            "add 'profiler: {kind: genie_profile, path: /tmp/genie_profile.json}' and pass "
            "'--profile' with that path in the command",
        )


def _execute_stats_needs_a_log(profile: Profile) -> Iterator[Finding]:
    run = profile.run
    if run.latency_source == "execute_stats" and (
        run.profiler is None or run.profiler.kind not in ("qnn_log", "optrace")
    ):
        yield Finding(
            ("run.latency_source", "run.profiler"),
            "'execute_stats' reads qnn-net-run's profiling log, but no qnn_log (or optrace) "
            "profiler output is set",
            "add 'profiler: {kind: qnn_log, path: <the --output_dir of the command>}'",
        )


def _optrace_needs_a_schematic(profile: Profile) -> Iterator[Finding]:
    profiler = profile.run.profiler
    if profiler is not None and profiler.kind == "optrace" and not profiler.schematic:
        yield Finding(
            ("run.profiler",),
            "optrace needs the schematic written when the context was compiled",
            "add 'schematic: /path/to/<graph>_schematic.bin' (from "
            "qnn-context-binary-generator --profiling_option optrace)",
        )


def _meter_units(profile: Profile) -> Iterator[Finding]:
    for index, meter in enumerate(profile.device.power_meter):
        units = METER_UNITS[meter.quantity]
        if meter.unit not in units:
            yield Finding(
                (f"device.power_meter[{index}].unit",),
                f"'{meter.unit}' is not a unit of {meter.quantity}",
                f"use one of: {', '.join(units)}",
            )


def _warmup_leaves_something(profile: Profile) -> Iterator[Finding]:
    run = profile.run
    if run.latency_source != "execute_stats":
        return
    commands = [variant.command or run.command for variant in run.variants] or [run.command]
    for command in commands:
        found = _NUM_INFERENCES.search(command)
        if found and int(found.group(1)) <= run.warmup:
            count = int(found.group(1))
            yield Finding(
                ("run.warmup",),
                f"{run.warmup} warm-up inferences per process leave nothing to measure: the "
                f"command runs {count} per process (--num_inferences {count})",
                f"lower warmup below {count}, or raise --num_inferences in the command",
            )
            return


def _sampled_at_least_once(profile: Profile) -> Iterator[Finding]:
    duration, interval = profile.run.duration_s, profile.device.sample_interval_s
    if duration is not None and duration < interval:
        yield Finding(
            ("run.duration", "device.sample_interval"),
            f"{format_duration(duration)} is shorter than one sampling interval "
            f"({format_duration(interval)}): no sensor would be sampled",
            "measure for longer, or sample more often",
        )


def _valid_by_its_own_minimum(profile: Profile) -> Iterator[Finding]:
    run = profile.run
    if run.iterations is not None and run.iterations < run.min_iterations:
        yield Finding(
            ("run.iterations", "run.min_iterations"),
            f"{run.iterations} measured iterations are fewer than min_iterations "
            f"({run.min_iterations}): reports will mark the result not valid",
            f"measure at least {run.min_iterations}, or lower min_iterations",
            WARNING,
        )
    if run.duration_s is not None and run.duration_s < run.min_duration_s:
        yield Finding(
            ("run.duration", "run.min_duration"),
            f"{format_duration(run.duration_s)} is shorter than min_duration "
            f"({format_duration(run.min_duration_s)}): reports will mark the result not valid",
            f"measure for at least {format_duration(run.min_duration_s)}, or lower min_duration",
            WARNING,
        )


def _repetitions_start_alike(profile: Profile) -> Iterator[Finding]:
    run = profile.run
    if run.repeat > 1 and run.cooldown is None:
        yield Finding(
            ("run.repeat", "run.cooldown"),
            f"{run.repeat} repetitions without a cooldown: each starts on the NPU the one "
            "before left hot, so their spread mixes drift into the run-to-run noise",
            "add 'cooldown: {below: 45, zones: [nsp*]}' so every repetition starts alike",
            WARNING,
        )


def _pacing_needs_a_rate(profile: Profile) -> Iterator[Finding]:
    run = profile.run
    if run.rate_hz is not None:
        return
    if run.deadline_s is not None:
        yield Finding(
            ("run.deadline", "run.rate"),
            "a deadline counts from each iteration's arrival, and without 'rate' there are none",
            "add 'rate' (iterations per second, e.g. 'rate: 30'), or remove 'deadline'",
        )
    if run.schedule != "fixed":
        yield Finding(
            ("run.schedule", "run.rate"),
            f"'schedule: {run.schedule}' needs a mean rate",
            "add 'rate' (iterations per second, e.g. 'rate: 30')",
        )


def _deadline_is_per_command(profile: Profile) -> Iterator[Finding]:
    run = profile.run
    if run.deadline_s is not None and run.latency_source != "wall":
        yield Finding(
            ("run.deadline", "run.latency_source"),
            f"deadlines are checked for each run of the command (latency_source 'wall'); with "
            f"'{run.latency_source}' one run holds many inferences, and 'rate' paces the runs",
            "remove 'deadline', or measure with 'latency_source: wall'",
        )


_SSH_ONLY = ("host", "port", "user", "identity_file", "known_hosts", "jump_host")


def _ssh_keys_over_adb(profile: Profile) -> Iterator[Finding]:
    """SSH keys in a profile whose device is reached over adb are never used.

    (``serial``/``adb_server`` in an SSH profile are: ``--adb`` takes them.)
    """
    device = profile.device
    if device.transport != "adb":
        return
    for name in _SSH_ONLY:
        if getattr(device, name) is not None:
            yield Finding(
                (f"device.{name}", "device.transport"),
                "is an SSH setting, and this profile reaches the device over adb: it is ignored",
                "remove it, or set 'transport: ssh'",
                WARNING,
            )


def _when(name: str, value: str, then: dict[str, Any]) -> dict[str, Any]:
    return {"if": {"properties": {name: {"const": value}}, "required": [name]}, "then": then}


RULES: tuple[Rule, ...] = (
    Rule(
        ("run.iterations", "run.duration"),
        _run_length,
        RunProfile,
        {"oneOf": [{"required": ["iterations"]}, {"required": ["duration"]}]},
    ),
    Rule(
        ("run.latency_source", "run.profiler"),
        _genie_needs_its_profile,
        RunProfile,
        _when(
            "latency_source",
            "genie",
            {
                "required": ["profiler"],
                "properties": {"profiler": {"properties": {"kind": {"const": "genie_profile"}}}},
            },
        ),
    ),
    Rule(
        ("run.latency_source", "run.profiler"),
        _execute_stats_needs_a_log,
        RunProfile,
        _when(
            "latency_source",
            "execute_stats",
            {
                "required": ["profiler"],
                "properties": {
                    "profiler": {"properties": {"kind": {"enum": ["qnn_log", "optrace"]}}}
                },
            },
        ),
    ),
    Rule(
        ("run.profiler",),
        _optrace_needs_a_schematic,
        ProfilerOutput,
        _when("kind", "optrace", {"required": ["schematic"]}),
    ),
    Rule(
        ("device.power_meter",),
        _meter_units,
        MeterChannel,
        {
            "allOf": [
                _when("quantity", quantity, {"properties": {"unit": {"enum": list(units)}}})
                for quantity, units in METER_UNITS.items()
            ]
        },
    ),
    Rule(
        ("run.warmup", "run.command", "run.variants", "run.latency_source"),
        _warmup_leaves_something,
    ),
    Rule(("run.duration", "device.sample_interval"), _sampled_at_least_once),
    Rule(("device.transport", *(f"device.{k}" for k in _SSH_ONLY)), _ssh_keys_over_adb),
    Rule(
        ("run.iterations", "run.duration", "run.min_iterations", "run.min_duration"),
        _valid_by_its_own_minimum,
    ),
    Rule(("run.repeat", "run.cooldown"), _repetitions_start_alike),
    Rule(
        ("run.rate", "run.deadline", "run.schedule"),
        _pacing_needs_a_rate,
        RunProfile,
        {
            "dependentRequired": {"deadline": ["rate"]},
            **_when("schedule", "poisson", {"required": ["rate"]}),
        },
    ),
    Rule(("run.deadline", "run.latency_source"), _deadline_is_per_command),
)


def findings(profile: Profile, is_bad: Callable[[str], bool]) -> Iterator[Finding]:
    """What the rules find in ``profile``, skipping rules that read a key with an error."""
    for rule in RULES:
        if not any(is_bad(path) for path in rule.reads):
            yield from rule.check(profile)


def json_schema_for(cls: type) -> list[dict[str, Any]]:
    """The JSON Schema fragments of the rules JSON Schema can express, for a section."""
    return [rule.json_schema for rule in RULES if rule.section is cls and rule.json_schema]

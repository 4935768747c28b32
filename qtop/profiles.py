"""Profiles: a device (how to reach it, what to sample) and a run (what to execute).

A profile is a YAML file loaded with the safe loader and validated into frozen
dataclasses. Every error names the file, the line and the key, and suggests
the likely key when one is misspelt. ``docs/profiles.md`` is the reference.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

from qtop.errors import UsageError

ALL = "all"
NONE = "none"
AUTO = "auto"

LATENCY_SOURCES = ("wall", "execute_stats", "genie")
PROFILER_KINDS = ("qnn_log", "genie_profile", "optrace", "file")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\Z")
_VARIANT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]*\Z")
_DURATION = re.compile(r"(?P<value>\d+(?:\.\d+)?)\s*(?P<unit>ms|s|m|min|h)")


class ProfileError(UsageError):
    """A profile that cannot be used; the message names file, line and key."""


@dataclass(frozen=True, slots=True)
class MeterChannel:
    """An external power or current meter exposed as a file (hwmon INA2xx, ...)."""

    path: str
    quantity: str  # power, current or voltage
    unit: str  # the file's raw unit: uW, mW, W, uA, mA, A, uV, mV, V
    label: str = ""


@dataclass(frozen=True, slots=True)
class DeviceProfile:
    """How to reach the device and what to sample on it."""

    host: str | None = None
    port: int | None = None
    user: str | None = None
    identity_file: str | None = None
    known_hosts: str | None = None
    jump_host: str | None = None
    connect_timeout_s: float = 10.0
    keepalive_interval_s: float = 2.0
    keepalive_count_max: int = 3
    env: Mapping[str, str] = field(default_factory=dict)
    workdir: str | None = None
    spool_dir: str = "auto"
    sysfs_root: str = "/"
    thermal_zones: str | tuple[str, ...] = ALL
    cooling_devices: str | tuple[str, ...] = ALL
    power_supply: str = AUTO
    power_meter: tuple[MeterChannel, ...] = ()
    cpufreq: str | tuple[str, ...] = ALL
    sample_interval_s: float = 0.1


@dataclass(frozen=True, slots=True)
class Cooldown:
    """Wait until the named zones are cool enough before measuring."""

    below_c: float
    zones: tuple[str, ...] = ("nsp*",)
    timeout_s: float = 600.0


@dataclass(frozen=True, slots=True)
class ProfilerOutput:
    """Which profiler output the run leaves on the device, and how to read it."""

    kind: str
    path: str
    reader: str | None = None
    schematic: str | None = None
    viewer: str = "qnn-profile-viewer"


@dataclass(frozen=True, slots=True)
class Variant:
    """One configuration of a sweep: environment for the command, or a new command."""

    name: str
    env: Mapping[str, str] = field(default_factory=dict)
    command: str | None = None


@dataclass(frozen=True, slots=True)
class RunProfile:
    """What to execute on the device and how to measure it."""

    command: str
    warmup: int = 10
    iterations: int | None = None
    duration_s: float | None = None
    min_iterations: int = 30
    min_duration_s: float = 0.0
    rate_hz: float | None = None
    timeout_s: float | None = None
    cooldown: Cooldown | None = None
    idle_baseline_s: float = 0.0
    latency_source: str = "wall"
    profiler: ProfilerOutput | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    variants: tuple[Variant, ...] = ()
    max_consecutive_failures: int = 5

    def variant_names(self) -> tuple[str, ...]:
        return tuple(v.name for v in self.variants) or ("",)


@dataclass(frozen=True, slots=True)
class Profile:
    """A device plus a run, as loaded from one YAML file."""

    name: str
    device: DeviceProfile
    run: RunProfile
    description: str = ""
    source: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The profile as used, for a recording's header."""
        return _plain(asdict(self))

    def replace_run(self, **changes: Any) -> Profile:
        from dataclasses import replace

        return replace(self, run=replace(self.run, **changes))

    def replace_device(self, **changes: Any) -> Profile:
        from dataclasses import replace

        return replace(self, device=replace(self.device, **changes))


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


# --- YAML with line numbers -------------------------------------------------


class _LineDict(dict):
    """A mapping that remembers the line of itself and of each of its keys."""

    line: int = 0
    key_lines: dict[str, int]


class _LineLoader(yaml.SafeLoader):
    pass


def _construct_mapping(loader: _LineLoader, node: yaml.MappingNode) -> _LineDict:
    loader.flatten_mapping(node)
    mapping = _LineDict()
    mapping.line = node.start_mark.line + 1
    mapping.key_lines = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        if not isinstance(key, str | int | float | bool) and key is not None:
            raise yaml.constructor.ConstructorError(
                None, None, "mapping keys must be plain scalars", key_node.start_mark
            )
        key = str(key)
        mapping[key] = loader.construct_object(value_node, deep=True)
        mapping.key_lines[key] = key_node.start_mark.line + 1
    return mapping


_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


class _Reader:
    """Walks one mapping of the YAML, checking keys and converting values."""

    def __init__(self, source: str, data: Any, where: str, line: int) -> None:
        self.source = source
        self.where = where
        self.line = getattr(data, "line", line)
        if not isinstance(data, dict):
            raise self.error(f"{where or 'the profile'} must be a mapping of keys to values", line)
        self.data: dict[str, Any] = data
        self.key_lines: dict[str, int] = getattr(data, "key_lines", {})
        self.used: set[str] = set()

    def key_path(self, key: str) -> str:
        return f"{self.where}.{key}" if self.where else key

    def line_of(self, key: str) -> int:
        return self.key_lines.get(key, self.line)

    def error(self, message: str, line: int | None = None, fix: str | None = None) -> ProfileError:
        at = f"{self.source}:{line or self.line}"
        return ProfileError(f"{at}: {message}", fix)

    def key_error(self, key: str, message: str, fix: str | None = None) -> ProfileError:
        return self.error(f"{self.key_path(key)}: {message}", self.line_of(key), fix)

    def get(
        self,
        key: str,
        convert: Callable[[Any, str], Any],
        default: Any = None,
        required: bool = False,
    ) -> Any:
        self.used.add(key)
        if key not in self.data or self.data[key] is None:
            if required:
                misspelt = difflib.get_close_matches(key, list(self.data), n=1, cutoff=0.6)
                if misspelt and misspelt[0] != key:
                    raise self.key_error(misspelt[0], "unknown key", f"did you mean '{key}'?")
                raise self.error(
                    f"{self.where or 'the profile'}: missing required key '{key}'",
                    fix=f"add '{key}:' to {self.where or 'the top level'}",
                )
            return default
        try:
            return convert(self.data[key], key)
        except _BadValue as exc:
            raise self.key_error(key, str(exc), exc.fix) from None

    def child(self, key: str) -> _Reader | None:
        self.used.add(key)
        if key not in self.data or self.data[key] is None:
            return None
        return _Reader(self.source, self.data[key], self.key_path(key), self.line_of(key))

    def finish(self, known: tuple[str, ...]) -> None:
        for key in self.data:
            if key in self.used or key in known:
                continue
            close = difflib.get_close_matches(key, [*known, *self.used], n=1, cutoff=0.6)
            fix = (
                f"did you mean '{close[0]}'?"
                if close
                else ("known keys here: " + ", ".join(sorted({*known, *self.used})))
            )
            raise self.key_error(key, "unknown key", fix)


class _BadValue(ValueError):
    def __init__(self, message: str, fix: str | None = None) -> None:
        super().__init__(message)
        self.fix = fix


# --- value converters -------------------------------------------------------


def _string(value: Any, key: str) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise _BadValue(f"expected text, got {_describe(value)}")
    return str(value)


def _positive_int(value: Any, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise _BadValue(f"expected a whole number >= 0, got {_describe(value)}")
    return value


def _port(value: Any, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value < 65536:
        raise _BadValue(f"expected a TCP port 1-65535, got {_describe(value)}")
    return value


def _positive_float(value: Any, key: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise _BadValue(f"expected a number > 0, got {_describe(value)}")
    return float(value)


def _temperature(value: Any, key: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _BadValue(f"expected degrees Celsius as a number, got {_describe(value)}")
    if not -40 <= value <= 200:
        raise _BadValue(
            f"{value} is not a plausible temperature in degrees Celsius",
            "give degrees Celsius (e.g. 45), not millidegrees",
        )
    return float(value)


def parse_duration(value: Any) -> float:
    """Seconds from a number or text such as ``90``, ``250ms``, ``10m`` or ``1h30m``."""
    if isinstance(value, bool):
        raise _BadValue(f"expected a duration, got {_describe(value)}")
    if isinstance(value, int | float):
        if value < 0:
            raise _BadValue(f"a duration cannot be negative, got {value}")
        return float(value)
    if not isinstance(value, str):
        raise _BadValue(f"expected a duration, got {_describe(value)}")
    text = value.strip().lower()
    total, position = 0.0, 0
    for match in _DURATION.finditer(text):
        if text[position : match.start()].strip():
            break
        scale = {"ms": 0.001, "s": 1, "m": 60, "min": 60, "h": 3600}[match["unit"]]
        total += float(match["value"]) * scale
        position = match.end()
    if position == 0 or text[position:].strip():
        raise _BadValue(
            f"{value!r} is not a duration", "write seconds (90) or text like 250ms, 30s, 10m, 1h30m"
        )
    return total


def _duration(value: Any, key: str) -> float:
    return parse_duration(value)


def _env(value: Any, key: str) -> dict[str, str]:
    if not isinstance(value, dict):
        raise _BadValue(f"expected a mapping of NAME: value, got {_describe(value)}")
    env: dict[str, str] = {}
    for name, item in value.items():
        if not _ENV_NAME.match(name):
            raise _BadValue(
                f"{name!r} is not a valid environment variable name",
                "use letters, digits and _ (not starting with a digit)",
            )
        if isinstance(item, bool) or not isinstance(item, str | int | float):
            raise _BadValue(f"{name}: expected text, got {_describe(item)}")
        env[name] = str(item)
    return env


def _selection(value: Any, key: str) -> str | tuple[str, ...]:
    if isinstance(value, str) and value.strip().lower() in (ALL, NONE):
        return value.strip().lower()
    if isinstance(value, list) and all(isinstance(v, str) and v for v in value):
        return tuple(value)
    raise _BadValue(
        f"expected 'all', 'none' or a list of names, got {_describe(value)}",
        "write e.g. [nsp-0-0-0-thermal, 'cpu-*'] (shell-style patterns match the sysfs 'type')",
    )


def _one_of(choices: tuple[str, ...]) -> Callable[[Any, str], str]:
    def convert(value: Any, key: str) -> str:
        if value not in choices:
            close = difflib.get_close_matches(str(value), choices, n=1)
            fix = f"did you mean '{close[0]}'?" if close else f"use one of: {', '.join(choices)}"
            raise _BadValue(f"{value!r} is not one of {', '.join(choices)}", fix)
        return value

    return convert


def _describe(value: Any) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return repr(value)


# --- sections ---------------------------------------------------------------

_DEVICE_KEYS = (
    "host", "port", "user", "identity_file", "known_hosts", "jump_host", "connect_timeout",
    "keepalive_interval", "keepalive_count_max", "env", "workdir", "spool_dir", "sysfs_root",
    "thermal_zones", "cooling_devices", "power_supply", "power_meter", "cpufreq",
    "sample_interval",
)  # fmt: skip
_RUN_KEYS = (
    "command", "warmup", "iterations", "duration", "min_iterations", "min_duration", "rate",
    "timeout", "cooldown", "idle_baseline", "latency_source", "profiler", "env", "variants",
    "max_consecutive_failures",
)  # fmt: skip
_METER_QUANTITIES = {"power": ("uW", "mW", "W"), "current": ("uA", "mA", "A"),
                     "voltage": ("uV", "mV", "V")}  # fmt: skip


def _device(reader: _Reader) -> DeviceProfile:
    meters: list[MeterChannel] = []
    reader.used.add("power_meter")
    raw_meters = reader.data.get("power_meter") or []
    if not isinstance(raw_meters, list):
        raise reader.key_error("power_meter", "expected a list of {path, quantity, unit}")
    for index, item in enumerate(raw_meters):
        meter = _Reader(reader.source, item, f"device.power_meter[{index}]", reader.line)
        quantity = meter.get("quantity", _one_of(tuple(_METER_QUANTITIES)), required=True)
        unit = meter.get("unit", _one_of(_METER_QUANTITIES[quantity]), required=True)
        meters.append(
            MeterChannel(
                path=meter.get("path", _string, required=True),
                quantity=quantity,
                unit=unit,
                label=meter.get("label", _string, ""),
            )
        )
        meter.finish(("path", "quantity", "unit", "label"))
    interval = reader.get("sample_interval", _duration, 0.1)
    if interval < 0.01:
        raise reader.key_error(
            "sample_interval",
            f"{interval}s is faster than any sysfs sensor refreshes",
            "use 0.05 s or more; 0.1 s (10 Hz) is the usual choice",
        )
    device = DeviceProfile(
        host=reader.get("host", _string),
        port=reader.get("port", _port),
        user=reader.get("user", _string),
        identity_file=reader.get("identity_file", _string),
        known_hosts=reader.get("known_hosts", _string),
        jump_host=reader.get("jump_host", _string),
        connect_timeout_s=reader.get("connect_timeout", _duration, 10.0),
        keepalive_interval_s=reader.get("keepalive_interval", _duration, 2.0),
        keepalive_count_max=reader.get("keepalive_count_max", _positive_int, 3),
        env=reader.get("env", _env, {}),
        workdir=reader.get("workdir", _string),
        spool_dir=reader.get("spool_dir", _string, "auto"),
        sysfs_root=reader.get("sysfs_root", _string, "/"),
        thermal_zones=reader.get("thermal_zones", _selection, ALL),
        cooling_devices=reader.get("cooling_devices", _selection, ALL),
        power_supply=reader.get("power_supply", _string, AUTO),
        power_meter=tuple(meters),
        cpufreq=reader.get("cpufreq", _selection, ALL),
        sample_interval_s=interval,
    )
    reader.finish(_DEVICE_KEYS)
    return device


def _cooldown(reader: _Reader) -> Cooldown:
    zones = reader.get("zones", _selection, ("nsp*",))
    if isinstance(zones, str):
        raise reader.key_error("zones", "list the zones to watch, e.g. ['nsp*']")
    cooldown = Cooldown(
        below_c=reader.get("below", _temperature, required=True),
        zones=zones,
        timeout_s=reader.get("timeout", _duration, 600.0),
    )
    reader.finish(("below", "zones", "timeout"))
    return cooldown


def _profiler(reader: _Reader) -> ProfilerOutput:
    output = ProfilerOutput(
        kind=reader.get("kind", _one_of(PROFILER_KINDS), required=True),
        path=reader.get("path", _string, required=True),
        reader=reader.get("reader", _string),
        schematic=reader.get("schematic", _string),
        viewer=reader.get("viewer", _string, "qnn-profile-viewer"),
    )
    reader.finish(("kind", "path", "reader", "schematic", "viewer"))
    if output.kind == "optrace" and not output.schematic:
        raise reader.error(
            "profiler: optrace needs the schematic written when the context was compiled",
            fix="add 'schematic: /path/to/<graph>_schematic.bin' (from "
            "qnn-context-binary-generator --profiling_option optrace)",
        )
    return output


def _variants(reader: _Reader) -> tuple[Variant, ...]:
    reader.used.add("variants")
    raw = reader.data.get("variants")
    if raw is None:
        return ()
    if not isinstance(raw, list) or not raw:
        raise reader.key_error("variants", "expected a list of {name, env, command}")
    variants: list[Variant] = []
    seen: set[str] = set()
    for index, item in enumerate(raw):
        if isinstance(item, str):
            item = _LineDict(name=item)
        sub = _Reader(reader.source, item, f"run.variants[{index}]", reader.line_of("variants"))
        name = sub.get("name", _string, required=True)
        if not _VARIANT_NAME.match(name):
            raise sub.key_error(
                "name",
                f"{name!r} is not a usable variant name",
                "use letters, digits, '.', '_', '+' or '-'",
            )
        if name in seen:
            raise sub.key_error("name", f"variant {name!r} appears twice", "give each one a name")
        seen.add(name)
        variants.append(
            Variant(name=name, env=sub.get("env", _env, {}), command=sub.get("command", _string))
        )
        sub.finish(("name", "env", "command"))
    return tuple(variants)


def _run(reader: _Reader) -> RunProfile:
    cooldown_reader = reader.child("cooldown")
    profiler_reader = reader.child("profiler")
    run = RunProfile(
        command=reader.get("command", _string, required=True),
        warmup=reader.get("warmup", _positive_int, 10),
        iterations=reader.get("iterations", _positive_int),
        duration_s=reader.get("duration", _duration),
        min_iterations=reader.get("min_iterations", _positive_int, 30),
        min_duration_s=reader.get("min_duration", _duration, 0.0),
        rate_hz=reader.get("rate", _positive_float),
        timeout_s=reader.get("timeout", _duration),
        cooldown=_cooldown(cooldown_reader) if cooldown_reader else None,
        idle_baseline_s=reader.get("idle_baseline", _duration, 0.0),
        latency_source=reader.get("latency_source", _one_of(LATENCY_SOURCES), "wall"),
        profiler=_profiler(profiler_reader) if profiler_reader else None,
        env=reader.get("env", _env, {}),
        variants=_variants(reader),
        max_consecutive_failures=reader.get("max_consecutive_failures", _positive_int, 5),
    )
    reader.finish(_RUN_KEYS)
    if run.iterations is None and run.duration_s is None:
        raise reader.error(
            "run: say how long to measure",
            fix="add 'iterations: 200' (a count) or 'duration: 10m' (a sustained run)",
        )
    if run.iterations is not None and run.duration_s is not None:
        raise reader.error(
            "run: 'iterations' and 'duration' are both set; the run would stop at whichever "
            "comes first, which is rarely what was meant",
            fix="keep one of them",
        )
    if run.latency_source == "genie" and (
        run.profiler is None or run.profiler.kind != "genie_profile"
    ):
        raise reader.error(
            "run.latency_source: 'genie' reads the Genie profile, but no genie_profile is set",
            fix="add 'profiler: {kind: genie_profile, path: /tmp/genie_profile.json}' and pass "
            "'--profile' with that path in the command",
        )
    if run.latency_source == "execute_stats" and (
        run.profiler is None or run.profiler.kind not in ("qnn_log", "optrace")
    ):
        raise reader.error(
            "run.latency_source: 'execute_stats' reads qnn-net-run's profiling log, but no "
            "qnn_log (or optrace) profiler output is set",
            fix="add 'profiler: {kind: qnn_log, path: <the --output_dir of the command>}'",
        )
    return run


_TOP_KEYS = ("name", "description", "device", "run")


def load_profile_text(text: str, source: str = "<profile>") -> Profile:
    """Validate a profile given as YAML text; ``source`` names it in errors."""
    if text.startswith("\ufeff"):
        text = text[1:]
    try:
        data = yaml.load(text, Loader=_LineLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 0
        problem = exc.problem or exc.context or "invalid YAML"
        context = exc.context_mark
        if exc.context and context is not None and context.line + 1 != line:
            problem += f" ({exc.context} on line {context.line + 1})"
        raise ProfileError(
            f"{source}:{line}: not valid YAML: {problem}",
            "check the indentation and quoting on that line (YAML needs spaces, not tabs)",
        ) from None
    except yaml.YAMLError as exc:
        raise ProfileError(f"{source}: not valid YAML: {exc}") from None
    if data is None:
        raise ProfileError(f"{source}: the file is empty", "see docs/profiles.md for an example")
    top = _Reader(source, data, "", 1)
    name = top.get("name", _string)
    device_reader = top.child("device")
    run_reader = top.child("run")
    if run_reader is None:
        raise top.error("missing the 'run:' section", fix="add 'run:' with at least 'command:'")
    profile = Profile(
        name=name or Path(source).stem,
        description=top.get("description", _string, ""),
        device=_device(device_reader) if device_reader else DeviceProfile(),
        run=_run(run_reader),
        source=source,
    )
    top.finish(_TOP_KEYS)
    return profile


def load_profile(path: str | os.PathLike[str]) -> Profile:
    """Load and validate one profile file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ProfileError(
            f"{path}: no such profile file", "run 'qtop profiles' to list them"
        ) from None
    except IsADirectoryError:
        raise ProfileError(f"{path}: is a directory, not a profile file") from None
    except UnicodeDecodeError as exc:
        raise ProfileError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise ProfileError(f"{path}: cannot read: {exc.strerror}") from None
    return load_profile_text(text, str(path))


# --- where profiles live ----------------------------------------------------


def builtin_profile_dir() -> Path:
    """The profiles shipped with qtop (the repository's profiles/ or the wheel's copy)."""
    packaged = Path(__file__).parent / "_profiles"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parent.parent / "profiles"


def user_profile_dir() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
    return Path(base) / "qtop" / "profiles"


def profile_dirs() -> tuple[Path, ...]:
    """Searched in order: ./profiles, the user's, the built-in ones."""
    dirs = [Path.cwd() / "profiles", user_profile_dir(), builtin_profile_dir()]
    unique: list[Path] = []
    for directory in dirs:
        if directory.is_dir() and directory.resolve() not in [d.resolve() for d in unique]:
            unique.append(directory)
    return tuple(unique)


def iter_profile_files() -> Iterator[Path]:
    seen: set[str] = set()
    for directory in profile_dirs():
        for path in sorted(directory.glob("*.y*ml")):
            if path.stem not in seen:
                seen.add(path.stem)
                yield path


def resolve_profile(name_or_path: str) -> Path:
    """A profile path from a path or a name (``iq9075-qwen-netrun``)."""
    candidate = Path(name_or_path).expanduser()
    if candidate.is_file():
        return candidate
    for path in iter_profile_files():
        if path.stem == name_or_path:
            return path
    names = [p.stem for p in iter_profile_files()]
    close = difflib.get_close_matches(name_or_path, names, n=1)
    fix = f"did you mean '{close[0]}'?" if close else "run 'qtop profiles' to list them"
    raise ProfileError(f"no profile file or profile named {name_or_path!r}", fix)

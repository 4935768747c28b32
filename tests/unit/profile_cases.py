"""Every profile key with values it takes and values it refuses, and the message and fix.

Shared by the key tests (qtop's own check) and the JSON Schema tests (a standard
validator on the shipped schema). A bad case that JSON Schema cannot express
says why in ``json_blind``.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

FORMS = "write seconds (90, 0.5) or a number with a unit (250ms, 30s, 10m, 1h30m, 2d)"
# The smallest profile that is valid: every case adds or replaces one key of it.
BASE: dict = {"run": {"command": "echo hi", "iterations": "40"}}
# Keys that only make sense inside a section with its required keys.
CONTEXT: dict[str, dict] = {
    "run.cooldown": {"below": "45"},
    "run.profiler": {"kind": "qnn_log", "path": "/o"},
}
# Keys that replace one of the base profile's (a run has iterations or a duration).
REPLACES = {"run.duration": "run.iterations"}
# Keys that need a sibling to mean anything (a paced run's keys need its rate).
NEEDS: dict[str, dict[str, str]] = {
    "run.schedule": {"rate": "10"},
    "run.deadline": {"rate": "10"},
    "run.arrival_seed": {"rate": "10", "schedule": "poisson"},
}


@dataclass(frozen=True)
class Bad:
    """A value ``key`` refuses: the issue's key, message and fix (exact)."""

    value: str
    message: str
    fix: str | None
    key: str | None = None  # where the issue is reported, when not the key itself
    json_blind: str = ""  # why JSON Schema cannot refuse it ("" when it does)


@dataclass(frozen=True)
class KeyCases:
    key: str
    good: tuple[str, ...]
    bad: tuple[Bad, ...]


def render(tree: dict, indent: str = "") -> str:
    lines = []
    for name, value in tree.items():
        if isinstance(value, dict):
            lines.append(f"{indent}{name}:")
            lines.append(render(value, indent + "  "))
        else:
            lines.append(f"{indent}{name}: {value}")
    return "\n".join(lines)


def profile_with(key: str, value: str | None) -> str:
    """The base profile with ``key`` (dotted) set to the raw YAML ``value``, or removed."""
    tree = copy.deepcopy(BASE)
    if key in REPLACES:
        section, _, name = REPLACES[key].rpartition(".")
        tree[section].pop(name)
    parts = key.split(".")
    for depth in range(1, len(parts)):
        prefix = ".".join(parts[:depth])
        node = tree
        for part in parts[:depth]:
            node = node.setdefault(part, {})
        for sibling, sibling_value in CONTEXT.get(prefix, {}).items():
            node.setdefault(sibling, sibling_value)
    node = tree
    for part in parts[:-1]:
        node = node.setdefault(part, {})
    for sibling, sibling_value in NEEDS.get(key, {}).items():
        node.setdefault(sibling, sibling_value)
    if value is None:
        node.pop(parts[-1], None)
    else:
        node[parts[-1]] = value
    return render(tree) + "\n"


def line_of_key(text: str, key: str) -> int:
    """The line where the last part of ``key`` is written (1-based)."""
    name = key.split(".")[-1].split("[")[0]
    depth = key.count(".")
    for number, line in enumerate(text.splitlines(), start=1):
        if line.startswith("  " * depth + name + ":"):
            return number
    raise AssertionError(f"{key} not in {text!r}")


def duration_range(low: str, high: str, example: str) -> str:
    return f"give a duration from {low} to {high}, e.g. {example}"


def whole(low: int, high: int, example: object) -> str:
    return f"write a whole number from {low} to {high}, e.g. {example}"


NAME_FIX = "use letters, digits, '.', '_', '+' or '-', starting with a letter or digit"
PATH_FIX = (
    "keep the system directories after yours, e.g. PATH: /opt/qnn/bin:/usr/bin:/bin "
    "($PATH is not expanded: values are passed literally)"
)
CONTROL_FIX = "remove it: control characters (NUL, escape, ...) cannot be passed on intact"
ONE_LINE_FIX = "remove the line break (a '>' or '|' block adds one at the end: use '>-' or '|-')"
NAN = "JSON has no NaN (a language server sees a number and compares nothing)"
TEXT_RANGE = "a duration written as text is only checked for its form by JSON Schema"

CASES: tuple[KeyCases, ...] = (
    KeyCases(
        "device",
        ("{host: evk9075.local}",),
        (
            Bad(
                "5",
                "expected a mapping of keys, got 5",
                "indent its keys under it, e.g. {host: evk9075.local}",
            ),
        ),
    ),
    KeyCases(
        "run",
        ("{command: ./bench, iterations: 200}",),
        (
            Bad(
                "[]",
                "expected a mapping of keys, got a list",
                "indent its keys under it, e.g. {command: ./bench, iterations: 200}",
            ),
            Bad(
                "{iterations: 200}",
                "missing required key 'command'",
                "add it, e.g. command: "
                "./qnn-net-run --retrieve_context model.bin --input_list inputs.txt",
            ),
        ),
    ),
    KeyCases(
        "name",
        ("glasses-prismml", "a.b_c+1"),
        (
            Bad(
                "a/b",
                "'a/b' is not a usable profile name",
                NAME_FIX + " (it names the recording file)",
            ),
            Bad(
                "../escape",
                "'../escape' is not a usable profile name",
                NAME_FIX + " (it names the recording file)",
            ),
        ),
    ),
    KeyCases(
        "description",
        ("'PrismML, three configs'",),
        (Bad('"two\\nlines"', "must be one line, but it has a line break", ONE_LINE_FIX),),
    ),
    KeyCases(
        "device.host",
        ("evk9075.local", "10.0.0.1", "glasses"),
        (
            Bad(
                "-oProxyCommand=x",
                "'-oProxyCommand=x' is not a host name",
                "write a host name, an address or an ssh alias, e.g. evk9075.local",
            ),
            Bad("yes", "expected text, got true", "quote it if you mean the text"),
        ),
    ),
    KeyCases(
        "device.port",
        ("22", "2222"),
        (
            Bad("0", "0 is below the minimum, 1", whole(1, 65535, 22)),
            Bad("70000", "70000 is above the maximum, 65535", whole(1, 65535, 22)),
            Bad("ssh", "expected a whole number, got 'ssh'", whole(1, 65535, 22)),
        ),
    ),
    KeyCases(
        "device.user",
        ("ubuntu", "root"),
        (Bad("'a b'", "'a b' is not a user name", "write one word"),),
    ),
    KeyCases(
        "device.identity_file",
        ("~/.ssh/id_ed25519",),
        (
            Bad(
                '"key\\e[31m"',
                "contains the control character U+001B at position 3",
                CONTROL_FIX,
            ),
        ),
    ),
    KeyCases(
        "device.known_hosts",
        ("~/.ssh/known_hosts",),
        (Bad("[a, b]", "expected text, got a list", "write text, e.g. ~/.ssh/known_hosts"),),
    ),
    KeyCases(
        "device.jump_host",
        ("user@bastion:22",),
        (
            Bad(
                "'-J x'",
                "'-J x' is not a host",
                "write [user@]host[:port] or an ssh alias",
            ),
        ),
    ),
    KeyCases(
        "device.transport",
        ("ssh", "adb"),
        (Bad("usb", "'usb' is not one of ssh, adb", "use one of: ssh, adb"),),
    ),
    KeyCases(
        "device.serial",
        ("1a2b3c4d", "192.168.1.20:5555", "emulator-5554"),
        (
            Bad(
                "'a b'",
                "'a b' is not an adb serial",
                "write the serial 'adb devices' shows, e.g. 1a2b3c4d or 192.168.1.20:5555",
            ),
            Bad(
                "-s",
                "'-s' is not an adb serial",
                "write the serial 'adb devices' shows, e.g. 1a2b3c4d or 192.168.1.20:5555",
            ),
        ),
    ),
    KeyCases(
        "device.adb_server",
        ("127.0.0.1:5037", "adbhost.lan:5037", "'[::1]:5037'"),
        (
            Bad("127.0.0.1", "'127.0.0.1' is not host:port", "write e.g. 127.0.0.1:5037"),
            Bad("'host: 5037'", "'host: 5037' is not host:port", "write e.g. 127.0.0.1:5037"),
        ),
    ),
    KeyCases(
        "device.connect_timeout",
        ("10", "30s"),
        (
            Bad(
                "500ms",
                "500ms is below the minimum, 1s",
                duration_range("1s", "10m", "10s"),
                json_blind=TEXT_RANGE,
            ),
            Bad("-1s", "-1s is negative", f"{FORMS}, e.g. 10s"),
        ),
    ),
    KeyCases(
        "device.keepalive_interval",
        ("300ms", "2"),
        (Bad("0", "0 s is below the minimum, 100ms", duration_range("100ms", "10m", "2s")),),
    ),
    KeyCases(
        "device.keepalive_count_max",
        ("3",),
        (
            Bad("0", "0 is below the minimum, 1", whole(1, 100, 3)),
            Bad("1000", "1000 is above the maximum, 100", whole(1, 100, 3)),
        ),
    ),
    KeyCases(
        "device.env",
        ("{LD_LIBRARY_PATH: /usr/lib, THREADS: 4, EMPTY: ''}", "{PATH: /opt/bin:/usr/bin:/bin}"),
        (
            Bad(
                "{PATH: ''}",
                "is empty: the device agent could not find sh, mkdir or sleep, so the run "
                "would never start",
                PATH_FIX,
                key="device.env.PATH",
            ),
            Bad(
                "{PATH: /opt/bin}",
                "has none of /usr/bin, /bin, /system/bin: the device agent could not find sh, "
                "mkdir or sleep, so the run would never start",
                PATH_FIX,
                key="device.env.PATH",
            ),
            Bad(
                "{QTOP_MODE: x}",
                "names starting with QTOP_ or qtop_ belong to qtop's device agent",
                "rename the variable",
                key="device.env.QTOP_MODE",
            ),
            Bad(
                "{1A: x}",
                "'1A' is not a valid environment variable name",
                "use letters, digits and _ (not starting with a digit)",
                key="device.env.1A",
            ),
            Bad(
                "{SCALE: 1.10}",
                "expected text, got the number 1.1",
                "quote it ('1.1'): YAML reads an unquoted 1.10 as the number 1.1",
                key="device.env.SCALE",
            ),
            Bad(
                '{A: "x\\0y"}',
                "contains the control character U+0000 at position 1",
                CONTROL_FIX,
                key="device.env.A",
            ),
            Bad(
                "{A: }",
                "has no value",
                "write A: '' for an empty value",
                key="device.env.A",
            ),
            Bad(
                "[A]",
                "expected a mapping of NAME: value, got a list",
                "e.g. {LD_LIBRARY_PATH: /usr/lib}",
            ),
        ),
    ),
    KeyCases(
        "device.workdir",
        ("/data/local/tmp/prismml",),
        (Bad('"/tmp/\\0"', "contains the control character U+0000 at position 5", CONTROL_FIX),),
    ),
    KeyCases(
        "device.spool_dir",
        ("/data/local/tmp/qtop",),
        (
            Bad(
                "''",
                "is empty",
                "give a value, e.g. /data/local/tmp/qtop, or delete the key",
            ),
        ),
    ),
    KeyCases(
        "device.sysfs_root",
        ("/sys", "$QTOP_SIM_SYSFS"),
        (
            Bad(
                "5.5",
                "expected text, got the number 5.5",
                "quote it ('5.5'): YAML reads an unquoted 1.10 as the number 1.1",
            ),
        ),
    ),
    KeyCases(
        "device.thermal_zones",
        ("all", "none", "['nsp*', cpu-0-0-0-thermal]"),
        (
            Bad(
                "some",
                "expected all, none or a list of names, got 'some'",
                "write all, none or a list, e.g. [nsp-0-0-0-thermal, 'cpu-*']",
            ),
            Bad(
                "['nsp*', 3]",
                "expected a list of names or patterns, but one item is 3",
                "write all, none or a list, e.g. [nsp-0-0-0-thermal, 'cpu-*']",
            ),
        ),
    ),
    KeyCases(
        "device.cooling_devices",
        ("[cdsp]",),
        (Bad("[]", "is an empty list", "write all, none or a list, e.g. [cdsp, 'cpu-*']"),),
    ),
    KeyCases(
        "device.power_supply",
        ("battery", "none"),
        (Bad("''", "is empty", "give a value, e.g. battery, or delete the key"),),
    ),
    KeyCases(
        "device.power_meter",
        ("[{path: /sys/class/hwmon/hwmon2/power1_input, quantity: power, unit: uW}]",),
        (
            Bad(
                "[{path: /p, quantity: power, unit: mA}]",
                "'mA' is not a unit of power",
                "use one of: uW, mW, W",
                key="device.power_meter[0].unit",
            ),
            Bad(
                "[{path: /p, quantity: heat, unit: W}]",
                "'heat' is not one of power, current, voltage",
                "use one of: power, current, voltage",
                key="device.power_meter[0].quantity",
            ),
            Bad(
                "[{quantity: power, unit: W}]",
                "missing required key 'path'",
                "add it, e.g. path: /sys/class/hwmon/hwmon2/power1_input",
                key="device.power_meter[0]",
            ),
            Bad(
                "{path: /p}",
                "expected a list, got a mapping",
                "write a list of mappings, e.g. [{path: /sys/class/hwmon/hwmon2/power1_input, "
                "quantity: power, unit: uW}]",
            ),
        ),
    ),
    KeyCases(
        "device.cpufreq",
        ("[policy0, policy4]", "none"),
        (
            Bad(
                "true",
                "expected all, none or a list of names, got true",
                "write all, none or a list, e.g. [policy0, policy4]",
            ),
        ),
    ),
    KeyCases(
        "device.sample_interval",
        ("100ms", "0.1", "10ms", "2s"),
        (
            Bad(
                "5ms",
                "5ms is below the minimum, 10ms",
                duration_range("10ms", "1h", "100ms"),
                json_blind=TEXT_RANGE,
            ),
            Bad("0", "0 s is below the minimum, 10ms", duration_range("10ms", "1h", "100ms")),
            Bad(".nan", ".nan is not a number", f"{FORMS}, e.g. 100ms", json_blind=NAN),
            Bad(
                "2h",
                "2h is above the maximum, 1h",
                duration_range("10ms", "1h", "100ms"),
                json_blind=TEXT_RANGE,
            ),
        ),
    ),
    KeyCases(
        "run.command",
        ("echo hi", "|-\n    for i in 1 2; do\n      echo $i\n    done"),
        (
            Bad(
                '"echo \\0 hi"',
                "contains the control character U+0000 at position 5",
                CONTROL_FIX,
            ),
            Bad(
                "''",
                "is empty",
                "give a value, e.g. ./qnn-net-run --retrieve_context "
                "model.bin --input_list inputs.txt, or delete the key",
            ),
        ),
    ),
    KeyCases(
        "run.warmup",
        ("0", "10"),
        (
            Bad("-1", "-1 is below the minimum, 0", whole(0, 1000000, 10)),
            Bad(
                "1.0e+29",
                "1e+29 is above the maximum, 1000000",
                whole(0, 1000000, 10),
            ),
        ),
    ),
    KeyCases(
        "run.iterations",
        ("30", "200"),
        (
            Bad("0", "0 is below the minimum, 1", whole(1, 10000000, 200)),
            Bad("1e23", "expected a whole number, got '1e23'", whole(1, 10000000, 200)),
            Bad("2.5", "expected a whole number, got 2.5", whole(1, 10000000, 200)),
        ),
    ),
    KeyCases(
        "run.duration",
        ("10m", "600", "1h30m", "'1h 30m'"),
        (
            Bad(
                "'99999999999h'",
                "99999999999h is above the maximum, 7d",
                duration_range("10ms", "7d", "10m"),
                json_blind=TEXT_RANGE,
            ),
            Bad(".inf", ".inf is not a finite duration", f"{FORMS}, e.g. 10m"),
            Bad("-5s", "-5s is negative", f"{FORMS}, e.g. 10m"),
            Bad("10 parsecs", "'10 parsecs' is not a duration", f"{FORMS}, e.g. 10m"),
        ),
    ),
    KeyCases(
        "run.min_iterations",
        ("0", "30"),
        (Bad("-3", "-3 is below the minimum, 0", whole(0, 10000000, 30)),),
    ),
    KeyCases(
        "run.min_duration",
        ("0", "5m"),
        (Bad(".nan", ".nan is not a number", f"{FORMS}, e.g. 5m", json_blind=NAN),),
    ),
    KeyCases(
        "run.rate",
        ("2", "0.5"),
        (
            Bad(
                "0",
                "0 /s is below the minimum, 0.001 /s",
                "write a number from 0.001 to 1000 /s, e.g. 2",
            ),
            Bad(
                ".inf",
                ".inf /s is above the maximum, 1000 /s",
                "write a number from 0.001 to 1000 /s, e.g. 2",
            ),
        ),
    ),
    KeyCases(
        "run.schedule",
        ("fixed", "poisson"),
        (Bad("poison", "'poison' is not one of fixed, poisson", "did you mean 'poisson'?"),),
    ),
    KeyCases(
        "run.arrival_seed",
        ("0", "7"),
        (
            Bad(
                "-1",
                "-1 is below the minimum, 0",
                "write a whole number from 0 to 2147483647, e.g. 7",
            ),
        ),
    ),
    KeyCases(
        "run.deadline",
        ("33ms", "0.5"),
        (
            Bad(".nan", ".nan is not a number", f"{FORMS}, e.g. 33ms", json_blind=NAN),
            Bad("0", "0 s is below the minimum, 1ms", duration_range("1ms", "1h", "33ms")),
        ),
    ),
    KeyCases(
        "run.timeout",
        ("5m", "300"),
        (
            Bad(".nan", ".nan is not a number", f"{FORMS}, e.g. 5m", json_blind=NAN),
            Bad("0", "0 s is below the minimum, 10ms", duration_range("10ms", "1d", "5m")),
        ),
    ),
    KeyCases(
        "run.cooldown",
        ("{below: 45}", "{below: 40, zones: ['nsp*', battery], timeout: 15m}"),
        (
            Bad(
                "{zones: ['nsp*']}",
                "missing required key 'below'",
                "add it, e.g. below: 45",
            ),
            Bad(
                "45",
                "expected a mapping of keys, got 45",
                "indent its keys under it, e.g. {below: 45, zones: [nsp*], timeout: 15m}",
            ),
        ),
    ),
    KeyCases(
        "run.cooldown.below",
        ("45", "-10"),
        (
            Bad(
                "45000",
                "45000 °C is above the maximum, 200 °C",
                "45000 looks like millidegrees (as sysfs has them): write 45",
            ),
            Bad(
                "hot", "expected a number, got 'hot'", "write a number from -40 to 200 °C, e.g. 45"
            ),
        ),
    ),
    KeyCases(
        "run.cooldown.zones",
        ("['nsp*']",),
        (
            Bad(
                "all",
                "expected a list of names or patterns, got 'all'",
                "list them, e.g. ['nsp*']",
            ),
        ),
    ),
    KeyCases(
        "run.cooldown.timeout",
        ("15m",),
        (Bad("0", "0 s is below the minimum, 1s", duration_range("1s", "1d", "15m")),),
    ),
    KeyCases(
        "run.idle_baseline",
        ("20s", "0"),
        (
            Bad(
                "2h",
                "2h is above the maximum, 1h",
                duration_range("0s", "1h", "20s"),
                json_blind=TEXT_RANGE,
            ),
        ),
    ),
    KeyCases(
        "run.latency_source",
        ("wall",),
        (
            Bad(
                "walll",
                "'walll' is not one of wall, execute_stats, genie",
                "did you mean 'wall'?",
            ),
            Bad(
                "genie",
                "'genie' reads the Genie profile, but no genie_profile is set",
                "add 'profiler: {kind: genie_profile, path: /tmp/genie_profile.json}' and pass "
                "'--profile' with that path in the command",
            ),
        ),
    ),
    KeyCases(
        "run.profiler",
        ("{kind: qnn_log, path: /o}", "{kind: file, path: /o/x.json}"),
        (
            Bad(
                "{kind: optrace, path: /o}",
                "optrace needs the schematic written when the context was compiled",
                "add 'schematic: /path/to/<graph>_schematic.bin' (from "
                "qnn-context-binary-generator --profiling_option optrace)",
            ),
        ),
    ),
    KeyCases(
        "run.profiler.kind",
        ("genie_profile", "optrace\n    schematic: /o/g_schematic.bin"),
        (
            Bad(
                "qnnlog",
                "'qnnlog' is not one of qnn_log, genie_profile, optrace, file",
                "did you mean 'qnn_log'?",
            ),
        ),
    ),
    KeyCases(
        "run.profiler.path",
        ("$QTOP_SIM_ROOT/tmp/out",),
        (
            Bad(
                "{a: b}",
                "expected text, got a mapping",
                "write text, e.g. /data/local/tmp/prismml/out",
            ),
        ),
    ),
    KeyCases(
        "run.profiler.reader",
        ("libQnnHtpProfilingReader.so",),
        (Bad('"lib\\x07.so"', "contains the control character U+0007 at position 3", CONTROL_FIX),),
    ),
    KeyCases(
        "run.profiler.schematic",
        ("/o/g_schematic.bin",),
        (Bad("[]", "expected text, got a list", "write text, e.g. /tmp/out/graph_schematic.bin"),),
    ),
    KeyCases(
        "run.profiler.viewer",
        ("qnn-profile-viewer",),
        (Bad("''", "is empty", "give a value, e.g. qnn-profile-viewer, or delete the key"),),
    ),
    KeyCases(
        "run.env",
        ("{OMP_NUM_THREADS: '4'}",),
        (
            Bad(
                "{PATH: ''}",
                "is empty: the device agent could not find sh, mkdir or sleep, so the run "
                "would never start",
                PATH_FIX,
                key="run.env.PATH",
            ),
        ),
    ),
    KeyCases(
        "run.variants",
        ("[w8a8, w8a16]", "[{name: a, env: {CONTEXT: a.bin}, command: ./b}]"),
        (
            Bad(
                "[]",
                "is an empty list",
                "write a list of mappings, e.g. [{name: w8a8, env: {CONTEXT: w8a8.bin}}], "
                "or delete the key",
            ),
            Bad(
                "[a, a]",
                "'a' appears twice (first on line 4)",
                "give each item its own name",
                key="run.variants[1].name",
            ),
            Bad(
                "[a, {name: a, env: {X: '1'}}]",
                "'a' appears twice (first on line 4)",
                "give each item its own name",
                key="run.variants[1].name",
                json_blind="uniqueItems compares whole items, not their names",
            ),
            Bad(
                "[{name: 'x/y'}]",
                "'x/y' is not a usable variant name",
                NAME_FIX + ", e.g. w8a16",
                key="run.variants[0].name",
            ),
            Bad(
                "[{env: {A: '1'}}]",
                "missing required key 'name'",
                "add it, e.g. name: w8a16",
                key="run.variants[0]",
            ),
            Bad(
                "[{name: a, command: ''}]",
                "is empty",
                "give a value, e.g. ./qnn-net-run --retrieve_context w8a16.bin, or delete the key",
                key="run.variants[0].command",
            ),
        ),
    ),
    KeyCases(
        "run.repeat",
        ("1",),
        (
            Bad("0", "0 is below the minimum, 1", whole(1, 1000, 3)),
            Bad("1001", "1001 is above the maximum, 1000", whole(1, 1000, 3)),
        ),
    ),
    KeyCases(
        "run.max_consecutive_failures",
        ("5",),
        (Bad("0", "0 is below the minimum, 1", whole(1, 1000000, 5)),),
    ),
    KeyCases(
        "run.push",
        ("[{from: artifacts/, to: /data/local/tmp/prismml/}]", "[{from: a.bin, to: /d/b.bin}]"),
        (
            Bad(
                "[{from: artifacts/, to: data/}]",
                "'data/' is not an absolute path on the device",
                "start it with /, e.g. /data/local/tmp/prismml/",
                key="run.push[0].to",
            ),
            Bad(
                "[{to: /data/}]",
                "missing required key 'from'",
                "add it, e.g. from: artifacts/",
                key="run.push[0]",
            ),
            Bad(
                "[{from: a, to: /d, mode: 644}]",
                "unknown key",
                "known keys here: from, to",
                key="run.push[0].mode",
            ),
        ),
    ),
)


def case_ids() -> list[tuple[str, str, Bad]]:
    return [(case.key, bad.value, bad) for case in CASES for bad in case.bad]

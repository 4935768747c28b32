"""The profile schema: every key, declared once, as a field of the dataclass it fills.

Each ``key(...)`` gives the kind of value (type, unit, limits), the default, the
documentation and an example; validation, messages, ``docs/profiles.md``'s
tables and the JSON Schema are derived from it. To add a key, add a field here
(a check across keys goes in ``rules.py``) and run
``python -m qtop.profiles.generate`` to refresh the docs and the JSON Schema.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from qtop.profiles.schema import key
from qtop.profiles.sections import Env, Section, SectionList
from qtop.profiles.values import (
    Choice,
    Duration,
    Integer,
    Number,
    Patterns,
    Percent,
    Selection,
    Temperature,
    Text,
)

ALL = "all"
NONE = "none"
AUTO = "auto"

TRANSPORTS = ("ssh", "adb")
LATENCY_SOURCES = ("wall", "execute_stats", "genie")
SCHEDULES = ("fixed", "poisson")
PROFILER_KINDS = ("qnn_log", "genie_profile", "optrace", "file")
ORDERS = ("sequential", "interleaved", "randomized")
STOPS = ("planned", "early")
# MLPerf Inference's minimum query count and duration for a single-stream run.
VALIDITY_PRESETS: dict[str, tuple[int, float]] = {
    "custom": (0, 0.0),
    "mlperf-mobile": (1024, 60.0),
    "mlperf-edge": (1024, 600.0),
    "mlperf-datacenter": (1024, 600.0),
}
METER_UNITS = {
    "power": ("uW", "mW", "W"),
    "current": ("uA", "mA", "A"),
    "voltage": ("uV", "mV", "V"),
}

MINUTE = 60.0
HOUR = 3600.0
DAY = 86400.0
# Long enough for any sustained run anyone measures; a typo beyond it is caught.
LONGEST_RUN_S = 7 * DAY
MOST_ITERATIONS = 10_000_000
# sysfs sensors refresh every few ms at best; a faster sampler reads the same values.
SHORTEST_INTERVAL_S = 0.01

_SAFE_NAME = r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,79}$"
_NAME_FIX = "use letters, digits, '.', '_', '+' or '-', starting with a letter or digit"
# Host and user names: one word, never starting with '-' (it would read as an option).
_WORD = r"^(?!-)[^\s\u0000-\u001f\u007f-\u009f]+$"
# adb serials: USB serial numbers, host:port for adb over TCP, emulator-5554.
_SERIAL = r"^[A-Za-z0-9][A-Za-z0-9._:+@\[\]-]{0,99}$"
_ADB_SERVER = r"^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9][A-Za-z0-9.-]{0,252}):[0-9]{1,5}$"


@dataclass(frozen=True, slots=True, kw_only=True)
class MeterChannel:
    """An external power or current meter exposed as a file (hwmon INA2xx, ...)."""

    path: str = key(
        Text(),
        "the meter's file on the device, e.g. an INA226 hwmon "
        "`/sys/class/hwmon/hwmon2/power1_input`. A path under `/sys` is read under "
        "`sysfs_root` (`<sysfs_root>/class/hwmon/hwmon2/power1_input`), any other path as it "
        "is. hwmon numbers can change between boots: `qtop probe` lists each hwmon device by "
        "`name`",
        required=True,
        example="/sys/class/hwmon/hwmon2/power1_input",
    )
    quantity: str = key(
        Choice(*METER_UNITS),
        "what the file measures",
        required=True,
        example="power",
    )
    unit: str = key(
        Choice(*(unit for units in METER_UNITS.values() for unit in units)),
        "the file's raw unit: `uW`, `mW`, `W` for power, `uA`, `mA`, `A` for current, "
        "`uV`, `mV`, `V` for voltage",
        required=True,
        example="uW",
    )
    label: str = key(
        Text(max_length=80),
        "the channel's name in the UI and recordings",
        default="",
        default_text="from the path",
        example="board-power",
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class DeviceProfile:
    """How to reach the device and what to sample on it."""

    host: str | None = key(
        Text(
            pattern=_WORD,
            pattern_problem="is not a host name",
            pattern_fix="write a host name, an address or an ssh alias, e.g. evk9075.local",
        ),
        "host name, address, or an alias from `~/.ssh/config`, resolved as `ssh` resolves it "
        "(`HostName`, `Port`, `User`, `IdentityFile`, `ProxyJump`, `ProxyCommand`, "
        "`UserKnownHostsFile`, ...: see [ssh.md](ssh.md))",
        default=None,
        example="evk9075.local",
    )
    port: int | None = key(
        Integer(1, 65535),
        "SSH port",
        default=None,
        default_text="from ssh config, else 22",
        example=22,
    )
    user: str | None = key(
        Text(pattern=_WORD, pattern_problem="is not a user name", pattern_fix="write one word"),
        "SSH user",
        default=None,
        default_text="from ssh config, else your login",
        example="ubuntu",
    )
    identity_file: str | None = key(
        Text(),
        "private key file",
        default=None,
        default_text="ssh config / agent / default keys",
        example="~/.ssh/id_ed25519",
    )
    known_hosts: str | None = key(
        Text(),
        "host keys to check against (for the device; a jump host uses its own config entry). "
        "Host keys are **always** checked; a setting that would "
        "disable checking is refused",
        default=None,
        default_text="ssh config `UserKnownHostsFile`, else `~/.ssh/known_hosts`",
        example="~/.ssh/known_hosts",
    )
    jump_host: str | None = key(
        Text(
            pattern=_WORD,
            pattern_problem="is not a host",
            pattern_fix="write [user@]host[:port] or an ssh alias",
        ),
        "`[user@]host[:port]` or an alias to tunnel through, comma-separated for several (as "
        "`ssh -J`); replaces the config's `ProxyJump`/`ProxyCommand`; `none` connects directly",
        default=None,
        default_text="from ssh config `ProxyJump`",
        example="bastion",
    )
    transport: str = key(
        Choice(*TRANSPORTS),
        "how to reach the device: `ssh`, or `adb` (phones and glasses with adbd and no sshd; "
        "`qtop run --adb` chooses it too)",
        default="ssh",
        example="adb",
    )
    serial: str | None = key(
        Text(
            pattern=_SERIAL,
            pattern_problem="is not an adb serial",
            pattern_fix="write the serial 'adb devices' shows, e.g. 1a2b3c4d or 192.168.1.20:5555",
        ),
        "with `transport: adb`, the device's serial as `adb devices` lists it; `host:port` for "
        "adb over TCP (qtop runs `adb connect` when it is not attached)",
        default=None,
        default_text="`$ANDROID_SERIAL`, else the only device attached",
        example="1a2b3c4d",
    )
    adb_server: str | None = key(
        Text(
            pattern=_ADB_SERVER,
            pattern_problem="is not host:port",
            pattern_fix="write e.g. 127.0.0.1:5037",
        ),
        "with `transport: adb`, the adb server to use (`adb -H HOST -P PORT`); qtop then never "
        "starts one itself",
        default=None,
        default_text="the adb client's own (port `$ANDROID_ADB_SERVER_PORT` or 5037, started "
        "when needed)",
        example="127.0.0.1:5037",
    )
    connect_timeout_s: float = key(
        Duration(1.0, 10 * MINUTE),
        "give up connecting after this long (over adb: waiting for the device to attach)",
        name="connect_timeout",
        default=10.0,
        example="10s",
    )
    keepalive_interval_s: float = key(
        Duration(0.1, 10 * MINUTE),
        "SSH keepalive period; a dead link is noticed after "
        "`keepalive_interval × keepalive_count_max` (over adb: a round trip to the device "
        "whenever nothing has arrived for this long)",
        name="keepalive_interval",
        default=2.0,
        example="2s",
    )
    keepalive_count_max: int = key(
        Integer(1, 100),
        "unanswered keepalives before the link counts as dropped",
        default=3,
        example=3,
    )
    env: Mapping[str, str] = key(
        Env(),
        "environment for the command on the device, e.g. `ADSP_LIBRARY_PATH`, "
        "`LD_LIBRARY_PATH`. Values are passed literally (`$NAME` is not expanded); a `PATH` "
        "must keep `/usr/bin`, `/bin` or `/system/bin`, where the device agent finds its tools",
        default_factory=dict,
        example={"LD_LIBRARY_PATH": "/usr/lib"},
    )
    workdir: str | None = key(
        Text(),
        "directory the command runs in",
        default=None,
        default_text="the login directory",
        example="/data/local/tmp/prismml",
    )
    spool_dir: str = key(
        Text(),
        "where the device agent keeps its per-run files: `auto` is `/data/local/tmp/qtop` "
        "where `/tmp` is not writable (Android), else `${TMPDIR:-/tmp}/qtop-UID`, made 0700; "
        "a directory of another user, a symbolic link or one others can write is refused "
        "(docs/device-protocol.md)",
        default=AUTO,
        example="/data/local/tmp/qtop",
    )
    sysfs_root: str = key(
        Text(),
        "the directory that stands for `/sys` on the device: thermal zones, cooling devices, "
        "power supplies, cpufreq, the SoC identity and `power_meter` paths under `/sys` are "
        "all read under it (leave it at `/sys` on a board; a test rig or chroot names its "
        "copy). May start with `$NAME`, a variable of the device's environment "
        "(`$QTOP_SIM_SYSFS`, the simulated board's stand-in for `/sys`)",
        default="/sys",
        example="/sys",
    )
    thermal_zones: str | tuple[str, ...] = key(
        Selection("[nsp-0-0-0-thermal, 'cpu-*']"),
        "`all`, `none`, or a list of zone `type` names or shell patterns "
        "(`['nsp*', cpu-0-0-0-thermal]`). Zones are matched by `type`, never by number: "
        "numbering changes between boots",
        default=ALL,
        example=["nsp*", "cpu-0-0-0-thermal"],
    )
    cooling_devices: str | tuple[str, ...] = key(
        Selection("[cdsp, 'cpu-*']"),
        "same, for cooling devices (`cdsp` shows NPU throttling)",
        default=ALL,
        example=["cdsp"],
    )
    power_supply: str = key(
        Text(max_length=100),
        "a name under `/sys/class/power_supply` (`battery`), `auto` (the first supply of "
        "type `Battery`), or `none` (no battery telemetry, and no ODPM energy rails either). "
        "Android ODPM rails (`/sys/bus/iio/devices/iio:device*/energy_value`) are sampled "
        "whenever the device has them",
        default=AUTO,
        example="battery",
    )
    power_meter: tuple[MeterChannel, ...] = key(
        SectionList(MeterChannel),
        "external meters, for boards with no battery (see below)",
        default=(),
        example=[
            {"path": "/sys/class/hwmon/hwmon2/power1_input", "quantity": "power", "unit": "uW"}
        ],
    )
    cpufreq: str | tuple[str, ...] = key(
        Selection("[policy0, policy4]"),
        "`all`, `none`, or a list of policies (`[policy0, policy4]`)",
        default=ALL,
        example=["policy0", "policy4"],
    )
    sample_interval_s: float = key(
        Duration(SHORTEST_INTERVAL_S, HOUR, warn_bare_above=10.0),
        "sampler period. qtop warns when a sensor refreshes more slowly than this, and when "
        "a bare number looks like milliseconds (`100` is 100 s)",
        name="sample_interval",
        default=0.1,
        example="100ms",
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Cooldown:
    """Wait until the named zones are cool enough before measuring."""

    below_c: float = key(
        Temperature(-40.0, 200.0, warn_above=125.0),
        "wait until every matching zone is below this many degrees Celsius (not the "
        "millidegrees sysfs uses)",
        name="below",
        required=True,
        example=45,
    )
    zones: tuple[str, ...] = key(
        Patterns("['nsp*']"),
        "zone `type` names or shell patterns to watch",
        default=("nsp*",),
        example=["nsp*", "battery"],
    )
    timeout_s: float = key(
        Duration(1.0, DAY),
        "give up waiting after this long (a warning says so) and measure anyway",
        name="timeout",
        default=600.0,
        example="15m",
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class ProfilerOutput:
    """Which profiler output the run leaves on the device, and how to read it."""

    kind: str = key(
        Choice(*PROFILER_KINDS),
        "`qnn_log` (a `qnn-net-run --output_dir`; qtop runs `qnn-profile-viewer` on the "
        "device and reads its text), `genie_profile` (the file given to `genie-t2t-run "
        "--profile`), `optrace` (a qnn log plus the schematic: the report is the optrace "
        "trace), `file` (any file `qtop ops` can read, kind detected)",
        required=True,
        example="qnn_log",
    )
    path: str = key(
        Text(),
        "the output directory or file on the device. A leading `$NAME` is taken from the "
        "device's environment (`$QTOP_SIM_ROOT/tmp/out`); a relative path is relative to "
        "`workdir`. For `qnn_log`/`optrace` a directory (its `qnn-profiling-data*.log` files) "
        "or one `.log` file",
        required=True,
        example="/data/local/tmp/prismml/out",
    )
    reader: str | None = key(
        Text(),
        "the viewer reader library for the text render, e.g. "
        "`/usr/lib/libQnnHtpProfilingReader.so` (linting) or a bare library name found "
        "through `LD_LIBRARY_PATH`. If the viewer cannot load it, qtop says so once and uses "
        "the viewer's default text reader",
        default=None,
        example="/usr/lib/libQnnHtpProfilingReader.so",
    )
    schematic: str | None = key(
        Text(),
        "`<graph>_schematic.bin` from `qnn-context-binary-generator --profiling_option "
        "optrace` (required for `optrace`; `$NAME` allowed)",
        default=None,
        example="/tmp/out/graph_schematic.bin",
    )
    viewer: str = key(
        Text(),
        "the viewer executable",
        default="qnn-profile-viewer",
        example="qnn-profile-viewer",
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Variant:
    """One configuration of a sweep: environment for the command, or a new command."""

    name: str = key(
        Text(
            pattern=_SAFE_NAME,
            pattern_problem="is not a usable variant name",
            pattern_fix=_NAME_FIX + ", e.g. w8a16",
        ),
        "the variant's name, in the UI, reports and `--variant`",
        required=True,
        example="w8a16",
    )
    env: Mapping[str, str] = key(
        Env(),
        "environment for this variant (after `run.env`), e.g. the context binary it loads",
        default_factory=dict,
        example={"CONTEXT": "prismml_w8a16_seq64.bin"},
    )
    command: str | None = key(
        Text(multiline=True, max_length=65536),
        "a command of its own instead of `run.command`",
        default=None,
        default_text="`run.command`",
        example="./qnn-net-run --retrieve_context w8a16.bin",
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class PushItem:
    """A file or directory of this machine to copy to the device before the run."""

    source: str = key(
        Text(),
        "a file or directory on this machine; a relative path is taken from the profile's "
        "directory",
        name="from",
        required=True,
        example="artifacts/",
    )
    to: str = key(
        Text(
            pattern=r"^/",
            pattern_problem="is not an absolute path on the device",
            pattern_fix="start it with /, e.g. /data/local/tmp/prismml/",
        ),
        "where on the device: a directory's contents go into this directory; a file goes to "
        "this path, or into it when it ends with `/`",
        required=True,
        example="/data/local/tmp/prismml/",
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class RunProfile:
    """What to execute on the device and how to measure it."""

    command: str = key(
        Text(multiline=True, max_length=65536),
        "the shell command to measure, run by `sh` on the device in `workdir` with `env`. "
        'Variant variables are in its environment (`"$CONTEXT"`), so quoting stays the '
        "shell's",
        required=True,
        example="./qnn-net-run --retrieve_context model.bin --input_list inputs.txt",
    )
    warmup: int = key(
        Integer(0, 1_000_000),
        "warm-up iterations, thrown away. With `latency_source: execute_stats`, the leading "
        "inferences of **each process** (they pay power-on, VTCM acquire and cold caches). "
        "With `genie`, the first queries of each variant that succeeded (a failed one warmed "
        "nothing)",
        default=10,
        example=10,
    )
    iterations: int | None = key(
        Integer(1, MOST_ITERATIONS),
        "measured iterations (with `execute_stats`: measured inferences; qtop starts the "
        "command again until it has them, and inferences past the count are not counted)",
        default=None,
        example=200,
    )
    duration_s: float | None = key(
        Duration(SHORTEST_INTERVAL_S, LONGEST_RUN_S),
        "measure for this long instead (a sustained run, e.g. `10m` for a thermal-decay "
        "curve). Give `iterations` **or** `duration`",
        name="duration",
        default=None,
        example="10m",
    )
    min_iterations: int = key(
        Integer(0, MOST_ITERATIONS),
        'fewer measured iterations than this makes the result "not valid" in reports',
        default=30,
        example=30,
    )
    min_duration_s: float = key(
        Duration(0.0, LONGEST_RUN_S),
        "likewise for the measured time",
        name="min_duration",
        default=0.0,
        example="5m",
    )
    rate_hz: float | None = key(
        Number(0.001, 1000.0, "/s"),
        "pace iterations at this many per second (a duty cycle) instead of back to back",
        name="rate",
        default=None,
        example=2,
    )
    schedule: str = key(
        Choice(*SCHEDULES),
        "with `rate`, when iterations arrive: `fixed`, every 1/`rate` seconds (a camera's "
        "frames); `poisson`, after exponential gaps of mean 1/`rate` (requests from users), "
        "drawn on the host from `arrival_seed`. Arrivals never wait: an iteration that "
        "cannot start at its arrival starts when the one before ends, and is that late",
        default="fixed",
        example="poisson",
    )
    arrival_seed: int = key(
        Integer(0, 2**31 - 1),
        "with `schedule: poisson`, the seed of the arrival times: the same seed gives the "
        "same arrivals (every phase and variant of a run starts the same sequence)",
        default=1,
        example=7,
    )
    deadline_s: float | None = key(
        Duration(0.001, HOUR),
        "with `rate`, an iteration that ends later than this after its arrival (not after "
        "it started) missed its deadline",
        name="deadline",
        default=None,
        default_text="the period, 1/`rate`",
        example="33ms",
    )
    timeout_s: float | None = key(
        Duration(0.01, DAY),
        "an iteration running longer is stopped (SIGINT, then SIGTERM, then SIGKILL) and "
        "counted as failed",
        name="timeout",
        default=None,
        example="5m",
    )
    cooldown: Cooldown | None = key(
        Section(Cooldown),
        "before each variant, wait until every matching zone is below the temperature (see below)",
        default=None,
        example={"below": 45, "zones": ["nsp*"], "timeout": "15m"},
    )
    idle_baseline_s: float = key(
        Duration(0.0, HOUR),
        "measure idle power this long before the run, so energy per inference can be given "
        "net of idle",
        name="idle_baseline",
        default=0.0,
        example="20s",
    )
    latency_source: str = key(
        Choice(*LATENCY_SOURCES),
        "`wall`: the command's wall time, stamped on the device, minus the calibrated timer "
        "overhead. `execute_stats`: one iteration per inference from the `Execute Stat` "
        "blocks of qnn-net-run's profiling log, its `QNN (execute) time` (needs "
        "`profiler.kind: qnn_log` or `optrace`, and a `--profiling_level` that writes "
        "per-execute blocks: `detailed`, or `backend` with linting). `genie`: one iteration "
        "per query, latency TTFT + generation time, with `ttft_s`, `prefill_tok_s`, "
        "`decode_tok_s` and the token counts as metrics (needs `profiler.kind: genie_profile`)",
        default="wall",
        example="execute_stats",
    )
    profiler: ProfilerOutput | None = key(
        Section(ProfilerOutput),
        "profiler output the command leaves behind (see below)",
        default=None,
        example={"kind": "qnn_log", "path": "/data/local/tmp/prismml/out"},
    )
    env: Mapping[str, str] = key(
        Env(),
        "extra environment for the command (after `device.env`)",
        default_factory=dict,
        example={"OMP_NUM_THREADS": "4"},
    )
    variants: tuple[Variant, ...] = key(
        SectionList(Variant, shorthand="name", unique="name"),
        "a sweep: list of `{name, env, command}` (or bare names). Each variant runs "
        "cooldown, warm-up and measurement in turn",
        default=(),
        default_text="one configuration",
        example=[{"name": "w8a8", "env": {"CONTEXT": "w8a8.bin"}}],
    )
    repeat: int = key(
        Integer(1, 1000),
        "run the whole plan (every variant, each with its cooldown, warm-up and measurement) "
        "this many times in one session. Repetition k's iterations carry the variant name "
        "`<variant>#k` (`#k` without variants); reports show each repetition, and `qtop "
        "compare` uses the spread between them as the run-to-run noise of its gates",
        default=1,
        example=3,
    )
    order: str = key(
        Choice(*ORDERS),
        "how a sweep's variants take turns: `sequential` (each variant's whole measurement, "
        "then the next), `interleaved` (blocks of `block` iterations, variants alternating "
        "forwards then backwards: a b c c b a ..., so thermal drift hits each alike) or "
        "`randomized` (each round of blocks in a random order drawn from `order_seed`). "
        "Each variant's warm-up runs once, before its first block. Needs "
        "`latency_source: wall`",
        default="sequential",
        example="interleaved",
    )
    order_seed: int = key(
        Integer(0, 2**31 - 1),
        "the seed of `order: randomized` (recorded with the profile, so the order can be "
        "told again)",
        default=14,
        example=7,
    )
    block_size: int = key(
        Integer(1, MOST_ITERATIONS),
        "with `order: interleaved` or `randomized`, measured iterations per block",
        name="block",
        default=10,
        example=20,
    )
    block_cooldown_s: float = key(
        Duration(0.0, HOUR),
        "with `order: interleaved` or `randomized`, idle this long between blocks (a "
        "`cooldown` section, if set, waits for its temperature before every block as well)",
        name="block_cooldown",
        default=0.0,
        example="5s",
    )
    validity: str = key(
        Choice(*VALIDITY_PRESETS),
        "minimums as MLPerf Inference sets them for a single-stream run, on top of "
        "`min_iterations`/`min_duration`: `mlperf-mobile` 1,024 queries and 60 s, "
        "`mlperf-edge` and `mlperf-datacenter` 1,024 queries and 600 s (with `stop: early` "
        "the query count gives way to the early-stopping estimate, as in MLPerf)",
        default="custom",
        example="mlperf-mobile",
    )
    stop: str = key(
        Choice(*STOPS),
        "`planned`: measure every planned iteration. `early`: end a variant's measurement "
        "as soon as MLPerf's early-stopping bound on its P90 (99% confidence) is within "
        "`early_stop_margin` of the observed P90 and the minimum duration is met",
        default="planned",
        example="early",
    )
    early_stop_margin_pct: float = key(
        Percent(0.1, 100.0),
        "with `stop: early`, how close the P90 bound must be to the observed P90",
        name="early_stop_margin",
        default=5.0,
        example="5%",
    )
    max_consecutive_failures: int = key(
        Integer(1, 1_000_000),
        "stop the run after this many failed iterations in a row",
        default=5,
        example=5,
    )
    push: tuple[PushItem, ...] = key(
        SectionList(PushItem),
        "files to copy to the device before the run (over SSH with SFTP, over adb with `adb "
        "push`), each skipped when the device already has an identical copy (same size and "
        "SHA-256, or MD5 where the device has no sha256sum)",
        default=(),
        example=[{"from": "artifacts/", "to": "/data/local/tmp/prismml/"}],
    )

    def effective_deadline_s(self) -> float | None:
        """The deadline of a paced run: ``deadline``, else the (mean) period."""
        if self.rate_hz is None:
            return None
        return self.deadline_s if self.deadline_s is not None else 1.0 / self.rate_hz


@dataclass(frozen=True, slots=True, kw_only=True)
class Profile:
    """A device plus a run, as loaded from one YAML file."""

    name: str = key(
        Text(
            pattern=_SAFE_NAME,
            pattern_problem="is not a usable profile name",
            pattern_fix=_NAME_FIX + " (it names the recording file)",
        ),
        "the profile's name, in recordings and their file names",
        default_text="the file name without `.yaml`",
        example="glasses-prismml",
    )
    description: str = key(
        Text(max_length=200),
        "one line shown by `qtop profiles`",
        default="",
        example="PrismML on smart glasses, three quantisation configs",
    )
    device: DeviceProfile = key(
        Section(DeviceProfile),
        "how to reach the device and what to sample (optional with `qtop run --local` or `--host`)",
        default_factory=DeviceProfile,
        example={"host": "evk9075.local"},
    )
    run: RunProfile = key(
        Section(RunProfile),
        "what to execute and how to measure it",
        required=True,
        example={"command": "./bench", "iterations": 200},
    )
    source: str = field(default="", compare=False)

    def to_dict(self) -> dict[str, Any]:
        """The profile as used, for a recording's header."""
        return _plain(asdict(self))

    def replace_run(self, **changes: Any) -> Profile:
        return replace(self, run=replace(self.run, **changes))

    def replace_device(self, **changes: Any) -> Profile:
        return replace(self, device=replace(self.device, **changes))


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value

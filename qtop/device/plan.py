"""A run as files for the device: the agent scripts plus what this run needs.

Everything the agent needs is written into the run's spool directory at
launch (``launch_script``): the scripts from ``qtop/device/agent``, a
``plan.sh`` of variables, the sampler's unrolled ``tick.sh``, one file per
variant, a ``meta`` file for leftover detection and the run's random
``token``, which every process of the run carries in its environment so that
control never signals a process group that is not this run's. Every value in
the generated shell goes through the one quoting builder.
"""

from __future__ import annotations

import re
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources

from qtop.device.arrivals import arrivals_file
from qtop.device.probe import ProbeResult
from qtop.device.schedule import blocks_per_variant, rounds_text, uses_blocks
from qtop.device.sensors import COMMAND_RSS, ODPM_ENERGY, SensorPlan, selected
from qtop.errors import UsageError
from qtop.profiles import Profile
from qtop.textsafe import plain
from qtop.transport.command import assignment, exports, quote
from qtop.variants import repetition_name

AGENT_SCRIPTS = ("lib.sh", "sampler.sh", "run.sh")
RUN_ID = re.compile(r"^[0-9A-Za-z][0-9A-Za-z_.-]{0,79}\Z")
CALIBRATIONS = 21
# During long runs the timer is calibrated again, this often, with this many runs.
RECALIBRATE_S = 10
RECALIBRATIONS = 3
STDERR_LINES = 40
# The agent's arithmetic may be 32-bit (mksh, Android's sh): microsecond spans stay
# under 2^31, and long spans are counted in milliseconds.
MAX_STEP_S = 1000.0
MAX_SPAN_S = 20 * 86400.0
# Without a profiler hook the open mode still ends: at most this many processes.
OPEN_MODE_MAX_PROCESSES = 100000
# A path that starts with a variable of the device's environment: $NAME or $NAME/rest.
DEVICE_VARIABLE = re.compile(r"^\$([A-Za-z_][A-Za-z0-9_]*)(/.*)?\Z")
# Profiler kinds whose path is qnn-net-run's --output_dir (unless it names the .log itself).
_LOG_DIRECTORY_KINDS = ("qnn_log", "optrace")


def agent_script(name: str) -> str:
    return resources.files("qtop.device.agent").joinpath(name).read_text(encoding="utf-8")


def new_run_id(profile_name: str, now: float | None = None) -> str:
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(now))
    slug = re.sub(r"[^0-9A-Za-z_.-]+", "-", profile_name).strip("-.")[:40] or "run"
    return f"{stamp}-{slug}-{secrets.token_hex(3)}"


@dataclass(frozen=True, slots=True)
class RunOptions:
    """Knobs that are not in the profile: chosen by qtop, or by tests and benchmarks."""

    calibrations: int = CALIBRATIONS
    # Empty: an external `true` found on the device (an exec of a real program).
    calibration_command: str = ""
    recalibrate_s: int = RECALIBRATE_S
    recalibrations: int = RECALIBRATIONS
    clock: str = ""
    stderr_lines: int = STDERR_LINES


@dataclass(frozen=True, slots=True)
class RunPlan:
    """One run, ready to be written to the device."""

    run_id: str
    run_dir: str
    shell: str
    mode: str
    variants: tuple[str, ...]
    files: Mapping[str, str] = field(default_factory=dict)
    token: str = ""


def _us(seconds: float | None) -> str:
    return "" if seconds is None else str(round(seconds * 1e6))


def _ms(seconds: float | None) -> str:
    return "" if seconds is None else str(round(seconds * 1e3))


def _check_spans(profile: Profile) -> None:
    """Steps and spans the agent can count with 32-bit arithmetic (see ``MAX_STEP_S``)."""
    run, device = profile.run, profile.device
    steps = {
        "device.sample_interval": device.sample_interval_s,
        "run.rate": 1.0 / run.rate_hz if run.rate_hz else None,
    }
    for key, seconds in steps.items():
        if seconds is not None and seconds > MAX_STEP_S:
            raise UsageError(
                f"{key}: a step of {seconds:g} s is longer than the agent supports "
                f"({MAX_STEP_S:g} s: the device's shell may count in 32 bits)",
                f"use a step of at most {MAX_STEP_S:g} s",
            )
    spans = {
        "run.duration": run.duration_s,
        "run.timeout": run.timeout_s,
        "run.idle_baseline": run.idle_baseline_s,
        "run.cooldown.timeout": run.cooldown.timeout_s if run.cooldown else None,
    }
    for key, seconds in spans.items():
        if seconds is not None and seconds > MAX_SPAN_S:
            raise UsageError(
                f"{key}: {seconds:g} s is longer than the agent supports ({MAX_SPAN_S:g} s)",
                f"use at most {MAX_SPAN_S / 86400:g} days",
            )


def run_mode(profile: Profile) -> str:
    if profile.run.latency_source != "wall":
        return "open"
    return "count" if profile.run.iterations is not None else "duration"


def profiler_output_vars(profile: Profile) -> tuple[str, str]:
    """``QTOP_PROF_PATH`` and ``QTOP_PROF_MATCH`` (``dir``: the logs in it; ``file``: itself)."""
    profiler = profile.run.profiler
    if profiler is None:
        return "", ""
    path = profiler.path
    if path.startswith("$") and not DEVICE_VARIABLE.match(path):
        raise UsageError(
            f"run.profiler.path: {path!r} must be '$NAME' or '$NAME/path' with NAME a variable "
            "of the device's environment",
            "write e.g. '$QTOP_SIM_ROOT/tmp/out' or an absolute path",
        )
    in_directory = profiler.kind in _LOG_DIRECTORY_KINDS and not path.endswith(".log")
    return path, "dir" if in_directory else "file"


# A command of plain words needs nothing from `sh -c` (no quoting, expansion,
# redirection, list or assignment): the runner execs it itself, which keeps a
# second shell's exec and start-up out of every timed window and off the
# device's CPU. A first word that is a shell's own command is left to `sh`.
_PLAIN_WORD = r"[A-Za-z0-9_./,:+@%=-]+"
_PLAIN_COMMAND = re.compile(rf" *[A-Za-z0-9_./,:+@%-]+( +{_PLAIN_WORD})* *")
_SHELL_ONLY = {
    "alias", "bg", "break", "cd", "command", "continue", "eval", "exec", "exit", "export",
    "fg", "getopts", "hash", "jobs", "local", "read", "readonly", "return", "set", "shift",
    "source", "times", "trap", "type", "ulimit", "umask", "unalias", "unset", "wait",
}  # fmt: skip


def runs_directly(command: str) -> bool:
    """Whether the runner may exec ``command`` as its words, without ``sh -c``."""
    if _PLAIN_COMMAND.fullmatch(command) is None:
        return False
    return command.split()[0] not in _SHELL_ONLY


def _plan_sh(profile: Profile, plan_shell: str, run_id: str, options: RunOptions) -> str:
    run, device = profile.run, profile.device
    profiler_path, profiler_match = profiler_output_vars(profile)
    mode = run_mode(profile)
    cooldown = run.cooldown
    period = 1.0 / run.rate_hz if run.rate_hz else None
    max_processes = ""
    if mode == "open":
        cap = (run.iterations or 0) + run.warmup
        max_processes = str(cap if run.iterations is not None else OPEN_MODE_MAX_PROCESSES)
    values = {
        "QTOP_RUN_ID": run_id,
        "QTOP_SHELL": plan_shell,
        "QTOP_INTERVAL_US": _us(device.sample_interval_s),
        "QTOP_MODE": mode,
        "QTOP_WARMUP": str(run.warmup),
        "QTOP_ITERATIONS": "" if run.iterations is None else str(run.iterations),
        "QTOP_DURATION_US": _us(run.duration_s),
        "QTOP_DURATION_MS": _ms(run.duration_s),
        "QTOP_PERIOD_US": _us(period) if run.schedule == "fixed" else "",
        "QTOP_ARRIVALS": "1" if run.rate_hz is not None and run.schedule == "poisson" else "",
        "QTOP_TIMEOUT_MS": _ms(run.timeout_s),
        "QTOP_MAX_FAILURES": str(run.max_consecutive_failures),
        "QTOP_VARIANTS": str((len(run.variants) or 1) * run.repeat),
        "QTOP_ORDER": "blocks" if uses_blocks(profile) else "sequential",
        "QTOP_GROUP": str(len(run.variants) or 1),
        "QTOP_BLOCK": str(run.block_size),
        "QTOP_BLOCKS": str(blocks_per_variant(profile) or ""),
        "QTOP_ROUNDS": rounds_text(profile) if uses_blocks(profile) else "",
        "QTOP_BLOCK_PAUSE_MS": _ms(run.block_cooldown_s) or "0",
        "QTOP_WORKDIR": device.workdir or "",
        "QTOP_CALIBRATIONS": str(max(1, options.calibrations)),
        "QTOP_CALIBRATION_COMMAND": options.calibration_command,
        # The calibration goes the same way as the commands it stands for.
        "QTOP_EXEC": "direct"
        if all(runs_directly(command) for _, command, _ in _slots(profile))
        and (not options.calibration_command or runs_directly(options.calibration_command))
        else "sh",
        "QTOP_RECALIBRATE_S": str(max(0, options.recalibrate_s)),
        "QTOP_RECALIBRATIONS": str(max(1, options.recalibrations)),
        "QTOP_BASELINE_US": _us(run.idle_baseline_s) or "0",
        "QTOP_BASELINE_MS": _ms(run.idle_baseline_s) or "0",
        "QTOP_COOLDOWN_BELOW_MC": "" if cooldown is None else str(round(cooldown.below_c * 1000)),
        "QTOP_COOLDOWN_TIMEOUT_MS": "" if cooldown is None else _ms(cooldown.timeout_s),
        "QTOP_COOLDOWN_NOTE": ""
        if cooldown is None
        else f"until {', '.join(cooldown.zones)} below {cooldown.below_c:g} C",
        "QTOP_MAX_PROCESSES": max_processes,
        "QTOP_STDERR_LINES": str(options.stderr_lines),
        "QTOP_CLOCK": options.clock,
        "QTOP_PROF_PATH": profiler_path,
        "QTOP_PROF_MATCH": profiler_match,
    }
    # Values are literal text: a $ in one is not meant to expand here (SC2016),
    # and one that names a command (QTOP_EXEC=sh) is not meant to run it (SC2209).
    lines = [
        "# shellcheck shell=sh disable=SC2034,SC2016,SC2209",
        "# generated by qtop for this run",
    ]
    lines += [assignment(name, value) for name, value in values.items()]
    return "\n".join(lines) + "\n" + exports({**device.env, **run.env})


# A value with a character the protocol escapes (see lib.sh's qtop_esc): one
# `case` per value, and the escaping only when there is one.
_ESCAPE_VALUE = '\tcase $v in *[\\\\"$T$CR"]*) qtop_esc "$v"; v=$qtop_e ;; esac; l=$l$T$v'


def _tick_sh(sensors: SensorPlan) -> str:
    body = []
    for read in sensors.reads:
        if read.kind == COMMAND_RSS:
            # The program is the pid in cmd.pid or, where `sh -c` forked it, its child.
            body.append(
                '\tp=; read -r p qtop_y <"$qtop_dir/cmd.pid"; c=; '
                '[ -z "$p" ] || read -r c qtop_y <"/proc/$p/task/$p/children"; '
                '[ -z "$c" ] || p=$c; v=; '
                '[ -z "$p" ] || read -r qtop_x v qtop_y <"/proc/$p/statm"; l=$l$T$v'
            )
        elif read.kind == ODPM_ENERGY:
            body.append(_odpm_tick(read.path, read.fields))
        else:
            body.append(f"\tv=; read -r v <{quote(read.path)}")
            body.append(_ESCAPE_VALUE)
    header = "# shellcheck shell=sh disable=SC2034,SC2154\n"
    return header + "qtop_tick() {\n" + ("\n".join(body) or "\t:") + "\n}\n"


def _odpm_tick(path: str, lines: int) -> str:
    """Read an energy_value file's first lines in one redirection, builtins only.

    The variables are emptied first, so a file that cannot be opened still
    gives its fields (empty); each rail line keeps only what follows its ``[``
    (``RAIL], uWs``), which halves what the tick line carries.
    """
    names = [f"qtop_r{k}" for k in range(lines)]
    clear = "".join(f"{name}=; " for name in names)
    reads = "".join(f" read -r {name};" for name in names)
    fields = "".join(f"$T${{{name}#*[[]}}" for name in names)
    return f"\t{clear}{{{reads} }} <{quote(path)}; l=$l{fields}"


def _cooldown_sh(profile: Profile, probe: ProbeResult) -> str:
    cooldown = profile.run.cooldown
    body = ["\thot="]
    if cooldown is not None:
        for zone in probe.zones:
            if selected(zone.type, cooldown.zones):
                body.append(f"\tv=; read -r v <{quote(zone.path + '/temp')}; qtop_hot_take")
    return (
        "# shellcheck shell=sh\n"
        "qtop_hot_take() {\n"
        "\tcase $v in '' | *[!0-9-]*) return ;; esac\n"
        '\t[ "$v" -gt -273000 ] || return\n'
        '\tif [ -z "$hot" ] || [ "$v" -gt "$hot" ]; then hot=$v; fi\n'
        "}\n"
        "qtop_hottest() {\n" + "\n".join(body) + "\n}\n"
    )


def _variant_sh(command: str, base: Mapping[str, str], env: Mapping[str, str]) -> str:
    set_lines = [f"\texport {assignment(name, value)}" for name, value in env.items()]
    restore = []
    for name in env:
        if name in base:
            restore.append(f"\texport {assignment(name, base[name])}")
        else:
            restore.append(f"\tunset {name}")
    return (
        "# shellcheck shell=sh disable=SC2034,SC2016\n"
        f"{assignment('QTOP_COMMAND', command)}\n"
        "qtop_variant_env() {\n" + ("\n".join(set_lines) or "\t:") + "\n}\n"
        "qtop_variant_unenv() {\n" + ("\n".join(restore) or "\t:") + "\n}\n"
    )


def _meta(profile: Profile, run_id: str, started: float) -> str:
    rows = {
        "run_id": run_id,
        "profile": profile.name,
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "command": profile.run.command.replace("\n", " "),
    }
    return "".join(f"{key}\t{value.replace(chr(9), ' ')}\n" for key, value in rows.items())


def build_run_plan(
    profile: Profile,
    probe: ProbeResult,
    sensors: SensorPlan,
    *,
    shell: str,
    run_id: str,
    options: RunOptions | None = None,
    started: float | None = None,
) -> RunPlan:
    """Every file of the run directory, by name."""
    options = options or RunOptions()
    if not RUN_ID.match(run_id):
        raise UsageError(f"run id {run_id!r} is not usable as a directory name")
    _check_spans(profile)
    spool = probe.spool
    if spool is None:
        raise spool_error(probe)
    if not probe.has("uptime"):
        # The agent's clock lines pair every clock with it: without it they would wait for ever.
        raise UsageError(
            "/proc/uptime is not readable on the device: the agent has no clock to stamp "
            "samples with",
            "run qtop as a user that can read /proc/uptime",
        )
    base_env = {**profile.device.env, **profile.run.env}
    files = {name: agent_script(name) for name in AGENT_SCRIPTS}
    files["plan.sh"] = _plan_sh(profile, shell, run_id, options)
    files["tick.sh"] = _tick_sh(sensors)
    files["cooldown.sh"] = _cooldown_sh(profile, probe)
    arrivals = arrivals_file(profile)
    if arrivals is not None:
        files["arrivals"] = arrivals
    slots = _slots(profile)
    for index, (_, command, env) in enumerate(slots, start=1):
        files[f"variant_{index}.sh"] = _variant_sh(command, base_env, env)
    files["meta"] = _meta(profile, run_id, time.time() if started is None else started)
    token = secrets.token_hex(16)
    files["token"] = token + "\n"
    return RunPlan(
        run_id=run_id,
        run_dir=f"{spool.rstrip('/')}/{run_id}",
        shell=shell,
        mode=run_mode(profile),
        variants=tuple(name for name, _, _ in slots),
        files=files,
        token=token,
    )


def spool_error(probe: ProbeResult) -> UsageError:
    """Why the probe refused the spool directory, with what to do about it."""
    problem = plain(probe.errors.get("spool_dir", "the spool directory is not usable"))
    return UsageError(
        f"device.spool_dir: {problem}",
        "leave device.spool_dir at auto (a directory of your own: ${TMPDIR:-/tmp}/qtop-UID, "
        "or /data/local/tmp/qtop on Android) or set it to a directory only you can write; "
        "a directory another user made cannot be trusted: remove it, or pick another path",
    )


def _slots(profile: Profile) -> list[tuple[str, str, Mapping[str, str]]]:
    """What the runner runs in turn: (name in events, command, env), each variant once per repeat.

    The runner knows only numbered variants; repeating the plan is repeating its
    list here, and the host names each repetition (qtop/variants.py) when it
    translates the runner's variant numbers.
    """
    run = profile.run
    once = [(v.name, v.command or run.command, v.env) for v in run.variants]
    once = once or [("", run.command, {})]
    if run.repeat == 1:
        return once
    return [
        (repetition_name(name, k), command, env)
        for k in range(1, run.repeat + 1)
        for name, command, env in once
    ]


def launch_script(plan: RunPlan) -> str:
    """The script ``sh -s`` runs to write the run directory and start the run detached.

    It prints ``launched <tab> RUN_DIR <tab> PGID``, or ``error <tab> ...``.
    """
    spool = plan.run_dir.rsplit("/", 1)[0] or "/"
    parts = [
        agent_script("lib.sh"),
        "umask 077",
        f"qtop_dir={quote(plan.run_dir)}",
        f"qtop_shell={quote(plan.shell)}",
        # Checked again here: the probe's answer came over another connection.
        f'qtop_spool_check {quote(spool)} || {{ qtop_record error "$qtop_error"; exit 11; }}',
        'mkdir "$qtop_dir" || { qtop_record error "cannot create $qtop_dir"; exit 11; }',
    ]
    # No here-documents: mksh keeps them in temporary files under /tmp, which
    # Android does not have.
    for name, content in plan.files.items():
        parts.append(
            "# shellcheck disable=SC1003,SC2016 # the file's text, written as it is\n"
            f'qtop_write {quote(content)} >"$qtop_dir/{name}" || '
            f'{{ qtop_record error "cannot write $qtop_dir/{name}"; exit 11; }}'
        )
    parts.append(agent_script("launch.sh"))
    return "\n".join(parts) + "\n"

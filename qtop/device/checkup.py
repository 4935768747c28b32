"""``qtop probe``'s verdict: what the device has, what qtop would sample, what is missing.

Everything here is plain data built from the run's own probe (``ProbeResult``),
the sensor plan a run would use (``SensorPlan``), the inspection
(``Inspection``) and the leftover runs; ``checkup_dict`` is the stable
``--json`` structure documented in docs/probe.md. Nothing here talks to the
device.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import asdict, dataclass, field
from pathlib import PurePosixPath
from typing import Any

from qtop.device import units
from qtop.device.control import LeftoverRun
from qtop.device.inspect import TOOLS, Inspection, current_sign, refresh_of
from qtop.device.probe import ProbeResult, ZoneFound
from qtop.device.sensors import SensorPlan, meter_path, zone_quantity
from qtop.profiles import DeviceProfile, Profile

CHECKUP_FORMAT = "qtop-probe"
CHECKUP_VERSION = 1
SUPPLY_FILES = ("status", "current_now", "voltage_now", "power_now")
# Profiler kinds whose per-execute figures come from qnn-profile-viewer run on the device.
_VIEWER_KINDS = ("qnn_log", "optrace")
_TRAILING_NUMBER = re.compile(r"(\d+)$")


@dataclass(frozen=True, slots=True)
class Problem:
    """Something that stops a run (``error``) or makes it show less (``warning``)."""

    severity: str
    item: str
    problem: str
    fix: str = ""


@dataclass(slots=True)
class Checkup:
    """Every finding of one probe, ready to print or to serialise."""

    target: dict[str, Any]
    device: dict[str, Any]
    shell: dict[str, Any]
    clock: dict[str, Any]
    spool: dict[str, Any]
    sysfs_root: str
    thermal_zones: list[dict[str, Any]]
    cooling_devices: list[dict[str, Any]]
    power_sources: list[dict[str, Any]]
    hwmon: list[dict[str, Any]]
    cpufreq: list[dict[str, Any]]
    tools: dict[str, Any]
    npu: dict[str, Any]
    problems: list[Problem] = field(default_factory=list)

    @property
    def can_run(self) -> bool:
        return not any(p.severity == "error" for p in self.problems)


def watch_files(probe: ProbeResult, device: DeviceProfile) -> list[str]:
    """The files the inspection window samples: every supply's readings and every meter."""
    files = [
        f"{supply.path}/{name}"
        for supply in probe.supplies
        for name in SUPPLY_FILES
        if name in supply.files
    ]
    for meter in device.power_meter:
        path = meter_path(probe.root, meter.path)
        if path not in files:
            files.append(path)
    return files


def build_checkup(
    *,
    target: dict[str, Any],
    profile: Profile | None,
    device: DeviceProfile,
    probe: ProbeResult,
    plan: SensorPlan,
    inspection: Inspection,
    leftovers: list[LeftoverRun],
) -> Checkup:
    sampled = {channel.path for channel in plan.channels}
    checkup = Checkup(
        target=target,
        device=_device(probe),
        shell=_shell(probe, inspection),
        clock=_clock(probe),
        spool={
            "path": probe.spool or device.spool_dir,
            "writable": probe.spool is not None,
            "error": probe.errors.get("spool_dir"),
        },
        sysfs_root=probe.root,
        thermal_zones=[_zone(zone, sampled) for zone in sorted(probe.zones, key=_number_of)],
        cooling_devices=[
            {
                "path": cooling.path,
                "type": cooling.type,
                "cur_state": units.integer(cooling.cur_state),
                "max_state": units.integer(cooling.max_state),
                "sampled": f"{cooling.path}/cur_state" in sampled,
            }
            for cooling in sorted(probe.cooling, key=lambda c: _number_of(c))
        ],
        power_sources=_supplies(probe, inspection, sampled)
        + _meters(probe, device, inspection, sampled),
        hwmon=[asdict(found) | {"inputs": list(found.inputs)} for found in inspection.hwmon],
        cpufreq=[
            {
                "path": policy.path,
                "name": policy.name,
                "cur_mhz": units.kilohertz_to_mhz(policy.cur),
                "sampled": f"{policy.path}/scaling_cur_freq" in sampled,
            }
            for policy in sorted(probe.policies, key=lambda p: _number_of(p))
        ],
        tools=_tools(probe, inspection),
        npu={
            "busy": bool(inspection.npu_holders or leftovers),
            "holders": [asdict(holder) for holder in inspection.npu_holders],
            "leftover_runs": [asdict(run) for run in leftovers],
            "processes_scanned": inspection.processes_scanned,
            "processes_hidden": inspection.processes_hidden,
        },
    )
    checkup.problems = _problems(checkup, profile, probe, plan, inspection, leftovers)
    return checkup


def checkup_dict(checkup: Checkup) -> dict[str, Any]:
    """The ``--json`` document (docs/probe.md)."""
    return {
        "format": CHECKUP_FORMAT,
        "version": CHECKUP_VERSION,
        "can_run": checkup.can_run,
        "target": checkup.target,
        "device": checkup.device,
        "shell": checkup.shell,
        "clock": checkup.clock,
        "spool": checkup.spool,
        "sysfs_root": checkup.sysfs_root,
        "thermal_zones": checkup.thermal_zones,
        "cooling_devices": checkup.cooling_devices,
        "power_sources": checkup.power_sources,
        "hwmon": checkup.hwmon,
        "cpufreq": checkup.cpufreq,
        "tools": checkup.tools,
        "npu": checkup.npu,
        "problems": [asdict(problem) for problem in checkup.problems],
    }


def _number_of(found: Any) -> int:
    """thermal_zone12 sorts after thermal_zone2."""
    digits = _TRAILING_NUMBER.search(found.path)
    return int(digits.group(1)) if digits else 0


def _device(probe: ProbeResult) -> dict[str, Any]:
    identity = probe.identity
    return {
        "hostname": identity.get("hostname", ""),
        "model": identity.get("model", "").rstrip("\0"),
        "soc": identity.get("soc_machine", ""),
        "soc_id": identity.get("soc_soc_id", ""),
        "uname": identity.get("uname", ""),
    }


def _launcher(probe: ProbeResult) -> tuple[str | None, str | None]:
    """How launch.sh would start the run detached, and SIGINT's state in it."""
    if probe.has("bash") and probe.has("setsid"):
        return "bash job control + setsid", "default"
    if probe.has("python3"):
        return "python3 os.setsid", "default"
    if probe.has("setsid"):
        return "setsid", "ignored"
    if probe.has("bash"):
        return "bash job control", "default"
    return None, None


def _shell(probe: ProbeResult, inspection: Inspection) -> dict[str, Any]:
    bash = probe.caps.get("bash")
    launcher, sigint = _launcher(probe)
    agent = f"bash {bash[2]}" if probe.bash_path and bash and len(bash) > 2 else "sh"
    return {
        "agent": agent,
        "sh": inspection.shell_binary or None,
        "bash": {"path": bash[0], "version": bash[2] if len(bash) > 2 else ""} if bash else None,
        "launcher": launcher,
        "sigint": sigint,
        "setsid": probe.has("setsid"),
        "python3": probe.has("python3"),
        "arith_bits": probe.arith_bits,
    }


def _clock(probe: ProbeResult) -> dict[str, Any]:
    """The runner's and the sampler's clocks, chosen as run.sh and sampler.sh choose them."""
    if probe.bash_path:
        runner, resolution = "epoch", 1e-6
        note = "bash $EPOCHREALTIME, no fork per timestamp"
    elif probe.caps.get("date_ns") == ("1",):
        runner, resolution = "date", 1e-6
        note = "date +%s%N, one fork per timestamp (calibrated out as timer overhead)"
    else:
        runner, resolution = "uptime", 0.01
        note = "/proc/uptime only: iteration times have 10 ms resolution"
    sampler = "epoch" if probe.bash_path else "uptime"
    return {
        "runner": runner,
        "runner_resolution_s": resolution,
        "sampler": sampler,
        "sampler_resolution_s": 1e-6 if probe.bash_path else 0.01,
        "uptime": probe.has("uptime"),
        "ntp_synchronized": probe.clock_synced,
        "note": note,
    }


def _zone(zone: ZoneFound, sampled: set[str]) -> dict[str, Any]:
    quantity = zone_quantity(zone.type)
    trips = []
    for trip in sorted(zone.trips, key=lambda t: units.integer(t.index) or 0):
        trips.append(
            {
                "type": trip.type,
                "temp_c": units.millicelsius(trip.temp),
                "hyst_c": units.millicelsius(trip.hyst),
            }
        )
    return {
        "path": zone.path,
        "type": zone.type,
        "raw": zone.temp,
        "temp_c": units.millicelsius(zone.temp) if quantity is None else None,
        "temperature": quantity is None,
        "quantity": quantity,
        "trips": trips,
        "sampled": f"{zone.path}/temp" in sampled,
    }


def _refresh_dict(inspection: Inspection, path: str) -> dict[str, Any] | None:
    refresh = refresh_of(inspection.series(path))
    if refresh is None:
        return None
    return {
        "file": path,
        "period_s": refresh.period_s,
        "changes": refresh.changes,
        "window_s": round(refresh.window_s, 3),
        "note": refresh.describe(),
    }


def _supplies(
    probe: ProbeResult, inspection: Inspection, sampled: set[str]
) -> list[dict[str, Any]]:
    sources = []
    for supply in probe.supplies:
        readings: dict[str, Any] = {}
        for name in SUPPLY_FILES:
            if name not in supply.files:
                continue
            raw = inspection.last(f"{supply.path}/{name}")
            value: Any = raw
            if name != "status" and raw is not None:
                value = units.micro(raw)
            readings[name] = {"raw": raw, "value": value}
        status = readings.get("status", {}).get("raw")
        current = readings.get("current_now", {}).get("raw")
        gauge = next(
            (f"{supply.path}/{n}" for n in ("current_now", "power_now") if n in supply.files),
            None,
        )
        sources.append(
            {
                "kind": "supply",
                "name": supply.name,
                "type": supply.type,
                "path": supply.path,
                "files": list(supply.files),
                "readings": readings,
                "current_sign": current_sign(status, current)
                if "current_now" in readings
                else None,
                "refresh": _refresh_dict(inspection, gauge) if gauge else None,
                "sampled": any(path.startswith(supply.path + "/") for path in sampled),
            }
        )
    return sources


def _meters(
    probe: ProbeResult, device: DeviceProfile, inspection: Inspection, sampled: set[str]
) -> list[dict[str, Any]]:
    sources = []
    for meter in device.power_meter:
        path = meter_path(probe.root, meter.path)
        raw = inspection.last(path)
        if raw is None:
            raw = probe.meters.get(path)
        sources.append(
            {
                "kind": "meter",
                "name": meter.label or PurePosixPath(meter.path).parent.name,
                "path": path,
                "profile_path": meter.path,
                "quantity": meter.quantity,
                "unit": meter.unit,
                "raw": raw,
                "value": units.meter(raw, meter.unit) if raw is not None else None,
                "refresh": _refresh_dict(inspection, path),
                "sampled": path in sampled,
            }
        )
    return sources


def _tools(probe: ProbeResult, inspection: Inspection) -> dict[str, Any]:
    tools: dict[str, Any] = {}
    for name in TOOLS:
        path = inspection.tools.get(name) or None
        entry: dict[str, Any] = {"path": path}
        if name == "qnn-net-run":
            lines = inspection.versions.get(name, probe.qnn_lines)
            entry["version"] = ProbeResult(qnn_lines=tuple(lines)).qnn_version
            entry["version_output"] = list(lines)
        tools[name] = entry
    tools["qnn_sdk_root"] = probe.identity.get("qnn_sdk_root")
    return tools


def command_tool(profile: Profile | None) -> str | None:
    """The QNN/Genie tool the profile's command runs, if it runs one."""
    if profile is None:
        return None
    commands = [profile.run.command] + [v.command for v in profile.run.variants if v.command]
    for command in commands:
        try:
            words = shlex.split(command)
        except ValueError:
            continue
        words = [w for w in words if "=" not in w.split("/", 1)[0]]
        if words and PurePosixPath(words[0]).name in TOOLS:
            return PurePosixPath(words[0]).name
    return None


def _problems(
    checkup: Checkup,
    profile: Profile | None,
    probe: ProbeResult,
    plan: SensorPlan,
    inspection: Inspection,
    leftovers: list[LeftoverRun],
) -> list[Problem]:
    problems: list[Problem] = []
    if "sysfs_root" in probe.errors:
        problems.append(
            Problem(
                "error",
                "sysfs_root",
                probe.errors["sysfs_root"],
                "set the variable in the device's environment or use an absolute path",
            )
        )
    if not checkup.spool["writable"]:
        problems.append(
            Problem(
                "error",
                "spool_dir",
                checkup.spool["error"] or "the spool directory is not writable",
                "set device.spool_dir to a writable directory (on Android /data/local/tmp/qtop)",
            )
        )
    if not probe.has("uptime"):
        problems.append(
            Problem(
                "error",
                "clock",
                "/proc/uptime is not readable: the agent has no clock to stamp samples with",
                "run qtop as a user that can read /proc/uptime",
            )
        )
    if checkup.shell["launcher"] is None:
        problems.append(
            Problem(
                "error",
                "launcher",
                "no setsid, python3 or bash: a run could not get a process group of its own "
                "and could not be stopped safely",
                "install setsid (util-linux, busybox or toybox) on the device",
            )
        )
    elif checkup.clock["runner"] == "uptime" and probe.has("uptime"):
        problems.append(
            Problem(
                "warning",
                "clock",
                "no fine clock (no bash 5, no date +%N): iteration times have 10 ms resolution",
                "install bash 5 or a date that prints %N on the device",
            )
        )
    clock = unsynced_clock(probe)
    if clock is not None:
        problems.append(clock)
    problems.extend(_tool_problems(profile, checkup))
    for finding in plan.findings:
        problems.append(Problem("warning", finding.key, finding.problem, finding.fix))
    texts = {str(finding) for finding in plan.findings}
    for warning in plan.warnings:
        if warning not in texts:
            problems.append(Problem("warning", warning.split(":", 1)[0], warning))
    for holder in inspection.npu_holders:
        why = "an HTP tool" if holder.reason == "tool" else "a FastRPC handle on the CDSP open"
        problems.append(
            Problem(
                "warning",
                "npu",
                f"process {holder.pid} ({holder.command or '?'}) holds the NPU ({why}): a run "
                "started now would fail to create its context",
                f"wait for it to finish, or stop it (kill {holder.pid})",
            )
        )
    for run in leftovers:
        name = run.profile or (profile.name if profile else "PROFILE")
        problems.append(
            Problem(
                "warning",
                "npu",
                f"qtop run {run.run_id} (profile {run.profile or '?'}, process group {run.pgid}) "
                "is still running and holds the NPU",
                f"stop it with: qtop run {name} --stop-leftover",
            )
        )
    return problems


def unsynced_clock(probe: ProbeResult) -> Problem | None:
    """A wall clock NTP has not set yet: the step still to come moves the device's own stamps."""
    if probe.clock_synced is not False:
        return None
    return Problem(
        "warning",
        "clock",
        "the device's clock is not synchronised yet (timedatectl: NTPSynchronized=no); when "
        "NTP steps it during a run qtop takes the step off the run's own times, but the "
        "dates the device writes itself (the profiler's 'Log File Created', the command's "
        "output, file times) jump with it",
        "wait until timedatectl says 'System clock synchronized: yes', then start the run",
    )


def _tool_problems(profile: Profile | None, checkup: Checkup) -> list[Problem]:
    tools = checkup.tools
    needed = command_tool(profile)
    problems = []
    if needed is not None and not tools[needed]["path"]:
        problems.append(
            Problem(
                "error",
                "tools",
                f"the profile's command runs {needed}, which is neither on the PATH of "
                "device.env nor in device.workdir",
                "set device.workdir to the directory holding it, or add its directory to "
                "PATH in device.env",
            )
        )
    profiler = profile.run.profiler if profile is not None else None
    if profiler is not None and profiler.kind in _VIEWER_KINDS:
        viewer = profiler.viewer
        if (
            PurePosixPath(viewer).name == "qnn-profile-viewer"
            and not tools["qnn-profile-viewer"]["path"]
        ):
            severity = "error" if profile and profile.run.latency_source != "wall" else "warning"
            problems.append(
                Problem(
                    severity,
                    "tools",
                    "qnn-profile-viewer is not on the PATH of device.env: the profiling logs "
                    "cannot be read on the device",
                    "add the SDK's bin directory to PATH in device.env",
                )
            )
    if profile is None and not tools["qnn-net-run"]["path"] and not tools["genie-t2t-run"]["path"]:
        problems.append(
            Problem(
                "warning",
                "tools",
                "neither qnn-net-run nor genie-t2t-run is on the login PATH",
                "a profile can add the SDK's bin directory to PATH in device.env, or run "
                "them from device.workdir",
            )
        )
    return problems

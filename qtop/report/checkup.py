"""``qtop probe`` as text: the verdict first, then each section, then every problem with its fix.

Device text (zone names, command names, version lines) is untrusted: control
characters are shown as ``\\x..`` escapes, so nothing the device says can
move the cursor or change the terminal.
"""

from __future__ import annotations

from typing import Any

from qtop.device.checkup import Checkup

_INDENT = "  "


def printable(text: object) -> str:
    """``text`` with every control character escaped (``\\x1b`` instead of ESC)."""
    return "".join(
        ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in str(text)
    )


def _value(value: Any, unit: str = "", digits: int = 4) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.{digits}g}{unit}"
    return f"{printable(value)}{unit}"


def render_checkup(checkup: Checkup) -> str:
    lines: list[str] = []
    target = checkup.target
    what = f"profile {target['profile']}" if target.get("profile") else f"host {target['host']}"
    lines.append(f"qtop probe: {printable(what)} over {printable(target['transport'])}")
    errors = [p for p in checkup.problems if p.severity == "error"]
    warnings = [p for p in checkup.problems if p.severity == "warning"]
    if errors:
        verdict = f"qtop cannot run here: {len(errors)} error(s), {len(warnings)} warning(s)"
    elif warnings:
        verdict = f"qtop can run here, with {len(warnings)} warning(s) below"
    else:
        verdict = "qtop can run here; nothing is missing"
    lines += [verdict, ""]
    lines += _identity(checkup)
    lines += _thermal(checkup)
    lines += _cooling(checkup)
    lines += _power(checkup)
    lines += _rest(checkup)
    if checkup.problems:
        lines += ["", "problems"]
        for problem in checkup.problems:
            lines.append(
                f"{_INDENT}{problem.severity}: {printable(problem.item)}: "
                f"{printable(problem.problem)}"
            )
            if problem.fix:
                lines.append(f"{_INDENT * 3}fix: {printable(problem.fix)}")
    return "\n".join(lines)


def _identity(checkup: Checkup) -> list[str]:
    device, shell, clock, spool = checkup.device, checkup.shell, checkup.clock, checkup.spool
    name = device["hostname"] or "?"
    if device["soc"]:
        name += f" ({device['soc']})"
    lines = [f"device    {printable(name)}"]
    for key in ("model", "uname"):
        if device[key]:
            lines.append(f"          {printable(device[key])}")
    bash = shell["bash"]
    bash_text = f"bash {bash['version']} at {bash['path']}" if bash else "no bash"
    launcher = shell["launcher"] or "none (a run cannot be launched)"
    if shell["sigint"] == "ignored":
        launcher += " (SIGINT ignored in the run: a timeout starts with SIGTERM)"
    agent = printable(shell["agent"])
    if shell["sh"] and shell["agent"] == "sh":
        agent += f" ({printable(shell['sh'])})"
    lines.append(f"shell     agent runs in {agent}; {printable(bash_text)}; launcher: {launcher}")
    lines.append(
        f"clock     runner {clock['runner']} ({_resolution(clock['runner_resolution_s'])}: "
        f"{clock['note']}); sampler {clock['sampler']} "
        f"({_resolution(clock['sampler_resolution_s'])})"
    )
    state = "writable" if spool["writable"] else f"NOT writable ({printable(spool['error'])})"
    lines.append(f"spool     {printable(spool['path'])} ({state})")
    root = printable(checkup.sysfs_root)
    lines.append(f"sysfs     {root}" + ("" if root == "/sys" else " (stands for /sys)"))
    return lines


def _resolution(seconds: float) -> str:
    return f"{seconds * 1e6:.0f} µs" if seconds < 1e-3 else f"{seconds * 1e3:.0f} ms"


def _trips(trips: list[dict[str, Any]]) -> str:
    return ", ".join(f"{t['type']} {_value(t['temp_c'], ' °C')}" for t in trips)


def _mark(sampled: bool) -> str:
    return "●" if sampled else " "


def _thermal(checkup: Checkup) -> list[str]:
    zones = checkup.thermal_zones
    temperatures = sum(1 for z in zones if z["temperature"])
    lines = ["", f"thermal zones: {temperatures} temperature(s), {len(zones) - temperatures} other"]
    if not zones:
        lines.append(f"{_INDENT}none found")
    width = max((len(printable(z["type"])) for z in zones), default=4)
    for zone in zones:
        number = zone["path"].rsplit("thermal_zone", 1)[-1]
        name = printable(zone["type"]).ljust(width)
        if not zone["temperature"]:
            what = f"{_value(zone['raw'])}   not a temperature: {zone['quantity']}"
        elif zone["temp_c"] is None:
            what = f"—          reads {_value(zone['raw'] or 'nothing')} (offline or failing)"
        else:
            what = f"{zone['temp_c']:6.1f} °C  {_trips(zone['trips'])}"
        lines.append(f"{_INDENT}{_mark(zone['sampled'])} {number:>3} {name}  {what}")
    return lines


def _cooling(checkup: Checkup) -> list[str]:
    devices = checkup.cooling_devices
    lines = ["", f"cooling devices: {len(devices)}"]
    if not devices:
        lines.append(f"{_INDENT}none found")
    for device in devices:
        number = device["path"].rsplit("cooling_device", 1)[-1]
        lines.append(
            f"{_INDENT}{_mark(device['sampled'])} {number:>3} {printable(device['type'])} "
            f"(state {_value(device['cur_state'])} of {_value(device['max_state'])})"
        )
    return lines


def _power(checkup: Checkup) -> list[str]:
    lines = ["", f"power sources: {len(checkup.power_sources)}"]
    if not checkup.power_sources:
        lines.append(f"{_INDENT}none found")
    for source in checkup.power_sources:
        lines += _power_source(source)
    if checkup.hwmon:
        lines.append(f"{_INDENT}hwmon devices (a power_meter can read their *_input files):")
        for hwmon in checkup.hwmon:
            inputs = ", ".join(hwmon["inputs"]) or "no *_input files"
            lines.append(
                f"{_INDENT * 2}{printable(hwmon['path'])}: {printable(hwmon['name'] or '?')}: "
                f"{printable(inputs)}"
            )
    return lines


def _power_source(source: dict[str, Any]) -> list[str]:
    mark = _mark(source.get("sampled", False))
    if source["kind"] == "supply":
        readings = ", ".join(
            f"{name} {_value(reading['value'], _READING_UNITS.get(name, ''))}"
            for name, reading in source["readings"].items()
        )
        lines = [
            f"{_INDENT}{mark} supply {printable(source['name'])} ({printable(source['type'])}): "
            f"{readings or 'no readings'}"
        ]
        if source.get("current_sign"):
            lines.append(f"{_INDENT * 3}current sign: {printable(source['current_sign'])}")
    elif source["kind"] == "meter":
        lines = [
            f"{_INDENT}{mark} meter {printable(source['name'])} {source['quantity']} "
            f"{printable(source['path'])} ({source['unit']}): raw {_value(source['raw'])} = "
            f"{_value(source['value'])} {_SI.get(source['quantity'], '')}"
        ]
    else:
        details = {k: v for k, v in source.items() if k not in ("kind", "name", "sampled")}
        lines = [
            f"{_INDENT}{mark} {printable(source['kind'])} {printable(source.get('name', ''))}: "
            f"{printable(details)}"
        ]
    refresh = source.get("refresh")
    if refresh:
        lines.append(f"{_INDENT * 3}{refresh['note']}")
    return lines


_SI = {"power": "W", "current": "A", "voltage": "V"}
_READING_UNITS = {"current_now": " A", "voltage_now": " V", "power_now": " W"}


def _rest(checkup: Checkup) -> list[str]:
    lines = ["", "cpufreq"]
    if not checkup.cpufreq:
        lines.append(f"{_INDENT}none found")
    for policy in checkup.cpufreq:
        lines.append(
            f"{_INDENT}{_mark(policy['sampled'])} {printable(policy['name'])} "
            f"{_value(policy['cur_mhz'], ' MHz')}"
        )
    lines += ["", "tools"]
    for name, entry in checkup.tools.items():
        if name == "qnn_sdk_root":
            if entry:
                lines.append(f"{_INDENT}QNN_SDK_ROOT {printable(entry)}")
            continue
        version = f" (QNN {printable(entry['version'])})" if entry.get("version") else ""
        lines.append(f"{_INDENT}{name}: {printable(entry['path'] or 'not found')}{version}")
    npu = checkup.npu
    lines += ["", "NPU"]
    if not npu["busy"]:
        hidden = npu["processes_hidden"]
        unseen = f"; {hidden} process(es) whose files this user cannot see" if hidden else ""
        lines.append(f"{_INDENT}free ({npu['processes_scanned']} processes looked at{unseen})")
    for holder in npu["holders"]:
        lines.append(
            f"{_INDENT}held by process {holder['pid']} ({printable(holder['command'])}, "
            f"{'an HTP tool' if holder['reason'] == 'tool' else 'FastRPC handle on the CDSP'})"
        )
    for run in npu["leftover_runs"]:
        lines.append(
            f"{_INDENT}held by qtop run {printable(run['run_id'])} (process group {run['pgid']})"
        )
    lines += ["", "● = sampled by a run of this profile"]
    return lines

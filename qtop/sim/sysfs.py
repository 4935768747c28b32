"""The simulated sysfs tree: the layout of a board's /sys under a root directory.

Directories live where the kernel puts them (``devices/virtual/thermal/...``,
the power monitor under its I2C bus) and ``class/...`` holds relative
symlinks to them, as on a real board, so the tree can stand in for /sys
itself (bind-mounted over it, or as ``sysfs_root``). Every value is
written to a hidden temporary file and renamed into place, so a reader that
opens the file (``read v < temp``) sees the old or the new value, never a torn
or empty one. Hidden names keep the temporaries out of shell globs.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from qtop.sim.config import THROTTLING_DEVICE, SimConfig

THERMAL = Path("devices/virtual/thermal")
POWER_SUPPLY = Path("devices/virtual/power_supply")
ODPM = Path("devices/platform/odpm")
CPUFREQ = Path("devices/system/cpu/cpufreq")
# An INA2xx at address 0x40 of an I2C bus, as the kernel places its hwmon device.
METER_DEVICE = Path("devices/platform/soc@0/a84000.i2c/i2c-2/2-0040")
OFFLINE_MC = -273000
SOC_IDENTITY: dict[str, tuple[str, str]] = {
    "evk": ("QCS9075", "Qualcomm Technologies, Inc. IQ-9075 EVK"),
    "glasses": ("AR1", "Snapdragon AR1 Gen 1 smart glasses reference design"),
}


def write_atomic(path: Path, text: str) -> None:
    """Replace ``path``'s content in one rename, so no reader sees a partial value."""
    temporary = f"{path.parent}/.{path.name}.tmp"
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)
    os.replace(temporary, path)


@dataclass(frozen=True, slots=True)
class SysfsPaths:
    """Where the sensor loop writes each live value."""

    zone_temps: tuple[Path, ...]
    cdsp_cur_state: Path
    battery_dir: Path | None
    cpufreq_cur: tuple[Path, ...]
    odpm_dir: Path | None = None
    raw_zone_temps: tuple[Path, ...] = ()
    meter_dir: Path | None = None


def build_tree(root: Path, config: SimConfig, temps_mc: list[int]) -> SysfsPaths:
    """Create the whole tree afresh under ``root`` with the initial temperatures."""
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    thermal = config.thermal
    trips = (
        ("passive", thermal.passive_trip_c, thermal.hysteresis_c),
        ("passive", thermal.second_trip_c, thermal.hysteresis_c),
        ("critical", thermal.critical_trip_c, 1.0),
    )
    raw_zone_temps: list[Path] = []
    for index, raw in enumerate(config.raw_zones):
        zone_dir = _zone_dir(root, index, raw.name)
        temp_path = zone_dir / "temp"
        write_atomic(temp_path, f"{OFFLINE_MC if raw.reading == 'offline' else 0}\n")
        raw_zone_temps.append(temp_path)
    zone_temps: list[Path] = []
    for offset, zone in enumerate(config.zones):
        zone_dir = _zone_dir(root, len(config.raw_zones) + offset, zone.name)
        for trip, (kind, temp_c, hyst_c) in enumerate(trips):
            write_atomic(zone_dir / f"trip_point_{trip}_type", kind + "\n")
            write_atomic(zone_dir / f"trip_point_{trip}_temp", f"{round(temp_c * 1000)}\n")
            write_atomic(zone_dir / f"trip_point_{trip}_hyst", f"{round(hyst_c * 1000)}\n")
        temp_path = zone_dir / "temp"
        write_atomic(temp_path, f"{temps_mc[offset]}\n")
        zone_temps.append(temp_path)

    cdsp_state: Path | None = None
    for index, device in enumerate(config.cooling):
        device_dir = _device_dir(root, THERMAL, "thermal", f"cooling_device{index}")
        write_atomic(device_dir / "type", device.name + "\n")
        throttling = device.name == THROTTLING_DEVICE
        max_state = thermal.cdsp_max_state if throttling else device.max_state or 0
        write_atomic(device_dir / "max_state", f"{max_state}\n")
        write_atomic(device_dir / "cur_state", "0\n")
        if throttling:
            cdsp_state = device_dir / "cur_state"
    assert cdsp_state is not None, "SimConfig.validate() requires the throttling device"

    meter_dir = None
    if config.meter is not None:
        meter_dir = _device_dir(root, METER_DEVICE / "hwmon", "hwmon", config.meter.hwmon)
        write_atomic(meter_dir / "name", config.meter.name + "\n")
        write_atomic(meter_dir / "update_interval", f"{round(config.meter.refresh_s * 1000)}\n")
        write_atomic(meter_dir / "shunt_resistor", f"{round(config.meter.shunt_ohm * 1e6)}\n")

    (root / "class" / "hwmon").mkdir(parents=True, exist_ok=True)
    (root / "class" / "power_supply").mkdir(parents=True, exist_ok=True)
    battery_dir = None
    if config.battery is not None:
        battery_dir = _device_dir(root, POWER_SUPPLY, "power_supply", "battery")
        write_atomic(battery_dir / "type", "Battery\n")
    odpm_dir = None
    if config.odpm is not None:
        # As on Pixel phones: bus/iio/devices/iio:device0 links to the monitor's device.
        odpm_dir = root / ODPM / "iio:device0"
        odpm_dir.mkdir(parents=True)
        bus = root / "bus" / "iio" / "devices"
        bus.mkdir(parents=True)
        (bus / "iio:device0").symlink_to(os.path.relpath(odpm_dir, bus))
        write_atomic(odpm_dir / "name", config.odpm.name + "\n")
        rails = config.odpm.rails
        enabled = "".join(f"CH{k}[{r.name}]:{r.subsystem}\n" for k, r in enumerate(rails))
        write_atomic(odpm_dir / "enabled_rails", enabled)

    # What the device agent reads to name the board (the header's SoC and model).
    soc_machine, model = SOC_IDENTITY.get(config.variant, ("", ""))
    if soc_machine:
        soc_dir = root / "devices" / "soc0"
        soc_dir.mkdir(parents=True)
        write_atomic(soc_dir / "machine", soc_machine + "\n")
        write_atomic(soc_dir / "family", "Snapdragon\n")
        model_dir = root / "firmware" / "devicetree" / "base"
        model_dir.mkdir(parents=True)
        # The device tree's model property ends in a NUL, as on a real board.
        write_atomic(model_dir / "model", model + " (qtop simulated board)\0")

    cpufreq_cur: list[Path] = []
    for policy in config.cpufreq:
        policy_dir = root / CPUFREQ / policy.name
        policy_dir.mkdir(parents=True)
        write_atomic(policy_dir / "scaling_max_freq", f"{policy.max_khz}\n")
        write_atomic(policy_dir / "cpuinfo_max_freq", f"{policy.max_khz}\n")
        write_atomic(policy_dir / "scaling_cur_freq", f"{policy.idle_khz}\n")
        cpufreq_cur.append(policy_dir / "scaling_cur_freq")

    return SysfsPaths(
        zone_temps=tuple(zone_temps),
        cdsp_cur_state=cdsp_state,
        battery_dir=battery_dir,
        cpufreq_cur=tuple(cpufreq_cur),
        odpm_dir=odpm_dir,
        raw_zone_temps=tuple(raw_zone_temps),
        meter_dir=meter_dir,
    )


def _zone_dir(root: Path, index: int, name: str) -> Path:
    zone_dir = _device_dir(root, THERMAL, "thermal", f"thermal_zone{index}")
    write_atomic(zone_dir / "type", name + "\n")
    write_atomic(zone_dir / "mode", "enabled\n")
    write_atomic(zone_dir / "policy", "step_wise\n")
    return zone_dir


def _device_dir(root: Path, devices: Path, class_name: str, name: str) -> Path:
    """A device directory plus its ``class/<class_name>/<name>`` symlink."""
    device_dir = root / devices / name
    device_dir.mkdir(parents=True)
    class_dir = root / "class" / class_name
    class_dir.mkdir(parents=True, exist_ok=True)
    (class_dir / name).symlink_to(os.path.relpath(device_dir, class_dir))
    return device_dir

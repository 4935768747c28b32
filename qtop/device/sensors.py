"""Which files the sampler reads, and how one tick of raw text becomes a Sample.

Zones and cooling devices are matched by ``type`` (their numbers change
between boots), with shell-style patterns from the profile. The power supply
gives current and voltage with the direction taken from ``status`` (and the
driver's own signed ``current_now`` beside it, so its convention can be
checked), power from ``power_now`` or, failing that, |I| x V computed here,
and the charge counter. An Android ODPM power monitor gives one cumulative
energy counter per rail. A file the probe could not find is left out; one it
found but cannot read at a tick is ``None`` in that tick.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from qtop.device import units
from qtop.device.probe import OdpmFound, ProbeResult, SupplyFound, ZoneFound
from qtop.events import ChannelInfo, Trip
from qtop.profiles import ALL, AUTO, NONE, DeviceProfile, MeterChannel

COMMAND_RSS = "command_rss"
# A multi-line ODPM energy_value file: a timestamp line, then one line per rail.
ODPM_ENERGY = "odpm_energy"
_LABEL_SAFE = re.compile(r"[^A-Za-z0-9_.+-]+")

Decoder = Callable[[Sequence[str]], "float | None"]


@dataclass(frozen=True, slots=True)
class DeviceRead:
    """What the sampler reads per tick: a file's first line, the measured command's RSS, or
    the first ``fields`` lines of an ODPM file (its timestamp, then one per rail)."""

    path: str
    kind: str = "file"
    fields: int = 1


@dataclass(frozen=True, slots=True)
class SensorPlan:
    """The sampler's reads, the channels they make, and how to decode a tick."""

    reads: tuple[DeviceRead, ...]
    channels: tuple[ChannelInfo, ...]
    decoders: tuple[Decoder, ...]
    warnings: tuple[str, ...] = ()

    @property
    def field_count(self) -> int:
        """Tab-separated values in one tick line."""
        return sum(read.fields for read in self.reads)

    def decode(self, raw: Sequence[str]) -> dict[str, float | None]:
        """One tick's values by channel id; a short tick (torn on the device) gives ``None``s."""
        padded = list(raw) + [""] * (self.field_count - len(raw))
        return {
            channel.id: decoder(padded)
            for channel, decoder in zip(self.channels, self.decoders, strict=True)
        }


class _Builder:
    def __init__(self) -> None:
        self.reads: list[DeviceRead] = []
        self.channels: list[ChannelInfo] = []
        self.decoders: list[Decoder] = []
        self.warnings: list[str] = []
        self._ids: set[str] = set()
        self._fields = 0

    def read(self, path: str, kind: str = "file", fields: int = 1) -> int:
        """Add a read; returns the index of its first field in the tick line."""
        self.reads.append(DeviceRead(path, kind, fields))
        self._fields += fields
        return self._fields - fields

    def unique_id(self, wanted: str) -> str:
        candidate, number = wanted, 2
        while candidate in self._ids:
            candidate = f"{wanted}#{number}"
            number += 1
        self._ids.add(candidate)
        return candidate

    def channel(self, info: ChannelInfo, decoder: Decoder) -> None:
        self.channels.append(info)
        self.decoders.append(decoder)

    def plan(self) -> SensorPlan:
        return SensorPlan(
            tuple(self.reads), tuple(self.channels), tuple(self.decoders), tuple(self.warnings)
        )


def selected(name: str, selection: str | tuple[str, ...]) -> bool:
    if selection == ALL:
        return True
    if selection == NONE or isinstance(selection, str):
        return False
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in selection)


def _one(index: int, convert: Callable[[str], float | None]) -> Decoder:
    return lambda raw: convert(raw[index])


def _trips(zone: ZoneFound) -> tuple[Trip, ...]:
    trips = []
    for trip in sorted(zone.trips, key=lambda t: units.integer(t.index) or 0):
        temp = units.millicelsius(trip.temp)
        if temp is None:
            continue
        trips.append(Trip(type=trip.type, temp_c=temp, hyst_c=units.millicelsius(trip.hyst)))
    return tuple(trips)


def _zone_order(zone: ZoneFound) -> int:
    digits = re.search(r"(\d+)$", zone.path)
    return int(digits.group(1)) if digits else 0


def _thermal(builder: _Builder, probe: ProbeResult, device: DeviceProfile) -> None:
    for zone in sorted(probe.zones, key=_zone_order):
        name = zone.type or zone.path.rsplit("/", 1)[-1]
        if not selected(name, device.thermal_zones):
            continue
        index = builder.read(f"{zone.path}/temp")
        info = ChannelInfo(
            id=builder.unique_id(f"thermal/{name}"),
            kind="temperature",
            unit="C",
            label=name,
            path=f"{zone.path}/temp",
            trips=_trips(zone),
        )
        builder.channel(info, _one(index, units.millicelsius))
    if isinstance(device.thermal_zones, tuple):
        _warn_unmatched(
            builder, "thermal_zones", device.thermal_zones, [z.type for z in probe.zones]
        )


def _cooling(builder: _Builder, probe: ProbeResult, device: DeviceProfile) -> None:
    for cooling in sorted(probe.cooling, key=lambda c: _zone_order(ZoneFound(c.path, "", ""))):
        name = cooling.type or cooling.path.rsplit("/", 1)[-1]
        if not selected(name, device.cooling_devices):
            continue
        index = builder.read(f"{cooling.path}/cur_state")
        max_state = units.integer(cooling.max_state)
        info = ChannelInfo(
            id=builder.unique_id(f"cooling/{name}"),
            kind="cooling",
            unit="state",
            label=name,
            path=f"{cooling.path}/cur_state",
            max_state=max_state,
        )
        builder.channel(info, _one(index, units.state))
    if isinstance(device.cooling_devices, tuple):
        names = [c.type for c in probe.cooling]
        _warn_unmatched(builder, "cooling_devices", device.cooling_devices, names)


def _warn_unmatched(
    builder: _Builder, key: str, patterns: tuple[str, ...], names: list[str]
) -> None:
    for pattern in patterns:
        if not any(fnmatch.fnmatchcase(name, pattern) for name in names):
            found = ", ".join(sorted(set(names))) or "none"
            builder.warnings.append(f"device.{key}: {pattern!r} matches nothing (found: {found})")


def _power_supply(builder: _Builder, probe: ProbeResult, device: DeviceProfile) -> None:
    choice = device.power_supply
    if choice == NONE:
        return
    if choice == AUTO:
        batteries = [s for s in probe.supplies if s.type.lower() == "battery"]
        if not batteries:
            return
        supply = batteries[0]
    else:
        matches = [s for s in probe.supplies if s.name == choice]
        if not matches:
            found = ", ".join(s.name for s in probe.supplies) or "none"
            builder.warnings.append(
                f"device.power_supply: no supply named {choice!r} on the device (found: {found}); "
                "no battery telemetry"
            )
            return
        supply = matches[0]
    group = f"power/{supply.name}"
    files = set(supply.files)

    def read_if(name: str) -> int | None:
        return builder.read(f"{supply.path}/{name}") if name in files else None

    status, current, voltage = read_if("status"), read_if("current_now"), read_if("voltage_now")
    power, charge = read_if("power_now"), read_if("charge_counter")

    def status_of(raw: Sequence[str]) -> float | None:
        return units.status_code(raw[status]) if status is not None else None

    if status is not None:
        builder.channel(
            _info(builder, f"{group}/status", "battery_status", "code", supply, "status",
                  "1 charging, -1 discharging, 0 other"),
            status_of,
        )  # fmt: skip
    if current is not None:
        builder.channel(
            _info(builder, f"{group}/current", "current", "A", supply, "current_now",
                  "|current_now|, + charging, - otherwise (from status)"),
            lambda raw: units.directed_current(units.micro(raw[current]), status_of(raw)),
        )  # fmt: skip
        builder.channel(
            _info(builder, f"{group}/current_now", "current_raw", "A", supply, "current_now",
                  "current_now with the driver's own sign"),
            _one(current, units.micro),
        )  # fmt: skip
    if voltage is not None:
        builder.channel(
            _info(
                builder, f"{group}/voltage", "voltage", "V", supply, "voltage_now", "voltage_now"
            ),
            lambda raw: units.micro(raw[voltage]),
        )
    if power is not None:
        builder.channel(
            _info(builder, f"{group}/power", "power", "W", supply, "power_now", "|power_now|"),
            lambda raw: _absolute(units.micro(raw[power])),
        )
    elif current is not None and voltage is not None:
        builder.channel(
            _info(builder, f"{group}/power", "power", "W", supply, "", "computed |I| x V"),
            lambda raw: units.computed_power(units.micro(raw[current]), units.micro(raw[voltage])),
        )
    if charge is not None:
        builder.channel(
            _info(builder, f"{group}/charge_counter", "charge", "Ah", supply, "charge_counter",
                  "charge_counter (remaining charge)"),
            _one(charge, units.micro),
        )  # fmt: skip


def _odpm(builder: _Builder, probe: ProbeResult, device: DeviceProfile) -> None:
    """Every rail of every ODPM monitor: one read of its energy_value file per tick."""
    if device.power_supply == NONE:
        return
    for monitor in sorted(probe.odpm, key=lambda m: m.path):
        path = f"{monitor.path}/energy_value"
        first = builder.read(path, ODPM_ENERGY, 1 + len(monitor.rails))
        label = _LABEL_SAFE.sub("_", monitor.path.rsplit("/", 1)[-1]) or "odpm"
        # When the monitor last updated its counters: their time, which may trail the tick's.
        clock = ChannelInfo(
            id=builder.unique_id(f"odpm/{label}/time"),
            kind="energy_time",
            unit="s",
            label=f"{monitor.name or 'ODPM'}: time of its counters since boot",
            path=path,
        )
        builder.channel(clock, _one(first, units.odpm_time))
        for offset, rail in enumerate(monitor.rails, start=1):
            info = ChannelInfo(
                id=builder.unique_id(f"odpm/{label}/{_LABEL_SAFE.sub('_', rail) or 'rail'}"),
                kind="energy",
                unit="J",
                label=_odpm_label(monitor, rail),
                path=f"{monitor.path}/energy_value",
            )
            builder.channel(
                info, lambda raw, i=first + offset, r=rail: units.odpm_joules(raw[i], r)
            )


def _odpm_label(monitor: OdpmFound, rail: str) -> str:
    subsystem = monitor.subsystems.get(rail)
    what = f"{rail} ({subsystem})" if subsystem else rail
    return f"{monitor.name or 'ODPM'} {what}: energy since boot"


def _absolute(value: float | None) -> float | None:
    return None if value is None else abs(value)


def _info(
    builder: _Builder,
    wanted: str,
    kind: str,
    unit: str,
    supply: SupplyFound,
    file: str,
    how: str,
) -> ChannelInfo:
    path = f"{supply.path}/{file}" if file else supply.path
    return ChannelInfo(
        id=builder.unique_id(wanted), kind=kind, unit=unit, label=f"{supply.name} {how}", path=path
    )


def _cpufreq(builder: _Builder, probe: ProbeResult, device: DeviceProfile) -> None:
    for policy in sorted(probe.policies, key=lambda p: _zone_order(ZoneFound(p.path, "", ""))):
        if not selected(policy.name, device.cpufreq):
            continue
        index = builder.read(f"{policy.path}/scaling_cur_freq")
        info = ChannelInfo(
            id=builder.unique_id(f"cpufreq/{policy.name}"),
            kind="frequency",
            unit="MHz",
            label=f"{policy.name} scaling_cur_freq",
            path=f"{policy.path}/scaling_cur_freq",
        )
        builder.channel(info, _one(index, units.kilohertz_to_mhz))


def meter_path(root: str, path: str) -> str:
    """Where a meter file is on the device: absolute paths sit under the sysfs root."""
    if not path.startswith("/") or root in ("", "/"):
        return path
    return root.rstrip("/") + path


def meter_label(meter: MeterChannel) -> str:
    if meter.label:
        return _LABEL_SAFE.sub("_", meter.label)
    parts = [p for p in meter.path.split("/") if p]
    return _LABEL_SAFE.sub("_", "-".join(parts[-2:])) or "meter"


def _meters(builder: _Builder, probe: ProbeResult, device: DeviceProfile) -> None:
    for meter in device.power_meter:
        path = meter_path(probe.root, meter.path)
        if path not in probe.meters:
            builder.warnings.append(f"device.power_meter: {meter.path} was not probed")
            continue
        if units.number(probe.meters[path]) is None:
            builder.warnings.append(
                f"device.power_meter: {path} could not be read on the device; it will show "
                "as unavailable"
            )
        index = builder.read(path)
        label = meter_label(meter)
        info = ChannelInfo(
            id=builder.unique_id(f"meter/{label}/{meter.quantity}"),
            kind=meter.quantity,
            unit={"power": "W", "current": "A", "voltage": "V"}[meter.quantity],
            label=f"{label} ({meter.unit})",
            path=path,
        )
        unit = meter.unit
        builder.channel(info, lambda raw, i=index, u=unit: units.meter(raw[i], u))


def _memory(builder: _Builder, page_size: int) -> None:
    index = builder.read("", COMMAND_RSS)
    info = ChannelInfo(
        id="memory/command_rss",
        kind="memory",
        unit="MB",
        label="resident memory of the measured command (MB of 2^20 bytes, sampled)",
        path="/proc/<pid>/statm",
    )
    builder.channel(info, lambda raw: units.pages_to_mb(raw[index], page_size))


def plan_sensors(probe: ProbeResult, device: DeviceProfile) -> SensorPlan:
    """The channels to sample on this device, in a stable order."""
    builder = _Builder()
    _thermal(builder, probe, device)
    _cooling(builder, probe, device)
    _power_supply(builder, probe, device)
    _odpm(builder, probe, device)
    _meters(builder, probe, device)
    _cpufreq(builder, probe, device)
    _memory(builder, probe.page_size)
    return builder.plan()

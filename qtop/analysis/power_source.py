"""Where power comes from: the channels of a board's power sources, and the best of them.

A recording can hold several: an external meter, Android ODPM rail counters,
and a battery supply with its charge counter, power reading or current and
voltage. ``select_power_source`` picks one (docs/analysis.md, section 3) and
says why it passed over the others.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass

from qtop.analysis.numeric import median
from qtop.analysis.series import ChannelSeries, value_changes
from qtop.errors import UsageError
from qtop.events import ChannelInfo

UNIT_SCALE: dict[str, float] = {
    "W": 1.0,
    "mW": 1e-3,
    "uW": 1e-6,
    "A": 1.0,
    "mA": 1e-3,
    "uA": 1e-6,
    "V": 1.0,
    "mV": 1e-3,
    "uV": 1e-6,
}
# Cumulative quantities, to joules (energy) and coulombs (charge).
COUNTER_SCALE: dict[str, float] = {"J": 1.0, "mJ": 1e-3, "uJ": 1e-6, "Ah": 3600.0, "mAh": 3.6}
STEP_KINDS = ("power", "current", "voltage", "battery_status")
COUNTER_KINDS = ("energy", "charge")
POWER_KINDS = (*STEP_KINDS, *COUNTER_KINDS, "current_raw", "energy_time")
# A charge counter that moves less often than this is too coarse to integrate from.
MAX_COUNTER_REFRESH_S = 2.0
ODPM_GROUP = "odpm"

METHOD_POWER = "power"
METHOD_CURRENT_VOLTAGE = "current x voltage"
METHOD_ENERGY_COUNTERS = "energy counters"
METHOD_CHARGE_COUNTER = "charge counter x voltage"
COUNTER_METHODS = (METHOD_ENERGY_COUNTERS, METHOD_CHARGE_COUNTER)


@dataclass(frozen=True, slots=True)
class PowerSource:
    """The channels power or energy comes from."""

    group: str
    method: str
    channels: tuple[str, ...]
    status_channel: str | None

    @property
    def is_meter(self) -> bool:
        return self.group.startswith("meter/")

    @property
    def is_battery(self) -> bool:
        """Power measured at a battery: a charger's current would flow into it."""
        return self.group.startswith("power/")

    @property
    def is_counter(self) -> bool:
        return self.method in COUNTER_METHODS

    def describe(self) -> str:
        if self.method == METHOD_ENERGY_COUNTERS:
            rails = ", ".join(c.rsplit("/", 1)[-1] for c in self.channels)
            return (
                f"on-device energy counters {self.group} (sum of {len(self.channels)} ODPM "
                f"rail(s): {rails})"
            )
        what = "external meter" if self.is_meter else "supply"
        how = {
            METHOD_POWER: "power",
            METHOD_CURRENT_VOLTAGE: "|I| x V",
            METHOD_CHARGE_COUNTER: "charge counter x V",
        }[self.method]
        return f"{what} {self.group} ({how}: {', '.join(self.channels)})"


def _groups(channels: Mapping[str, ChannelInfo]) -> dict[str, dict[str, ChannelInfo]]:
    groups: dict[str, dict[str, ChannelInfo]] = {}
    for channel in channels.values():
        if channel.kind in (*STEP_KINDS, "charge") and "/" in channel.id:
            group = channel.id.rsplit("/", 1)[0]
            groups.setdefault(group, {}).setdefault(channel.kind, channel)
    return groups


def _rails(
    channels: Mapping[str, ChannelInfo], series: Mapping[str, ChannelSeries], prefix: str
) -> tuple[str, ...]:
    """Energy-counter channels with data, whose id is ``prefix`` or lies under it."""
    return tuple(
        sorted(
            c.id
            for c in channels.values()
            if c.kind == "energy"
            and c.unit in COUNTER_SCALE
            and (c.id == prefix or c.id.startswith(prefix + "/"))
            and len(series.get(c.id, ())) > 0
        )
    )


def refresh_period(series: ChannelSeries) -> float | None:
    """Median time between changes of a series' value: how often its sensor really updates."""
    changes = value_changes(series.times, series.values, -math.inf, math.inf)
    intervals = [series.times[b] - series.times[a] for a, b in itertools.pairwise(changes)]
    return median(intervals) if len(intervals) >= 2 else None


def select_power_source(
    channels: Mapping[str, ChannelInfo],
    series: Mapping[str, ChannelSeries],
    prefer: str | None = None,
) -> tuple[PowerSource | None, list[str]]:
    """The best power source and notes on the ones passed over.

    Order: external meters (they measure the board, and the profile asked for
    them), then the board's on-device energy counters (ODPM rails), then
    supplies; within a supply its charge counter (integrated on the device)
    before a power reading, before |I| x V. ``prefer`` names a group
    (``meter/ina226``, ``power/battery``, ``odpm``) or an ODPM rail
    (``odpm/<device>/<rail>``) to use instead.
    """
    groups = _groups(channels)
    all_rails = _rails(channels, series, ODPM_GROUP)
    if prefer is not None and prefer not in groups and not _rails(channels, series, prefer):
        names = [*sorted(groups), *([ODPM_GROUP] if all_rails else []), *all_rails]
        raise UsageError(
            f"power source {prefer!r} is not among the recording's channels",
            f"use one of: {', '.join(names) or 'none'}",
        )
    notes: list[str] = []
    if prefer is not None and prefer not in groups:
        rails = _rails(channels, series, prefer)
        return PowerSource(prefer, METHOD_ENERGY_COUNTERS, rails, None), notes
    if prefer is not None:
        order = [prefer]
    else:
        meters = sorted(g for g in groups if g.startswith("meter/"))
        supplies = sorted(g for g in groups if not g.startswith("meter/"))
        order = [*meters, *([ODPM_GROUP] if all_rails else []), *supplies]

    def usable(kind: str, members: dict[str, ChannelInfo]) -> bool:
        info = members.get(kind)
        scales = COUNTER_SCALE if kind in COUNTER_KINDS else UNIT_SCALE
        if info is None or info.unit not in scales:
            if info is not None:
                notes.append(f"{info.id}: unit {info.unit!r} is not one qtop converts; ignored")
            return False
        return len(series.get(info.id, ())) > 0

    for group in order:
        if group == ODPM_GROUP and group not in groups:
            return PowerSource(ODPM_GROUP, METHOD_ENERGY_COUNTERS, all_rails, None), notes
        members = groups[group]
        status = members.get("battery_status")
        status_id = status.id if status else None
        if usable("charge", members) and usable("voltage", members):
            charge = members["charge"].id
            if _charge_counter_usable(series[charge], notes, charge):
                ids = (charge, members["voltage"].id)
                return PowerSource(group, METHOD_CHARGE_COUNTER, ids, status_id), notes
        if usable("power", members):
            return PowerSource(group, METHOD_POWER, (members["power"].id,), status_id), notes
        if usable("current", members) and usable("voltage", members):
            ids = (members["current"].id, members["voltage"].id)
            return PowerSource(group, METHOD_CURRENT_VOLTAGE, ids, status_id), notes
        if "current" in members and "voltage" not in members:
            notes.append(f"{group} reports current but no voltage: power unknown")
    return None, notes


def _charge_counter_usable(data: ChannelSeries, notes: list[str], channel: str) -> bool:
    period = refresh_period(data)
    if period is None or period > MAX_COUNTER_REFRESH_S:
        every = "fewer than three times" if period is None else f"only every {period:.2g} s"
        notes.append(
            f"{channel} changed {every}: too coarse to integrate from; using the supply's "
            "power reading instead"
        )
        return False
    if data.values[-1] > data.values[0]:
        notes.append(
            f"{channel} rose over the session (charging, or a counter that counts up): using "
            "the supply's power reading instead"
        )
        return False
    return True

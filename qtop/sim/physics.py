"""The thermal and power model of the simulated board: pure, stepped by the caller.

Each zone relaxes first-order towards a target temperature set by ambient,
NPU power and CPU load. The cdsp cooling device follows a step_wise governor
on the hottest NSP zone: above the passive trip and still rising it steps up,
below trip minus hysteresis it steps down. Each step slows the NSP clock,
which raises inference latency and lowers NPU power, so a sustained run
settles into a throttled plateau after an onset, as on a real board.

Time here is *thermal* time; the board multiplies wall time by ``time_scale``
before calling :meth:`ThermalModel.step`, so tests can compress ten minutes
into seconds. Nothing in this module reads a clock.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from qtop.sim.config import BatteryConfig, SimConfig


@dataclass(frozen=True, slots=True)
class BatteryReading:
    percent: float
    current_ma: float
    volts: float

    @property
    def discharging(self) -> bool:
        return self.current_ma > 0


class ThermalModel:
    """Zone temperatures, the cdsp cooling state and the battery, advanced by :meth:`step`."""

    def __init__(self, config: SimConfig) -> None:
        self.config = config
        self.zones = config.zones
        ambient = config.thermal.ambient_c
        self.temps_c = [ambient + zone.idle_rise_c for zone in self.zones]
        self._nsp_indices = [i for i, z in enumerate(self.zones) if z.name.startswith("nsp-0")]
        if not self._nsp_indices:
            self._nsp_indices = [i for i, z in enumerate(self.zones) if z.name.startswith("nsp")]
        self.cdsp_state = 0
        self._since_poll_s = 0.0
        self._last_poll_temp_c = self.nsp_temp_c()
        self.battery_used_mah = 0.0
        self.npu_load = 0.0
        self.cpu_load = 0.0

    # --- derived figures ----------------------------------------------------

    def nsp_temp_c(self) -> float:
        """The hottest NSP zone (the one the cdsp governor watches)."""
        return max(self.temps_c[i] for i in self._nsp_indices)

    def latency_multiplier(self) -> float:
        return 1.0 + self.config.thermal.latency_per_state * self.cdsp_state

    def npu_power_factor(self) -> float:
        """NPU power relative to unthrottled: clock as 1/multiplier, power as its square."""
        return 1.0 / self.latency_multiplier() ** 2

    def target_c(self, index: int) -> float:
        zone = self.zones[index]
        return (
            self.config.thermal.ambient_c
            + zone.idle_rise_c
            + zone.npu_rise_c * self.npu_load * self.npu_power_factor()
            + zone.cpu_rise_c * self.cpu_load
        )

    def battery(self) -> BatteryReading | None:
        battery = self.config.battery
        if battery is None:
            return None
        return battery_reading(battery, self.battery_used_mah, self.current_ma())

    def input_power_w(self) -> float | None:
        """What the board's external power meter measures (``None`` without a meter)."""
        meter = self.config.meter
        if meter is None:
            return None
        return (
            meter.idle_w
            + meter.npu_w * self.npu_load * self.npu_power_factor()
            + meter.cpu_w * self.cpu_load
        )

    def current_ma(self) -> float:
        return sum(self.current_parts_ma().values())

    def current_parts_ma(self) -> dict[str, float]:
        """The battery current by what draws it: the NPU, and the rest of the system."""
        battery = self.config.battery
        if battery is None:
            return {"npu": 0.0, "system": 0.0}
        return {
            "npu": battery.npu_ma * self.npu_load * self.npu_power_factor(),
            "system": battery.idle_ma + battery.cpu_ma * self.cpu_load,
        }

    def power_parts_w(self) -> dict[str, float]:
        """The battery's power (terminal voltage x current) split like its current."""
        reading = self.battery()
        if reading is None:
            return {"npu": 0.0, "system": 0.0}
        return {part: ma / 1000.0 * reading.volts for part, ma in self.current_parts_ma().items()}

    # --- stepping -----------------------------------------------------------

    def step(self, dt_s: float, npu_load: float, cpu_load: float) -> None:
        """Advance ``dt_s`` thermal seconds with the NPU busy ``npu_load`` of the time (0..1)."""
        if dt_s <= 0:
            return
        self.npu_load = min(1.0, max(0.0, npu_load))
        self.cpu_load = min(1.0, max(0.0, cpu_load))
        polling = self.config.thermal.polling_s
        remaining = dt_s
        # Sub-step at the governor's polling period so a large time_scale cannot
        # skip a trip crossing or let the temperature overshoot unseen.
        while remaining > 1e-12:
            chunk = min(remaining, polling - self._since_poll_s)
            self._advance(chunk)
            remaining -= chunk
            self._since_poll_s += chunk
            if self._since_poll_s >= polling - 1e-12:
                self._since_poll_s = 0.0
                self._poll_governor()

    def _advance(self, dt_s: float) -> None:
        for index, zone in enumerate(self.zones):
            alpha = 1.0 - math.exp(-dt_s / zone.tau_s)
            self.temps_c[index] += (self.target_c(index) - self.temps_c[index]) * alpha
        self.battery_used_mah += self.current_ma() * dt_s / 3600.0

    def _poll_governor(self) -> None:
        thermal = self.config.thermal
        temp = self.nsp_temp_c()
        rising = temp > self._last_poll_temp_c
        self._last_poll_temp_c = temp
        self.cdsp_state = next_cdsp_state(
            self.cdsp_state,
            temp,
            rising,
            thermal.passive_trip_c,
            thermal.hysteresis_c,
            thermal.cdsp_max_state,
        )


def next_cdsp_state(
    state: int, temp_c: float, rising: bool, trip_c: float, hysteresis_c: float, max_state: int
) -> int:
    """One step_wise decision: up while hot and rising, down once below trip minus hysteresis."""
    if temp_c >= trip_c and rising:
        return min(max_state, state + 1)
    if temp_c < trip_c - hysteresis_c:
        return max(0, state - 1)
    return state


def battery_reading(battery: BatteryConfig, used_mah: float, current_ma: float) -> BatteryReading:
    """State of charge from charge used; terminal voltage from a linear OCV minus I·R."""
    percent = max(0.0, battery.start_percent - 100.0 * used_mah / battery.capacity_mah)
    open_circuit = battery.empty_volts + (battery.full_volts - battery.empty_volts) * percent / 100
    volts = open_circuit - current_ma / 1000.0 * battery.internal_resistance_ohm
    return BatteryReading(percent=percent, current_ma=current_ma, volts=volts)

"""The physics loop: steps the thermal model and refreshes sysfs at each sensor's period.

:meth:`SensorLoop.tick` does one tick for a given time and is what tests
drive with a fake clock; :class:`SensorThread` calls it on an absolute
schedule in a background thread and accounts its own CPU time, because the
loop runs next to the benchmarks it serves.
"""

from __future__ import annotations

import bisect
import math
import random
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from qtop.sim.config import SimConfig
from qtop.sim.npu import NpuArbiter
from qtop.sim.physics import ThermalModel
from qtop.sim.sysfs import SysfsPaths, build_tree, write_atomic

# Share of a core a running tool process keeps busy on the host CPUs.
_CPU_LOAD_PER_TOOL = 0.3
# How much of the battery's true energy curve is kept for tests (2 h of 50 ms ticks).
_ENERGY_HISTORY = 144_000
# The battery-current-limit driver's zones follow the fuel gauge's pace.
RAW_ZONE_REFRESH_S = 1.0


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What a simulated tool needs from physics at one instant."""

    latency_multiplier: float
    cdsp_state: int
    nsp_temp_c: float


def sensor_millidegrees(
    temp_c: float, rng: random.Random, previous: int | None, noise_mc: int, resolution_mc: int
) -> int:
    """A tsens-like reading: noisy, quantised, and always different from the previous one.

    Forcing a change at every refresh keeps the refresh period observable even
    at a steady temperature, which qtop's refresh-rate estimate relies on.
    """
    raw = temp_c * 1000.0 + rng.gauss(0.0, noise_mc)
    value = round(raw / resolution_mc) * resolution_mc
    if value == previous:
        value += resolution_mc if raw >= value else -resolution_mc
    return value


def _periods_elapsed(elapsed: float, period: float) -> int:
    return int(elapsed / period + 1e-9)


class SensorLoop:
    """One board's model plus the schedule on which each sysfs file is rewritten."""

    def __init__(
        self,
        config: SimConfig,
        sysfs_root: Path,
        npu: NpuArbiter,
        seed: int,
        time_scale: float,
        start: float,
    ) -> None:
        self.config = config
        self.model = ThermalModel(config)
        self.npu = npu
        self.time_scale = time_scale
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self._last_mc: list[int | None] = [None] * len(config.zones)
        initial = [self._reading(i) for i in range(len(config.zones))]
        self.paths: SysfsPaths = build_tree(sysfs_root, config, initial)
        self._last_time = start
        self._start = start
        # Refreshes are counted, not accumulated, so float error never shifts a period.
        self._zone_refreshes = [0] * len(config.zones)
        self._battery_refreshes = -1
        self._raw_zone_refreshes = -1
        self._meter_refreshes = -1
        self._next_cpufreq = start
        self._written_cdsp = 0
        self._written_freqs: list[int] = [p.idle_khz for p in config.cpufreq]
        self.writes = 0
        # Charge drawn and energy per ODPM rail, integrated over device (wall) time, as a
        # gauge's coulomb counter and a power monitor do; capacity drains in thermal time.
        self._charge_used_uah = 0.0
        # What the gauge averages between its refreshes: charge (µAh), volt-seconds, seconds.
        self._gauge_window = [0.0, 0.0, 0.0]
        self._rail_uws = self._rails_since_boot()
        self._energy_j = 0.0
        self._energy_history: deque[tuple[float, float]] = deque(
            [(start, 0.0)], maxlen=_ENERGY_HISTORY
        )
        # The fuel gauge files exist from the start, as on a real board.
        self._refresh_battery(start)
        self._write_odpm(start)
        self._refresh_raw_zones(start)
        self._refresh_meter(start)

    def _reading(self, index: int) -> int:
        thermal = self.config.thermal
        value = sensor_millidegrees(
            self.model.temps_c[index],
            self._rng,
            self._last_mc[index],
            thermal.sensor_noise_mc,
            thermal.sensor_resolution_mc,
        )
        self._last_mc[index] = value
        return value

    def snapshot(self) -> Snapshot:
        with self._lock:
            return Snapshot(
                latency_multiplier=self.model.latency_multiplier(),
                cdsp_state=self.model.cdsp_state,
                nsp_temp_c=self.model.nsp_temp_c(),
            )

    def tick(self, now: float) -> None:
        elapsed = now - self._last_time
        if elapsed <= 0:
            return
        self._last_time = now
        npu_load = self.npu.take_busy_seconds(now) / elapsed
        cpu_load = _CPU_LOAD_PER_TOOL * self.npu.active_tools
        with self._lock:
            self.model.step(elapsed * self.time_scale, npu_load, cpu_load)
            self._integrate_battery(now, elapsed)
        self._refresh_zones(now)
        self._refresh_cooling()
        self._refresh_battery(now)
        self._write_odpm(now)
        self._refresh_raw_zones(now)
        self._refresh_meter(now)
        self._refresh_cpufreq(now, cpu_load)

    # --- the battery's charge and energy --------------------------------------

    def _rails_since_boot(self) -> list[float]:
        """Each rail's counter at start: the board idled since boot."""
        odpm = self.config.odpm
        if odpm is None:
            return []
        parts = self.model.power_parts_w()
        return [parts[rail.carries] * odpm.uptime_at_start_s * 1e6 for rail in odpm.rails]

    def _integrate_battery(self, now: float, elapsed: float) -> None:
        """The tick's current and power, held over the tick: the simulator's exact truth."""
        if self.config.battery is None:
            return
        drawn_uah = self.model.current_ma() * 1000.0 * elapsed / 3600.0
        self._charge_used_uah += drawn_uah
        reading = self.model.battery()
        volts = reading.volts if reading is not None else 0.0
        window = self._gauge_window
        window[0] += drawn_uah
        window[1] += volts * elapsed
        window[2] += elapsed
        parts = self.model.power_parts_w()
        if self.config.odpm is not None:
            for index, rail in enumerate(self.config.odpm.rails):
                self._rail_uws[index] += parts[rail.carries] * elapsed * 1e6
        self._energy_j += sum(parts.values()) * elapsed
        self._energy_history.append((now, self._energy_j))

    def true_energy_j(self, t_from: float, t_to: float) -> float:
        """Energy the battery delivered between two device times (``time.monotonic``).

        Power is constant within a physics tick, so the cumulative energy is
        exact at tick times and linear between them.
        """
        with self._lock:
            history = list(self._energy_history)
        if not history or t_from < history[0][0] or t_to > history[-1][0]:
            raise ValueError(f"[{t_from}, {t_to}] is outside the kept energy history")
        return _interpolate(history, t_to) - _interpolate(history, t_from)

    def _write_odpm(self, now: float) -> None:
        odpm = self.config.odpm
        if odpm is None or self.paths.odpm_dir is None:
            return
        with self._lock:
            counters = list(self._rail_uws)
        elapsed_ms = round((now - self._start) * 1000)
        lines = [f"t={round(now * 1000)}"]
        for index, (rail, uws) in enumerate(zip(odpm.rails, counters, strict=True)):
            lines.append(f"CH{index}(T={elapsed_ms})[{rail.name}], {int(uws)}")
        self._write(self.paths.odpm_dir / "energy_value", "\n".join(lines))

    def _refresh_zones(self, now: float) -> None:
        for index, zone in enumerate(self.config.zones):
            due = _periods_elapsed(now - self._start, zone.refresh_s)
            if due > self._zone_refreshes[index]:
                self._zone_refreshes[index] = due
                self._write(self.paths.zone_temps[index], self._reading(index))

    def _refresh_cooling(self) -> None:
        state = self.model.cdsp_state
        if state != self._written_cdsp:
            self._written_cdsp = state
            self._write(self.paths.cdsp_cur_state, state)

    def _refresh_battery(self, now: float) -> None:
        battery_config = self.config.battery
        battery = self.model.battery()
        if battery is None or battery_config is None or self.paths.battery_dir is None:
            return
        due = _periods_elapsed(now - self._start, battery_config.refresh_s)
        if due <= self._battery_refreshes:
            return
        self._battery_refreshes = due
        directory = self.paths.battery_dir
        # Like a coulomb-counting gauge: the mean current and voltage since its last refresh.
        with self._lock:
            charge_uah, volt_seconds, span = self._gauge_window
            self._gauge_window = [0.0, 0.0, 0.0]
        current_ma = charge_uah * 3.6 / span if span > 0 else battery.current_ma
        volts = volt_seconds / span if span > 0 else battery.volts
        noise = self._rng.randint(-battery_config.noise_ua, battery_config.noise_ua)
        current_ua = round(current_ma * 1000) + noise
        sign = (
            battery_config.discharge_sign if battery.discharging else -battery_config.discharge_sign
        )
        self._write(directory / "current_now", sign * current_ua)
        self._write(directory / "voltage_now", round(volts * 1_000_000))
        self._write(directory / "capacity", round(battery.percent))
        self._write(directory / "status", "Discharging" if battery.discharging else "Full")
        if battery_config.charge_counter:
            start_uah = battery_config.capacity_mah * battery_config.start_percent * 10.0
            with self._lock:
                left = max(0.0, start_uah - self._charge_used_uah)
            self._write(directory / "charge_counter", round(left))

    def _refresh_raw_zones(self, now: float) -> None:
        """The battery-current-limit zones, once a second from the battery's state."""
        due = _periods_elapsed(now - self._start, RAW_ZONE_REFRESH_S)
        if due <= self._raw_zone_refreshes or not self.config.raw_zones:
            return
        self._raw_zone_refreshes = due
        battery = self.model.battery()
        for spec, path in zip(self.config.raw_zones, self.paths.raw_zone_temps, strict=True):
            if spec.reading == "offline":
                continue
            value = 0
            if battery is not None:
                value = {
                    "soc_drop": round(100 - battery.percent),
                    "battery_mv": round(battery.volts * 1000),
                    "battery_ma": round(battery.current_ma),
                }[spec.reading]
            self._write(path, value)

    def _refresh_meter(self, now: float) -> None:
        """The INA2xx: power (µW), current (mA) and bus voltage (mV) from one conversion."""
        meter = self.config.meter
        directory = self.paths.meter_dir
        watts = self.model.input_power_w()
        if meter is None or directory is None or watts is None:
            return
        due = _periods_elapsed(now - self._start, meter.refresh_s)
        if due <= self._meter_refreshes:
            return
        self._meter_refreshes = due
        watts = max(0.0, watts + self._rng.gauss(0.0, meter.noise_mw / 1000.0))
        # The rail sags under load: solve P = V * I with V = rail - I * R.
        rail, ohm = meter.rail_volts, meter.source_ohm
        amps = (rail - math.sqrt(max(0.0, rail * rail - 4 * ohm * watts))) / (2 * ohm)
        volts = rail - amps * ohm
        self._write(directory / "power1_input", round(watts * 1e6))
        self._write(directory / "curr1_input", round(amps * 1000))
        self._write(directory / "in1_input", round(volts * 1000))
        self._write(directory / "in0_input", round(amps * meter.shunt_ohm * 1000))

    def _refresh_cpufreq(self, now: float, cpu_load: float) -> None:
        if now < self._next_cpufreq:
            return
        self._next_cpufreq = now + self.config.cpufreq_refresh_s
        for index, policy in enumerate(self.config.cpufreq):
            khz = policy.busy_khz if cpu_load > 0 else policy.idle_khz
            if khz != self._written_freqs[index]:
                self._written_freqs[index] = khz
                self._write(self.paths.cpufreq_cur[index], khz)

    def _write(self, path: Path, value: object) -> None:
        write_atomic(path, f"{value}\n")
        self.writes += 1


def _interpolate(points: list[tuple[float, float]], t: float) -> float:
    k = bisect.bisect_right(points, (t, float("inf"))) - 1
    if k >= len(points) - 1:
        return points[-1][1]
    (t0, e0), (t1, e1) = points[k], points[k + 1]
    return e0 + (e1 - e0) * (t - t0) / (t1 - t0)


class SensorThread:
    """Runs :meth:`SensorLoop.tick` every ``physics_tick_s`` until stopped; measures its CPU."""

    def __init__(self, loop: SensorLoop, clock: Callable[[], float] = time.monotonic) -> None:
        self.loop = loop
        self._clock = clock
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="qtop-sim-physics", daemon=True)
        self.cpu_seconds = 0.0
        self.wall_seconds = 0.0
        self.ticks = 0

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)

    @property
    def cpu_percent(self) -> float:
        """The loop's CPU time as a percentage of one core over its lifetime."""
        return 100.0 * self.cpu_seconds / self.wall_seconds if self.wall_seconds else 0.0

    def _run(self) -> None:
        period = self.loop.config.physics_tick_s
        started = self._clock()
        next_tick = started + period
        while not self._stop.wait(max(0.0, next_tick - self._clock())):
            cpu_before = time.thread_time()
            now = self._clock()
            try:
                self.loop.tick(now)
            except OSError:
                # The state directory was removed under us (a test's tmp_path); stop quietly.
                break
            self.cpu_seconds += time.thread_time() - cpu_before
            self.ticks += 1
            self.wall_seconds = self._clock() - started
            next_tick += period
            if next_tick < now:
                next_tick = now + period

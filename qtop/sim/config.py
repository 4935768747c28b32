"""The simulated board's knobs: zones, thermal constants, latency, battery, Genie.

Everything is a frozen dataclass so a test can build a variant with
``dataclasses.replace`` and get exactly the numbers it asserts on. The
defaults describe an IQ-9075 EVK ("lemans", upstream kernel names, an
external power meter) and a pair of Snapdragon glasses (an Android vendor
kernel: zone names without ``-thermal``, battery-current-limit zones, an
offline sensor, Android's cdsp cooling devices, no bash) well enough to look
real; none of them were measured on hardware (see docs/assumptions.md,
"Simulated board").
"""

from __future__ import annotations

from dataclasses import dataclass, field

from qtop.errors import UsageError

VARIANTS = ("evk", "glasses")
LATENCY_DISTRIBUTIONS = ("lognormal", "normal", "fixed")
# What a zone the thermal model does not heat reads (see RawZoneSpec).
RAW_ZONE_READINGS = ("offline", "soc_drop", "battery_mv", "battery_ma")
# The cooling device the step_wise governor drives on the hottest NSP zone.
THROTTLING_DEVICE = "cdsp"


@dataclass(frozen=True, slots=True)
class ZoneSpec:
    """One thermal zone: how hard each heat source pushes it and how fast it follows.

    The steady-state temperature is ``ambient + idle_rise + npu_rise * npu_power
    + cpu_rise * cpu_load``; the zone approaches it with time constant ``tau_s``
    (thermal seconds, before ``time_scale``).
    """

    name: str
    idle_rise_c: float
    npu_rise_c: float
    cpu_rise_c: float
    tau_s: float
    refresh_s: float


@dataclass(frozen=True, slots=True)
class RawZoneSpec:
    """A thermal zone whose ``temp`` is not a heated temperature.

    ``offline``: a sensor that is not running reads -273000 (absolute zero),
    as offline RF zones do on Android. The others are the battery-current-limit
    driver's zones, which use the thermal framework for other quantities:
    ``soc_drop`` (``socd``, 100 - state of charge, %), ``battery_mv``
    (``vbat``, mV) and ``battery_ma`` (``ibat-lvl0``, mA).
    """

    name: str
    reading: str


@dataclass(frozen=True, slots=True)
class CoolingSpec:
    """A cooling device; only ``THROTTLING_DEVICE`` moves, the others stay at 0.

    The throttling device's ``max_state`` is ``ThermalConfig.cdsp_max_state``
    (the governor's), so it is left ``None`` here.
    """

    name: str
    max_state: int | None = None


# Upstream lemans: the CPU frequency limits and the CDSP's thermal mitigation device.
LEMANS_COOLING = (
    CoolingSpec("cpufreq-cpu0", 20),
    CoolingSpec("cpufreq-cpu4", 20),
    CoolingSpec(THROTTLING_DEVICE),
)


@dataclass(frozen=True, slots=True)
class MeterConfig:
    """An INA2xx-style power monitor on the board's input rail, seen as a hwmon device.

    Power is ``idle_w + npu_w * npu_load * power_factor + cpu_w * cpu_load``;
    the bus voltage sags by ``current * source_ohm``. hwmon units: power in
    µW, current in mA, voltage in mV.
    """

    name: str = "ina226"
    hwmon: str = "hwmon0"
    rail_volts: float = 12.0
    source_ohm: float = 0.05
    shunt_ohm: float = 0.005
    idle_w: float = 9.5
    npu_w: float = 7.0
    cpu_w: float = 2.5
    refresh_s: float = 0.1
    noise_mw: float = 30.0


@dataclass(frozen=True, slots=True)
class ThermalConfig:
    """Ambient, trip points and the cdsp cooling device (a step_wise governor)."""

    ambient_c: float = 35.0
    passive_trip_c: float = 105.0
    second_trip_c: float = 115.0
    critical_trip_c: float = 125.0
    hysteresis_c: float = 5.0
    polling_s: float = 1.0
    cdsp_max_state: int = 12
    # Each cdsp step lowers the NSP clock; latency is multiplied by
    # 1 + latency_per_state * state and NSP power scales with the clock squared.
    latency_per_state: float = 0.08
    sensor_noise_mc: int = 150
    sensor_resolution_mc: int = 100


@dataclass(frozen=True, slots=True)
class LatencyConfig:
    """Per-inference latency: a seeded distribution around each model's median."""

    distribution: str = "lognormal"
    sigma: float = 0.03
    median_scale: float = 1.0
    # Extra microseconds on the first executes of every process (HVX/HMX power-on,
    # VTCM acquire), so warm-up is visible as on a real board.
    warmup_extra_us: tuple[float, ...] = (450.0, 60.0)
    init_ms: float = 18.0
    deinit_ms: float = 2.6
    # How much per-op scheduler wait grows per cdsp step (fraction of the cool value).
    wait_growth_per_state: float = 0.15


@dataclass(frozen=True, slots=True)
class BatteryConfig:
    """A small battery discharging through a fuel gauge that refreshes slowly.

    ``discharge_sign`` is the sign ``current_now`` takes while discharging:
    +1 as some Android vendors (and Qualcomm's pm8150b gauge) report it, -1 as
    the kernel ABI says. The gauge refreshes ``current_now``, ``voltage_now``,
    ``capacity``, ``status`` and ``charge_counter`` (µAh left) every
    ``refresh_s`` of device time.
    """

    capacity_mah: float = 300.0
    start_percent: float = 87.0
    idle_ma: float = 140.0
    npu_ma: float = 420.0
    cpu_ma: float = 90.0
    full_volts: float = 4.35
    empty_volts: float = 3.45
    internal_resistance_ohm: float = 0.18
    refresh_s: float = 1.0
    noise_ua: int = 3000
    discharge_sign: int = 1
    charge_counter: bool = True


@dataclass(frozen=True, slots=True)
class OdpmRail:
    """One rail of the on-device power monitor, carrying part of the battery's power.

    ``carries`` is ``npu`` (the NPU's share) or ``system`` (idle and CPU): the
    rails of one monitor add up to the battery's power exactly.
    """

    name: str
    subsystem: str
    carries: str


@dataclass(frozen=True, slots=True)
class OdpmConfig:
    """An Android ODPM-style iio device: cumulative µWs per rail, rewritten every physics tick."""

    name: str = "qtop-sim-odpm"
    rails: tuple[OdpmRail, ...] = (
        OdpmRail("VDD_NSP", "NSP", "npu"),
        OdpmRail("VSYS_PWR_SOC", "SoC", "system"),
    )
    # Counters run since boot; the board is taken to have been up this long at idle.
    uptime_at_start_s: float = 3600.0


@dataclass(frozen=True, slots=True)
class GenieConfig:
    """genie-t2t-run: load time, prefill and decode rates before throttling."""

    init_ms: float = 400.0
    prefill_tokens_per_s: float = 48.05
    decode_tokens_per_s: float = 20.62
    generated_tokens: int = 8
    free_ms: float = 30.0


@dataclass(frozen=True, slots=True)
class CpufreqPolicy:
    name: str
    idle_khz: int
    busy_khz: int
    max_khz: int


@dataclass(frozen=True, slots=True)
class SimConfig:
    """Everything the simulated board does, for one variant."""

    variant: str = "evk"
    zones: tuple[ZoneSpec, ...] = ()
    thermal: ThermalConfig = field(default_factory=ThermalConfig)
    latency: LatencyConfig = field(default_factory=LatencyConfig)
    battery: BatteryConfig | None = None
    odpm: OdpmConfig | None = None
    genie: GenieConfig = field(default_factory=GenieConfig)
    cpufreq: tuple[CpufreqPolicy, ...] = ()
    raw_zones: tuple[RawZoneSpec, ...] = ()
    cooling: tuple[CoolingSpec, ...] = LEMANS_COOLING
    meter: MeterConfig | None = None
    # False: the sessions' PATH has the usual tools but no bash (and no python3),
    # as on Android, so the device agent takes its POSIX sh path.
    bash_on_path: bool = True
    # What systemd's timedatectl says of NTP (the probe asks); None: no systemd, as on
    # Android, and no timedatectl on the PATH.
    ntp_synchronized: bool | None = True
    physics_tick_s: float = 0.05
    # cpufreq is re-read "instantly" on a real board; the sim rewrites it every tick.
    cpufreq_refresh_s: float = 0.05

    def validate(self) -> SimConfig:
        if self.variant not in VARIANTS:
            raise UsageError(
                f"unknown simulated board variant {self.variant!r}",
                f"use one of: {', '.join(VARIANTS)}",
            )
        if self.latency.distribution not in LATENCY_DISTRIBUTIONS:
            raise UsageError(
                f"unknown latency distribution {self.latency.distribution!r}",
                f"use one of: {', '.join(LATENCY_DISTRIBUTIONS)}",
            )
        if not self.zones or not any(zone.name.startswith("nsp") for zone in self.zones):
            raise UsageError("the simulated board needs at least one nsp-* thermal zone")
        if self.physics_tick_s <= 0 or any(zone.tau_s <= 0 for zone in self.zones):
            raise UsageError("physics_tick_s and every zone's tau_s must be > 0")
        if self.battery is not None and self.battery.discharge_sign not in (1, -1):
            raise UsageError("battery.discharge_sign must be 1 or -1")
        if self.odpm is not None:
            if self.battery is None:
                raise UsageError("the ODPM rails split the battery's power: give a battery too")
            if any(rail.carries not in ("npu", "system") for rail in self.odpm.rails):
                raise UsageError("an ODPM rail carries 'npu' or 'system'")
        for raw in self.raw_zones:
            if raw.reading not in RAW_ZONE_READINGS:
                raise UsageError(
                    f"raw zone {raw.name!r}: unknown reading {raw.reading!r}",
                    f"use one of: {', '.join(RAW_ZONE_READINGS)}",
                )
        if not any(device.name == THROTTLING_DEVICE for device in self.cooling):
            raise UsageError(f"the simulated board needs a {THROTTLING_DEVICE!r} cooling device")
        return self


# The NSP zones follow the workload fastest; CPU and the rest mostly see
# coupled heat. Refresh periods differ so qtop's refresh-rate estimate can be tested.
_FAST_S = 0.1
_SLOW_S = 0.25
_ADC_S = 0.5


def lemans_zones(nsp_rise_c: float, nsp_tau_s: float) -> tuple[ZoneSpec, ...]:
    """The IQ-9075 ("lemans") zones in device-tree order, named as upstream kernels do."""
    zones = [ZoneSpec("aoss-0-thermal", 6.0, 0.10 * nsp_rise_c, 2.0, 4 * nsp_tau_s, _SLOW_S)]
    for cluster in (0, 1):
        for core in range(4):
            zones.append(
                ZoneSpec(
                    f"cpu-{cluster}-{core}-0-thermal",
                    8.0 + core * 0.4,
                    0.18 * nsp_rise_c,
                    14.0 if cluster == 0 else 9.0,
                    2 * nsp_tau_s,
                    _FAST_S,
                )
            )
    for index in range(2):
        zones.append(
            ZoneSpec(f"gpuss-{index}-thermal", 5.0, 0.12 * nsp_rise_c, 3.0, 3 * nsp_tau_s, _SLOW_S)
        )
    for nsp in (0, 1):
        for sensor in range(3):
            share = (1.0, 0.96, 0.92)[sensor] if nsp == 0 else 0.25 - 0.02 * sensor
            zones.append(
                ZoneSpec(
                    f"nsp-{nsp}-{sensor}-0-thermal",
                    7.0 + sensor * 0.3,
                    share * nsp_rise_c,
                    1.0,
                    nsp_tau_s if nsp == 0 else 2 * nsp_tau_s,
                    _FAST_S,
                )
            )
    zones.append(ZoneSpec("ddrss-0-thermal", 5.0, 0.15 * nsp_rise_c, 4.0, 3 * nsp_tau_s, _SLOW_S))
    return tuple(zones)


def android_glasses_zones(nsp_rise_c: float, nsp_tau_s: float) -> tuple[ZoneSpec, ...]:
    """The glasses' heated zones as an Android vendor kernel names them (no ``-thermal``)."""
    zones = [ZoneSpec("aoss-0", 5.0, 0.10 * nsp_rise_c, 2.0, 4 * nsp_tau_s, _SLOW_S)]
    for core in range(4):
        zones.append(
            ZoneSpec(
                f"cpu-0-{core}-0", 7.0 + core * 0.4, 0.18 * nsp_rise_c, 12.0, 2 * nsp_tau_s, _FAST_S
            )
        )
    zones.append(ZoneSpec("cpuss-0", 7.5, 0.18 * nsp_rise_c, 11.0, 2 * nsp_tau_s, _FAST_S))
    zones.append(ZoneSpec("gpuss-0", 5.0, 0.12 * nsp_rise_c, 3.0, 3 * nsp_tau_s, _SLOW_S))
    for unit, shares in (("nsphvx", (1.0, 0.95)), ("nsphmx", (0.97, 0.92))):
        for index, share in enumerate(shares):
            zones.append(
                ZoneSpec(
                    f"{unit}-{index}",
                    7.0 + index * 0.3,
                    share * nsp_rise_c,
                    1.0,
                    nsp_tau_s,
                    _FAST_S,
                )
            )
    zones.append(ZoneSpec("ddr", 5.0, 0.15 * nsp_rise_c, 4.0, 3 * nsp_tau_s, _SLOW_S))
    # PMIC and board thermistors: slow ADC channels, and the skin and the battery
    # follow the SoC slowly and only a little.
    zones.append(ZoneSpec("pm8550_tz", 4.0, 0.08 * nsp_rise_c, 2.0, 5 * nsp_tau_s, _ADC_S))
    zones.append(ZoneSpec("sys-therm-0", 3.0, 0.10 * nsp_rise_c, 2.0, 5 * nsp_tau_s, _ADC_S))
    zones.append(ZoneSpec("sys-therm-1", 2.5, 0.06 * nsp_rise_c, 1.5, 6 * nsp_tau_s, _ADC_S))
    zones.append(ZoneSpec("shell_front", 2.5, 0.08 * nsp_rise_c, 1.5, 8 * nsp_tau_s, _ADC_S))
    zones.append(ZoneSpec("battery", 2.0, 0.05 * nsp_rise_c, 1.0, 10 * nsp_tau_s, _ADC_S))
    return tuple(zones)


# Placed before the heated zones, so zone numbers say nothing and only types do.
ANDROID_RAW_ZONES = (
    RawZoneSpec("socd", "soc_drop"),
    RawZoneSpec("vbat", "battery_mv"),
    RawZoneSpec("ibat-lvl0", "battery_ma"),
    RawZoneSpec("mdmss-0", "offline"),
)
ANDROID_COOLING = (
    CoolingSpec("thermal-cpufreq-0", 15),
    CoolingSpec(THROTTLING_DEVICE),
    CoolingSpec("cdsp_hw", 3),
    CoolingSpec("cdsp_sw_hvx", 5),
    CoolingSpec("cdsp_sw_hmx", 5),
)

_LEMANS_CPUFREQ = (
    CpufreqPolicy("policy0", 1171200, 2361600, 2361600),
    CpufreqPolicy("policy4", 1171200, 2361600, 2361600),
)


def default_config(variant: str = "evk") -> SimConfig:
    """The built-in configuration of a variant (``evk``: no battery; ``glasses``: battery)."""
    if variant == "evk":
        return SimConfig(
            variant="evk",
            zones=lemans_zones(nsp_rise_c=100.0, nsp_tau_s=90.0),
            thermal=ThermalConfig(ambient_c=35.0),
            cpufreq=_LEMANS_CPUFREQ,
            meter=MeterConfig(),
        ).validate()
    if variant == "glasses":
        return SimConfig(
            variant="glasses",
            zones=android_glasses_zones(nsp_rise_c=85.0, nsp_tau_s=40.0),
            thermal=ThermalConfig(ambient_c=30.0, passive_trip_c=95.0, second_trip_c=105.0),
            battery=BatteryConfig(),
            odpm=OdpmConfig(),
            cpufreq=(CpufreqPolicy("policy0", 691200, 1804800, 1804800),),
            raw_zones=ANDROID_RAW_ZONES,
            cooling=ANDROID_COOLING,
            bash_on_path=False,
            ntp_synchronized=None,
        ).validate()
    return SimConfig(variant=variant).validate()


def resolve_config(variant: str | None, config: SimConfig | None) -> SimConfig:
    """The configuration to use: ``config`` if given (its variant must agree), else a default."""
    if config is None:
        return default_config(variant or "evk")
    if variant is not None and variant != config.variant:
        raise UsageError(
            f"variant {variant!r} disagrees with the given config's variant {config.variant!r}",
            "pass only one of them, or build the config from default_config(variant)",
        )
    return config.validate()

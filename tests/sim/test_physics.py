"""The thermal model, stepped by hand: exact first-order numbers and the cdsp governor."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from qtop.sim.config import BatteryConfig, SimConfig, ThermalConfig, ZoneSpec, default_config
from qtop.sim.physics import ThermalModel, battery_reading, next_cdsp_state


def one_zone(rise: float = 100.0, tau: float = 10.0, **thermal: float) -> SimConfig:
    zone = ZoneSpec(
        "nsp-0-0-0-thermal",
        idle_rise_c=5.0,
        npu_rise_c=rise,
        cpu_rise_c=0.0,
        tau_s=tau,
        refresh_s=0.1,
    )
    return SimConfig(zones=(zone,), thermal=ThermalConfig(ambient_c=30.0, **thermal))


def test_idle_zones_sit_at_ambient_plus_their_idle_rise() -> None:
    model = ThermalModel(default_config("evk"))
    model.step(600.0, npu_load=0.0, cpu_load=0.0)
    temps = {zone.name: model.temps_c[i] for i, zone in enumerate(model.zones)}
    assert temps["aoss-0-thermal"] == pytest.approx(35.0 + 6.0)
    # the hottest NSP sensor: nsp-0-2-0 idles 7.6 °C above ambient
    assert model.nsp_temp_c() == pytest.approx(35.0 + 7.6)
    assert model.cdsp_state == 0


def test_a_busy_npu_heats_first_order_towards_ambient_plus_power_times_rise() -> None:
    model = ThermalModel(one_zone(rise=50.0, tau=10.0))
    model.step(10.0, npu_load=1.0, cpu_load=0.0)
    # one time constant: 63.2 % of the way from 35 °C to 85 °C
    assert model.nsp_temp_c() == pytest.approx(35.0 + 50.0 * (1 - math.exp(-1.0)))
    model.step(10.0, npu_load=0.0, cpu_load=0.0)
    heated = 35.0 + 50.0 * (1 - math.exp(-1.0))
    assert model.nsp_temp_c() == pytest.approx(35.0 + (heated - 35.0) * math.exp(-1.0))


def test_nsp_zones_follow_the_workload_faster_than_the_others() -> None:
    model = ThermalModel(default_config("evk"))
    start = list(model.temps_c)
    model.step(30.0, npu_load=1.0, cpu_load=0.0)
    rise = {zone.name: model.temps_c[i] - start[i] for i, zone in enumerate(model.zones)}
    hottest_other = max(v for k, v in rise.items() if not k.startswith("nsp-0"))
    assert min(rise[f"nsp-0-{s}-0-thermal"] for s in range(3)) > 2 * hottest_other


def test_cdsp_steps_up_above_the_trip_while_rising_and_down_below_the_hysteresis() -> None:
    model = ThermalModel(one_zone(rise=120.0, tau=20.0, passive_trip_c=105.0, hysteresis_c=5.0))
    states = []
    for _ in range(120):
        model.step(1.0, npu_load=1.0, cpu_load=0.0)
        states.append(model.cdsp_state)
    assert states[0] == 0
    assert max(states) >= 2
    onset = states.index(1)
    # T(t) = 35 + 120 (1 - e^{-t/20}) crosses 105 °C at t = 20 ln(120/50) = 17.5 s
    assert onset == 17
    assert model.latency_multiplier() == pytest.approx(1 + 0.08 * model.cdsp_state)
    for _ in range(200):
        model.step(1.0, npu_load=0.0, cpu_load=0.0)
    assert model.cdsp_state == 0
    assert model.nsp_temp_c() < 40.0


def test_a_big_step_is_the_same_as_many_small_ones() -> None:
    coarse, fine = ThermalModel(default_config("evk")), ThermalModel(default_config("evk"))
    coarse.step(400.0, npu_load=1.0, cpu_load=0.5)
    for _ in range(4000):
        fine.step(0.1, npu_load=1.0, cpu_load=0.5)
    assert coarse.cdsp_state == fine.cdsp_state
    assert coarse.nsp_temp_c() == pytest.approx(fine.nsp_temp_c(), abs=1e-6)


@given(
    state=st.integers(0, 12),
    temp=st.floats(-50, 200, allow_nan=False),
    rising=st.booleans(),
)
def test_the_governor_moves_at_most_one_step_within_bounds(
    state: int, temp: float, rising: bool
) -> None:
    new = next_cdsp_state(state, temp, rising, trip_c=105.0, hysteresis_c=5.0, max_state=12)
    assert 0 <= new <= 12
    assert abs(new - state) <= 1
    if 100.0 <= temp < 105.0:
        assert new == state


def test_the_battery_drains_and_sags_under_load() -> None:
    battery = BatteryConfig(
        capacity_mah=300.0,
        start_percent=80.0,
        idle_ma=100.0,
        npu_ma=400.0,
        cpu_ma=0.0,
        full_volts=4.4,
        empty_volts=3.4,
        internal_resistance_ohm=0.2,
    )
    model = ThermalModel(replace(default_config("glasses"), battery=battery))
    model.step(3600.0, npu_load=1.0, cpu_load=0.0)
    reading = model.battery()
    assert reading is not None and reading.discharging
    # 500 mA for an hour, scaled by the throttled NPU share, from 80 %
    assert reading.percent < 80.0 - 100.0 * 100.0 / 300.0
    idle = battery_reading(battery, used_mah=0.0, current_ma=100.0)
    assert idle.percent == 80.0
    assert idle.volts == pytest.approx(3.4 + 1.0 * 0.8 - 0.1 * 0.2)


def test_the_evk_has_no_battery() -> None:
    assert ThermalModel(default_config("evk")).battery() is None


def test_the_power_parts_add_up_to_the_batterys_power() -> None:
    model = ThermalModel(default_config("glasses"))
    model.step(1.0, npu_load=0.6, cpu_load=0.3)
    reading = model.battery()
    assert reading is not None
    parts = model.power_parts_w()
    assert parts["npu"] > 0 and parts["system"] > 0
    assert sum(parts.values()) == pytest.approx(reading.current_ma / 1000 * reading.volts)
    assert sum(model.current_parts_ma().values()) == pytest.approx(model.current_ma())

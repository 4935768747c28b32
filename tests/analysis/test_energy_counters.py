"""Energy from counters the device integrates: ODPM rails and the battery's charge counter."""

import math

import pytest
from synthetic_gauge import StepSignal, sample_times
from synthetic_streams import (
    BATTERY_CURRENT,
    BATTERY_STATUS,
    BATTERY_VOLTAGE,
    CURRENT_INFO,
    METER_INFO,
    METER_POWER,
    STATUS_INFO,
    VOLTAGE_INFO,
    back_to_back,
    phase,
    stream,
)

from qtop.analysis.power_source import MAX_COUNTER_REFRESH_S
from qtop.analysis.session import analyze
from qtop.errors import UsageError
from qtop.events import ChannelInfo, Sample

NSP_RAIL = "odpm/iio_device0/VDD_NSP"
SOC_RAIL = "odpm/iio_device0/VSYS_PWR_SOC"
CLOCK = "odpm/iio_device0/time"
RAIL_INFOS = [
    ChannelInfo(id=NSP_RAIL, kind="energy", unit="J", label="odpm VDD_NSP"),
    ChannelInfo(id=SOC_RAIL, kind="energy", unit="J", label="odpm VSYS_PWR_SOC"),
]
CLOCK_INFO = ChannelInfo(id=CLOCK, kind="energy_time", unit="s")
CHARGE = "power/battery/charge_counter"
CHARGE_INFO = ChannelInfo(id=CHARGE, kind="charge", unit="Ah")
# Idle until 22 s (the 20 s baseline runs from 2 s), then the NPU rail wakes up.
NSP_W = StepSignal((0.0, 22.0), (0.0, 1.5))
SOC_W = StepSignal((0.0, 22.0), (0.5, 0.6))
VOLTS = 4.0
MEASURED = back_to_back(22.0, [0.1] * 600)  # 22 .. 82 s


def counter(signal: StepSignal, origin: float, t: float) -> float:
    """A counter of the signal's energy since boot, exact at t."""
    return origin + signal.integral(0.0, t)


def held(update_every: float, phase_s: float, t: float) -> float:
    """The time of the counter's last update at or before t."""
    return phase_s + math.floor((t - phase_s) / update_every + 1e-12) * update_every


def session(infos, values, dt=0.1, sample_phase=0.0, extra=()):
    samples = [
        Sample(t=t, seq=k, values=values(t))
        for k, t in enumerate(sample_times(0.0, 85.0, dt, sample_phase))
    ]
    phases = [phase(2.0, "baseline"), phase(22.0, "measure")]
    return analyze(stream(infos, MEASURED, samples, phases, *extra))


def rails(update_every: float = 0.1, phase_s: float = 0.0, clock_offset: float | None = None):
    """The two rails' counters as read at t; with clock_offset, the monitor's own stamp too."""

    def values(t: float) -> dict[str, float]:
        u = held(update_every, phase_s, t)
        out = {NSP_RAIL: counter(NSP_W, 812.0, u), SOC_RAIL: counter(SOC_W, 5123.25, u)}
        if clock_offset is not None:
            out[CLOCK] = u + clock_offset
        return out

    return values


@pytest.mark.parametrize(("update_every", "phase_s"), [(0.1, 0.0), (0.5, 0.17), (1.0, 0.63)])
def test_odpm_rails_give_the_exact_energy_as_a_counter_difference(update_every, phase_s):
    analysis = session(RAIL_INFOS, rails(update_every, phase_s), sample_phase=0.031)
    energy = analysis.variants[0].energy
    assert analysis.power_source == (
        "on-device energy counters odpm (sum of 2 ODPM rail(s): VDD_NSP, VSYS_PWR_SOC)"
    )
    assert energy.integrated_on == "counter updates"
    # The baseline sees only its own updates: exactly the idle power, never the busy one.
    assert energy.idle_power_w == pytest.approx(0.5, rel=1e-9)
    a, b = MEASURED[0].start, MEASURED[-1].end
    exact = NSP_W.integral(a, b) + SOC_W.integral(a, b)
    assert energy.energy_j == pytest.approx(exact, rel=2e-3)
    assert energy.net_energy_j == pytest.approx(exact - 0.5 * (b - a), rel=3e-3)
    assert energy.readings == pytest.approx((b - a) / update_every, abs=1)
    assert energy.refresh_period_s == pytest.approx(update_every, rel=0.05)
    assert energy.valid and energy.net_valid
    # The timeline reads the same counters: 2.1 W in every busy window.
    assert [round(row.power_w, 6) for row in analysis.variants[0].timeline] == [2.1, 2.1]


@pytest.mark.parametrize("update_every", [0.35, 1.0, 3.0])
def test_the_monitors_own_clock_places_each_update_exactly(update_every):
    # The monitor's clock runs 1000 s behind the ticks' (another time base); its counters
    # update between reads, so a tick sees them up to one update period late.
    infos = [*RAIL_INFOS, CLOCK_INFO]
    analysis = session(infos, rails(update_every, 0.013, clock_offset=-1000.0))
    energy = analysis.variants[0].energy
    a, b = MEASURED[0].start, MEASURED[-1].end
    assert energy.idle_power_w == pytest.approx(0.5, rel=1e-9)
    assert energy.energy_j == pytest.approx(2.1 * (b - a), rel=1e-9)
    assert energy.net_energy_j == pytest.approx(1.6 * (b - a), rel=1e-9)
    assert energy.refresh_period_s == pytest.approx(update_every, rel=1e-6)


def test_a_counter_reset_splits_the_trace_instead_of_counting_negative_energy():
    base = rails()

    def values(t: float) -> dict[str, float]:
        now = base(t)
        if t >= 50.0:  # the monitor restarted its counters at 50 s
            return {k: v - base(50.0)[k] for k, v in now.items()}
        return now

    energy = session(RAIL_INFOS, values).variants[0].energy
    assert energy.mean_power_w == pytest.approx(2.1, rel=1e-6)
    assert energy.coverage == pytest.approx(1.0, abs=0.01)


def test_a_meter_still_comes_first_and_a_rail_can_be_chosen():
    def values(t: float) -> dict[str, float]:
        return {**rails()(t), METER_POWER: 7.0}

    infos = [*RAIL_INFOS, METER_INFO]
    assert session(infos, values).variants[0].energy.mean_power_w == pytest.approx(7.0)
    samples = [Sample(t=t, seq=k, values=values(t)) for k, t in enumerate(sample_times(0, 85, 0.1))]
    events = stream(infos, MEASURED, samples)
    one = analyze(events, power_source=NSP_RAIL)
    assert one.variants[0].energy.mean_power_w == pytest.approx(1.5, rel=1e-6)
    assert one.power_source == (
        f"on-device energy counters {NSP_RAIL} (sum of 1 ODPM rail(s): VDD_NSP)"
    )
    with pytest.raises(UsageError) as caught:
        analyze(events, power_source="odpm/nothing")
    assert caught.value.fix == f"use one of: meter/ina226, odpm, {NSP_RAIL}, {SOC_RAIL}"


def battery(update_every: float, phase_s: float, quantum_uah: float = 1.0):
    """Charge counter (µAh left, held between gauge updates), voltage, current, status."""
    amps = StepSignal((0.0, 22.0), (0.125, 0.5))

    def values(t: float) -> dict[str, float]:
        u = held(update_every, phase_s, t)
        left_uah = 250_000.0 - amps.integral(0.0, u) / 3600 * 1e6
        return {
            CHARGE: math.floor(left_uah / quantum_uah) * quantum_uah / 1e6,
            BATTERY_VOLTAGE: VOLTS,
            BATTERY_CURRENT: -amps.at(u),
            BATTERY_STATUS: -1.0,
        }

    return values


BATTERY_INFOS = [CHARGE_INFO, VOLTAGE_INFO, CURRENT_INFO, STATUS_INFO]


def test_the_charge_counter_times_voltage_is_preferred_to_sampled_current():
    analysis = session(BATTERY_INFOS, battery(1.0, 0.4), sample_phase=0.05)
    energy = analysis.variants[0].energy
    assert analysis.power_source == (
        "supply power/battery (charge counter x V: power/battery/charge_counter, "
        "power/battery/voltage)"
    )
    a, b = MEASURED[0].start, MEASURED[-1].end
    assert energy.idle_power_w == pytest.approx(0.5, rel=5e-3)
    assert energy.energy_j == pytest.approx(2.0 * (b - a), rel=5e-3)
    assert energy.net_energy_j == pytest.approx(1.5 * (b - a), rel=1e-2)
    assert energy.valid and energy.net_valid


def test_a_coarse_charge_counter_is_passed_over_for_the_current_reading():
    # 1 mAh steps at 0.5 A come every 7.2 s: far too coarse to integrate a minute from.
    analysis = session(BATTERY_INFOS, battery(1.0, 0.0, quantum_uah=1000.0))
    assert analysis.power_source == (
        "supply power/battery (|I| x V: power/battery/current, power/battery/voltage)"
    )
    assert any(
        note.startswith(f"{CHARGE} changed only every") and "too coarse" in note
        for note in analysis.notes
    )
    assert MAX_COUNTER_REFRESH_S < 7.0
    energy = analysis.variants[0].energy
    assert energy.mean_power_w == pytest.approx(2.0, rel=1e-9)


def test_a_charge_counter_that_rises_is_not_trusted():
    down = battery(1.0, 0.0)

    def values(t: float) -> dict[str, float]:
        out = down(t)
        out[CHARGE] = 0.5 - out[CHARGE]  # counts up as charge is drawn
        return out

    analysis = session(BATTERY_INFOS, values)
    assert "|I| x V" in analysis.power_source
    assert any("rose over the session" in note for note in analysis.notes)


def test_a_monitor_clock_coarser_than_its_counters_never_divides_by_zero():
    # The counters move every tick; the monitor's stamp only every whole second.
    def values(t: float) -> dict[str, float]:
        return {**rails()(t), CLOCK: float(math.floor(t + 1e-9)) + 1000.0}

    analysis = session([*RAIL_INFOS, CLOCK_INFO], values)
    energy = analysis.variants[0].energy
    a, b = MEASURED[0].start, MEASURED[-1].end
    # Stamps a second coarse: within a second's worth of power of the truth.
    assert energy.energy_j == pytest.approx(2.1 * (b - a), rel=1.0 / 60)
    assert all(row.power_w is not None for row in analysis.variants[0].timeline)


def test_a_clock_that_lags_erratically_is_not_used():
    # Stamps that wander by more than 5 s against the ticks: the ticks' own times are used.
    def values(t: float) -> dict[str, float]:
        return {**rails()(t), CLOCK: 7.0 if t < 40.0 else 8.0}

    energy = session([*RAIL_INFOS, CLOCK_INFO], values).variants[0].energy
    a, b = MEASURED[0].start, MEASURED[-1].end
    assert energy.energy_j == pytest.approx(2.1 * (b - a), rel=2e-3)

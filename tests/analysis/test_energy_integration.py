import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from synthetic_streams import (
    BATTERY_CURRENT,
    BATTERY_POWER,
    BATTERY_STATUS,
    BATTERY_VOLTAGE,
    CURRENT_INFO,
    METER_INFO,
    METER_POWER,
    POWER_INFO,
    STATUS_INFO,
    VOLTAGE_INFO,
    back_to_back,
    phase,
    stream,
    ticks,
)

from qtop.analysis.energy import NO_POWER, PowerSource, PowerTrace, build_power_trace
from qtop.analysis.series import ChannelSeries
from qtop.analysis.session import analyze
from qtop.errors import UsageError
from qtop.events import ChannelInfo

# 100 iterations of 0.1 s from t = 5 to t = 15.
MEASURED = back_to_back(5.0, [0.1] * 100)


def energy_of(infos, values, *extra, dt=0.1, until=20.0, **options):
    events = stream(infos, MEASURED, ticks(0.0, until, dt, values), *extra)
    return analyze(events, **options).variants[0].energy


def triangle(t: float) -> float:
    """2 W, with a triangle up to 4 W between t = 8 and t = 12."""
    if 8.0 <= t <= 10.0:
        return 2.0 + (t - 8.0)
    if 10.0 < t <= 12.0:
        return 4.0 - (t - 10.0)
    return 2.0


def test_known_power_trace_gives_the_exact_energy():
    energy = energy_of(
        [POWER_INFO, STATUS_INFO], lambda t: {BATTERY_POWER: triangle(t), BATTERY_STATUS: -1.0}
    )
    # 2 W for 10 s plus the triangle's area (base 4 s, height 2 W) = 24 J.
    assert energy.energy_j == pytest.approx(24.0, rel=1e-9)
    assert energy.mean_power_w == pytest.approx(2.4, rel=1e-9)
    assert energy.inferences == 100
    assert energy.energy_per_inference_j == pytest.approx(0.24, rel=1e-9)
    assert energy.inferences_per_j == pytest.approx(100 / 24, rel=1e-9)
    assert energy.integrated_on == "every sample"
    assert energy.refresh_period_s == pytest.approx(0.1)
    assert energy.sample_interval_s == pytest.approx(0.1)
    assert not energy.charging


def test_power_is_abs_current_times_voltage_whatever_the_sign():
    energy = energy_of(
        [CURRENT_INFO, VOLTAGE_INFO, STATUS_INFO],
        lambda t: {BATTERY_CURRENT: -0.5, BATTERY_VOLTAGE: 4.0, BATTERY_STATUS: -1.0},
    )
    assert energy.source == (
        "supply power/battery (|I| x V: power/battery/current, power/battery/voltage)"
    )
    assert energy.energy_j == pytest.approx(20.0, rel=1e-9)
    assert energy.mean_power_w == pytest.approx(2.0)


def test_slow_sensor_is_integrated_over_its_real_updates():
    # The sensor refreshes once a second (2, 3, 4, 2, 3, 4, ... W); qtop samples at 10 Hz.
    def held(t: float) -> dict[str, float]:
        return {BATTERY_POWER: 2.0 + int(t + 1e-9) % 3, BATTERY_STATUS: -1.0}

    iterations = back_to_back(2.0, [0.1] * 55)  # 2.0 .. 7.5 s
    events = stream([POWER_INFO, STATUS_INFO], iterations, ticks(0.0, 10.0, 0.1, held))
    energy = analyze(events).variants[0].energy
    assert energy.refresh_period_s == pytest.approx(1.0)
    assert energy.integrated_on == "sensor updates"
    # Readings at 2..7 s: 4, 2, 3, 4, 2, 3 W; then halfway to 4 W at 7.5 s.
    # Trapezoids: 3 + 2.5 + 3.5 + 3 + 2.5 + (3 + 3.5) / 2 * 0.5 = 16.125 J
    assert energy.energy_j == pytest.approx(16.125, rel=1e-9)
    assert energy.readings == 6
    assert energy.warnings[0] == (
        "the power sensor updates every 1 s while qtop samples every 0.1 s: integrated "
        "over its 6 real updates in the measurement"
    )
    assert energy.warnings[1].startswith("only 6 power readings during the measurement")


def test_charging_segment_is_flagged_and_energy_withheld():
    def values(t: float) -> dict[str, float]:
        return {BATTERY_POWER: 2.0, BATTERY_STATUS: 1.0 if 8.0 <= t < 10.0 else -1.0}

    energy = energy_of([POWER_INFO, STATUS_INFO], values, dt=0.5)
    assert energy.charging
    assert energy.charging_spans == ((8.0, 10.0),)
    assert energy.energy_j is None
    assert energy.energy_per_inference_j is None
    assert energy.mean_power_w is None
    assert any("charging during the measurement" in w for w in energy.warnings)


def test_net_energy_subtracts_the_idle_baseline():
    def values(t: float) -> dict[str, float]:
        return {BATTERY_POWER: 1.0 if t < 5.0 else 3.0, BATTERY_STATUS: -1.0}

    phases = [phase(0.0, "baseline"), phase(4.5, "warmup"), phase(5.0, "measure")]
    energy = energy_of([POWER_INFO, STATUS_INFO], values, phases, dt=0.5)
    assert energy.idle_power_w == pytest.approx(1.0)
    assert energy.idle_span_s == pytest.approx(4.5)
    assert energy.energy_j == pytest.approx(30.0)
    assert energy.net_energy_j == pytest.approx(20.0)
    assert energy.net_energy_per_inference_j == pytest.approx(0.2)
    assert energy.net_inferences_per_j == pytest.approx(5.0)


def test_without_a_baseline_there_are_no_net_figures():
    energy = energy_of([POWER_INFO], lambda t: {BATTERY_POWER: 3.0})
    assert energy.net_energy_j is None
    assert any(w.startswith("no idle baseline before the run") for w in energy.warnings)
    assert "no battery status channel: charging cannot be ruled out" in energy.warnings


def test_board_without_power_telemetry_says_so():
    analysis = analyze(stream([], MEASURED))
    energy = analysis.variants[0].energy
    assert not energy.available
    assert energy.note == NO_POWER
    assert energy.energy_j is None
    assert NO_POWER in analysis.notes
    assert analysis.power_source is None


def test_external_meter_is_preferred_and_can_be_overridden():
    def values(t: float) -> dict[str, float]:
        return {METER_POWER: 5.0, BATTERY_POWER: 2.0, BATTERY_STATUS: -1.0}

    infos = [METER_INFO, POWER_INFO, STATUS_INFO]
    assert energy_of(infos, values).mean_power_w == pytest.approx(5.0)
    chosen = energy_of(infos, values, power_source="power/battery")
    assert chosen.mean_power_w == pytest.approx(2.0)
    with pytest.raises(UsageError, match="power source 'meter/x' is not among"):
        energy_of(infos, values, power_source="meter/x")


def test_meter_units_are_converted():
    meter = ChannelInfo(id="meter/ina/power", kind="power", unit="mW")
    energy = energy_of([meter], lambda t: {"meter/ina/power": 2500.0})
    assert energy.mean_power_w == pytest.approx(2.5)
    assert energy.source == "external meter meter/ina (power: meter/ina/power)"


def test_meter_with_current_only_cannot_give_power():
    meter = ChannelInfo(id="meter/ina/current", kind="current", unit="mA")
    analysis = analyze(stream([meter], MEASURED, ticks(0, 20, 0.1, lambda t: {meter.id: 300.0})))
    assert "meter/ina reports current but no voltage: power unknown" in analysis.notes
    assert not analysis.variants[0].energy.available


def test_gaps_are_not_integrated_across():
    def values(t: float) -> dict[str, float | None]:
        return {BATTERY_POWER: None if 8.0 <= t <= 12.0 else 2.0}

    energy = energy_of([POWER_INFO], values, dt=0.5)
    assert energy.coverage == pytest.approx(0.5)
    assert energy.energy_j == pytest.approx(20.0)
    assert any("cover 50% of the measurement" in w for w in energy.warnings)


def test_idle_battery_status_warns_about_external_power():
    energy = energy_of(
        [POWER_INFO, STATUS_INFO], lambda t: {BATTERY_POWER: 2.0, BATTERY_STATUS: 0.0}
    )
    assert energy.energy_j == pytest.approx(20.0)
    assert any("full, not charging or unknown" in w for w in energy.warnings)


def test_blocks_add_up_to_the_whole_for_comparisons():
    energy = energy_of([POWER_INFO], lambda t: {BATTERY_POWER: triangle(t)})
    assert len(energy.blocks) == 10
    assert sum(e for e, _ in energy.blocks) == pytest.approx(24.0)
    assert sum(n for _, n in energy.blocks) == 100


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.floats(0.0, 10.0), min_size=3, max_size=40),
    st.floats(0.0, 1.0),
    st.floats(0.0, 1.0),
    st.floats(0.0, 1.0),
)
def test_integration_is_additive_over_adjacent_intervals(watts, a, b, c):
    times = [0.5 * k for k in range(len(watts))]
    channels = {BATTERY_POWER: POWER_INFO}
    source = PowerSource("power/battery", "power", (BATTERY_POWER,), None)
    trace: PowerTrace = build_power_trace(
        source, channels, {BATTERY_POWER: ChannelSeries(times, list(watts))}
    )
    low, middle, high = sorted(x * times[-1] for x in (a, b, c))
    whole, _ = trace.integrate(low, high)
    left, _ = trace.integrate(low, middle)
    right, _ = trace.integrate(middle, high)
    assert whole == pytest.approx(left + right, abs=1e-9)

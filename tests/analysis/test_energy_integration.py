import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from synthetic_gauge import Gauge, StepSignal, sample_times
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

from qtop.analysis.energy import (
    MIN_BASELINE_READINGS,
    MIN_READINGS,
    NO_POWER,
    PowerSource,
    PowerTrace,
    build_power_trace,
)
from qtop.analysis.series import ChannelSeries
from qtop.analysis.session import analyze
from qtop.errors import UsageError
from qtop.events import ChannelInfo, Sample

# 100 iterations of 0.1 s from t = 5 to t = 15.
MEASURED = back_to_back(5.0, [0.1] * 100)


def energy_of(infos, values, *extra, dt=0.1, until=20.0, **options):
    events = stream(infos, MEASURED, ticks(0.0, until, dt, values), *extra)
    return analyze(events, **options).variants[0].energy


def test_a_step_signal_is_integrated_as_held_readings():
    # 2 W, then 5 W from t = 8.55 (between two ticks): the 8.5 s tick still reads 2 W.
    def values(t: float) -> dict[str, float]:
        return {BATTERY_POWER: 5.0 if t >= 8.55 else 2.0, BATTERY_STATUS: -1.0}

    energy = energy_of([POWER_INFO, STATUS_INFO], values)
    # Held readings: 2 W over [5, 8.6), 5 W over [8.6, 15] = 7.2 + 32 J.
    assert energy.energy_j == pytest.approx(39.2, rel=1e-9)
    assert energy.mean_power_w == pytest.approx(3.92, rel=1e-9)
    assert energy.inferences == 100
    assert energy.energy_per_inference_j == pytest.approx(0.392, rel=1e-9)
    assert energy.inferences_per_j == pytest.approx(100 / 39.2, rel=1e-9)
    assert energy.integrated_on == "held readings"
    assert energy.sample_interval_s == pytest.approx(0.1)
    assert energy.readings == 100
    assert energy.valid
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


def test_a_slow_sensor_is_held_between_updates_and_too_few_updates_are_invalid():
    # The sensor refreshes once a second (2, 3, 4, 2, 3, 4, ... W); qtop samples at 10 Hz.
    def held(t: float) -> dict[str, float]:
        return {BATTERY_POWER: 2.0 + int(t + 1e-9) % 3, BATTERY_STATUS: -1.0}

    iterations = back_to_back(2.0, [0.1] * 55)  # 2.0 .. 7.5 s
    events = stream([POWER_INFO, STATUS_INFO], iterations, ticks(0.0, 10.0, 0.1, held))
    energy = analyze(events).variants[0].energy
    assert energy.refresh_period_s == pytest.approx(1.0)
    # Held: 4 W [2, 3), 2 W [3, 4), 3 W [4, 5), 4 W [5, 6), 2 W [6, 7), 3 W [7, 7.5].
    assert energy.energy_j == pytest.approx(16.5, rel=1e-9)
    assert energy.readings == 5
    assert energy.warnings[0] == (
        "the power sensor updates about every 1 s while qtop samples every 0.1 s: each "
        "reading is held until the next"
    )
    assert not energy.valid
    assert energy.invalid_reasons == (
        f"only 5 power readings in the measurement (5.5 s; the source updates about every 1 s; "
        f"at least {MIN_READINGS} are needed): measure for at least {MIN_READINGS} s",
    )


def gauge_session(
    gauge: Gauge, baseline: tuple[float, float], measured: tuple[float, float], dt: float, phase_s
):
    """A session sampled every dt: baseline phase, then back-to-back 0.1 s iterations."""
    start, end = measured
    count = round((end - start) / 0.1)
    iterations = back_to_back(start, [0.1] * count)
    times = sample_times(0.0, end + 3.0, dt, phase_s)
    samples = [
        Sample(t=t, seq=k, values={BATTERY_POWER: gauge.reading(t), BATTERY_STATUS: -1.0})
        for k, t in enumerate(times)
    ]
    phases = [phase(baseline[0], "baseline"), phase(baseline[1], "measure")]
    events = stream([POWER_INFO, STATUS_INFO], iterations, samples, phases)
    return analyze(events).variants[0].energy, iterations[0].start, iterations[-1].end


def busy_noise(from_t: float):
    """Gauge reading noise while busy, a function of the update's time only."""
    return lambda u: 0.0 if u < from_t else 0.05 * math.sin(u * 12.9898)


@pytest.mark.parametrize(
    ("gauge_phase", "sample_phase"), [(0.0, 0.0), (0.37, 0.013), (0.5, 0.05), (0.99, 0.099)]
)
def test_a_one_second_gauge_idling_then_busy_gives_energy_within_two_percent(
    gauge_phase, sample_phase
):
    # Idle at a constant 0.5 W for 20 s of baseline, then 2 W (noisy) for 60 s of work;
    # the gauge refreshes once a second and qtop samples it at 10 Hz.
    signal = StepSignal((0.0, 22.0), (0.5, 2.0))
    gauge = Gauge(signal, 1.0, gauge_phase, busy_noise(22.0))
    energy, a, b = gauge_session(gauge, (2.0, 22.0), (22.0, 82.0), 0.1, sample_phase)
    # The idle baseline never reaches into the busy period: exactly the constant reading.
    assert energy.idle_power_w == 0.5
    assert energy.idle_readings == 20
    exact_gross = gauge.integral(a, b)
    exact_net = exact_gross - 0.5 * (b - a)
    assert energy.energy_j == pytest.approx(exact_gross, rel=0.02)
    assert energy.net_energy_j == pytest.approx(exact_net, rel=0.02)
    # The same against the true signal, which the gauge follows up to a second late.
    assert energy.energy_j == pytest.approx(signal.integral(a, b), rel=0.02)
    assert energy.net_energy_j == pytest.approx(signal.integral(a, b) - 0.5 * (b - a), rel=0.02)
    assert energy.valid and energy.net_valid
    assert energy.refresh_period_s == pytest.approx(1.0)


def test_a_short_baseline_makes_only_the_net_figures_invalid():
    signal = StepSignal((0.0, 22.0), (0.5, 2.0))
    gauge = Gauge(signal, 1.0, 0.3, busy_noise(22.0))
    energy, _, _ = gauge_session(gauge, (17.0, 22.0), (22.0, 52.0), 0.1, 0.0)
    assert energy.valid
    assert not energy.net_valid
    assert energy.idle_power_w == 0.5
    assert energy.invalid_reasons == (
        f"only 5 power readings in the idle baseline (5.0 s; the source updates about every "
        f"1 s; at least {MIN_BASELINE_READINGS} are needed): set run.idle_baseline to at least "
        f"{MIN_BASELINE_READINGS} s",
    )


step_levels = st.lists(st.floats(0.0, 5.0), min_size=2, max_size=8)


@settings(max_examples=120, deadline=None)
@given(
    levels=step_levels,
    edge_seeds=st.lists(st.floats(0.0, 1.0), min_size=8, max_size=8),
    refresh=st.sampled_from([0.25, 0.5, 1.0, 2.0]),
    gauge_phase=st.floats(0.0, 1.0),
    sample_phase=st.floats(0.0, 1.0),
    window=st.tuples(st.floats(0.0, 1.0), st.floats(0.0, 1.0)),
)
def test_held_integration_matches_the_exact_step_integrals(
    levels, edge_seeds, refresh, gauge_phase, sample_phase, window
):
    dt = 0.1
    edges = (0.0, *sorted(2.0 + 36.0 * x for x in edge_seeds[: len(levels) - 1]))
    signal = StepSignal(edges, tuple(levels))
    gauge = Gauge(signal, refresh, gauge_phase * refresh)
    times = sample_times(0.0, 40.0, dt, sample_phase * dt)
    series = ChannelSeries(times, [gauge.reading(t) for t in times])
    source = PowerSource("power/battery", "power", (BATTERY_POWER,), None)
    trace = build_power_trace(source, {BATTERY_POWER: POWER_INFO}, {BATTERY_POWER: series})
    a, b = sorted(1.0 + 38.0 * x for x in window)
    joules, covered = trace.integrate(a, b)
    assert covered == pytest.approx(b - a)
    # Against the gauge's own step curve: only the sampler's delay in seeing each update.
    updates = [u for u in _updates(gauge, a - dt, b)]
    seen_late = dt * sum(abs(gauge.reading(u) - gauge.reading(u - 1e-9)) for u in updates)
    assert abs(joules - gauge.integral(a, b)) <= seen_late + 1e-9
    # Against the true signal: the gauge lags each true step by up to one refresh.
    steps = [e for e in edges[1:] if a - refresh - dt < e <= b]
    lag = (refresh + dt) * sum(abs(signal.at(e) - signal.at(e - 1e-9)) for e in steps)
    assert abs(joules - signal.integral(a, b)) <= lag + 1e-9


def _updates(gauge: Gauge, a: float, b: float) -> list[float]:
    first = gauge.update_time(a) + gauge.refresh_s
    out = []
    k = 0
    while first + k * gauge.refresh_s <= b:
        out.append(first + k * gauge.refresh_s)
        k += 1
    return out


@settings(max_examples=60, deadline=None)
@given(
    idle=st.floats(0.05, 3.0),
    busy=st.lists(st.floats(0.0, 6.0), min_size=1, max_size=6),
    gauge_phase=st.floats(0.0, 1.0),
    sample_phase=st.floats(0.0, 0.1),
)
def test_an_idle_baseline_equals_the_idle_reading_whatever_follows(
    idle, busy, gauge_phase, sample_phase
):
    # Idle until 20 s (the measurement starts then), anything at all afterwards.
    edges = (0.0, *(20.0 + 5.0 * k for k in range(len(busy))))
    gauge = Gauge(StepSignal(edges, (idle, *busy)), 1.0, gauge_phase)
    energy, _, _ = gauge_session(gauge, (5.0, 20.0), (20.0, 50.0), 0.1, sample_phase)
    assert energy.idle_power_w == pytest.approx(idle, rel=1e-12)


def test_charging_segment_is_flagged_and_energy_withheld():
    def values(t: float) -> dict[str, float]:
        return {BATTERY_POWER: 2.0, BATTERY_STATUS: 1.0 if 8.0 <= t < 10.0 else -1.0}

    energy = energy_of([POWER_INFO, STATUS_INFO], values, dt=0.5)
    assert energy.charging
    assert energy.charging_spans == ((8.0, 10.0),)
    assert energy.energy_j is None
    assert energy.energy_per_inference_j is None
    assert energy.mean_power_w is None
    assert not energy.valid
    assert "the battery was charging during the measurement" in energy.invalid_reasons
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
    # 4.5 s at 0.5 s: 9 readings, one short of a trustworthy baseline.
    assert energy.idle_readings == 9
    assert energy.valid and not energy.net_valid


def test_without_a_baseline_there_are_no_net_figures():
    energy = energy_of([POWER_INFO], lambda t: {BATTERY_POWER: 3.0})
    assert energy.net_energy_j is None
    assert not energy.net_valid
    assert any(w.startswith("no idle baseline before the run") for w in energy.warnings)
    assert "no battery status channel: charging cannot be ruled out" in energy.warnings
    assert (
        "the power reading changed too rarely to estimate how often the sensor updates: each "
        "sample is counted as a reading"
    ) in energy.warnings


def test_board_without_power_telemetry_says_so():
    analysis = analyze(stream([], MEASURED))
    energy = analysis.variants[0].energy
    assert not energy.available
    assert energy.note == NO_POWER
    assert energy.energy_j is None
    assert not energy.valid
    assert NO_POWER in analysis.notes
    assert analysis.power_source is None


def test_external_meter_is_preferred_and_can_be_overridden():
    def values(t: float) -> dict[str, float]:
        return {METER_POWER: 5.0, BATTERY_POWER: 2.0, BATTERY_STATUS: -1.0}

    infos = [METER_INFO, POWER_INFO, STATUS_INFO]
    assert energy_of(infos, values).mean_power_w == pytest.approx(5.0)
    chosen = energy_of(infos, values, power_source="power/battery")
    assert chosen.mean_power_w == pytest.approx(2.0)
    with pytest.raises(UsageError, match="power source 'meter/x' is not among") as caught:
        energy_of(infos, values, power_source="meter/x")
    assert caught.value.fix == "use one of: meter/ina226, power/battery"


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
    def values(t: float) -> dict[str, float]:
        return {BATTERY_POWER: 2.0 + (t % 3.0)}

    energy = energy_of([POWER_INFO], values)
    assert len(energy.blocks) == 10
    assert sum(e for e, _ in energy.blocks) == pytest.approx(energy.energy_j)
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

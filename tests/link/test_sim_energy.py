"""Energy on the simulated glasses over real SSH, against the simulator's exact integral."""

import time

import pytest

from qtop.analysis.current_sign import POSITIVE_DISCHARGE
from qtop.analysis.energy import (
    PowerSource,
    PowerTrace,
    analyze_energy,
    build_power_trace,
    select_power_source,
)
from qtop.analysis.series import ChannelSeries
from qtop.analysis.session import analyze
from qtop.events import ChannelInfo
from qtop.record.reader import open_recording

from .links import sim_link
from .recording import of_kind, record
from .test_ssh_sim import NETRUN, sim_profile, sim_source


def channels_and_series(events):
    """The recorded channels and their samples, as the analysis holds them."""
    (declared,) = of_kind(events, "channels")
    channels = {
        c["id"]: ChannelInfo(id=c["id"], kind=c["kind"], unit=c["unit"])
        for c in declared["channels"]
    }
    series: dict[str, ChannelSeries] = {}
    for sample in of_kind(events, "sample"):
        for channel, value in sample["values"].items():
            if value is not None:
                target = series.setdefault(channel, ChannelSeries())
                target.times.append(sample["t"])
                target.values.append(value)
    return channels, series


def updates_within(trace: PowerTrace, t_from: float, t_to: float) -> tuple[float, float]:
    """The stamps qtop gave a counter trace's first and last updates inside [t_from, t_to]."""
    changes = [
        t
        for times, values in trace.segments
        for t, before, now in zip(times[1:], values, values[1:], strict=False)
        if now != before and t_from <= t <= t_to
    ]
    return changes[0], changes[-1]


def counter_clock_to_ticks(events, series) -> float:
    """qtop's offset from the ODPM monitor's ``t=`` clock to the ticks' time line.

    qtop places a counter at its ``t=`` plus the smallest lag of any tick
    behind it (the freshest read), since it cannot know a read's own lag.
    """
    (declared,) = of_kind(events, "channels")
    (clock_id,) = [c["id"] for c in declared["channels"] if c["kind"] == "energy_time"]
    clock = series[clock_id]
    return min(t - stamp for t, stamp in zip(clock.times, clock.values, strict=True))


@pytest.mark.slow
async def test_glasses_energy_from_every_source_matches_the_simulator(tmp_path):
    """12 s of idle baseline, a warm-up longer than the gauge's refresh, 22 s measured.

    The ODPM rails integrate the simulated power exactly: between the first and
    the last counter update inside a window, qtop's energy is the simulator's to
    a few µWs per update. Over the whole window qtop extrapolates that mean power
    to the window's edges (it never borrows a reading from outside), which the
    simulator's own granularity (50 ms physics ticks, longer when the machine is
    busy) limits to about a percent. The charge counter (1 s refresh) and the
    held 1 s current_now reading must come close. The warm-up (8 processes,
    about 1.6 s) lets the gauge catch up with the load before the measurement
    starts, as docs/analysis.md advises.
    """
    run = "{command: '" + NETRUN.format(n=40) + "', warmup: 8, duration: 22s, idle_baseline: 12s}"
    async with sim_link(tmp_path / "sim", "ssh", variant="glasses", time_scale=1, seed=5) as sim:
        profile = sim_profile(sim, run).replace_device(sample_interval_s=0.1)
        events = await record(sim_source(profile), tmp_path / "run.jsonl")
        sensors = sim.board.sensors
        # Recordings are on the uptime (boot-time) line, the simulator on time.monotonic.
        offset = time.clock_gettime(time.CLOCK_BOOTTIME) - time.monotonic()
        analysis = analyze(open_recording(tmp_path / "run.jsonl").events())
        energy = analysis.variants[0].energy
        measured = [i for i in of_kind(events, "iteration") if i["phase"] == "measure"]
        a = min(i["start"] for i in measured)
        b = max(i["end"] for i in measured)
        (baseline,) = [p for p in of_kind(events, "phase") if p["phase"] == "baseline"]
        after = min(p["t"] for p in of_kind(events, "phase") if p["t"] > baseline["t"])
        true_gross = sensors.true_energy_j(a - offset, b - offset)
        true_idle = sensors.true_energy_j(baseline["t"] - offset, after - offset) / (
            after - baseline["t"]
        )
        channels, series = channels_and_series(events)
        source, _ = select_power_source(channels, series)
        assert source is not None
        trace = build_power_trace(source, channels, series)
        clock_to_ticks = counter_clock_to_ticks(events, series)
        inner = []
        for t_from, t_to in ((a, b), (baseline["t"], after)):
            first, last = updates_within(trace, t_from, t_to)
            # The simulator writes t= from time.monotonic, the instant its counters hold.
            taken = [stamp - clock_to_ticks for stamp in (first, last)]
            truth = sensors.true_energy_j(*taken)
            inner.append((trace.integrate(first, last)[0], truth))
        freshest_read_lag = clock_to_ticks - offset

    assert analysis.power_source is not None and analysis.power_source.startswith(
        "on-device energy counters odpm (sum of 2 ODPM rail(s): VDD_NSP, VSYS_PWR_SOC)"
    )
    assert energy.valid and energy.net_valid, energy.invalid_reasons
    # Between two counter updates qtop's energy is the simulator's exact integral
    # (t= has 1 ms steps), and its stamps trail the true instants by the freshest
    # read's lag: under one tick however busy the machine, and never earlier than
    # the glasses' sampler clock (/proc/uptime, cut to 10 ms) allows.
    for figure, truth in inner:
        assert figure == pytest.approx(truth, rel=2e-4)
    assert -0.011 <= freshest_read_lag < profile.device.sample_interval_s
    assert energy.energy_j == pytest.approx(true_gross, rel=0.015)
    assert energy.idle_power_w == pytest.approx(true_idle, rel=0.015)
    true_net = true_gross - true_idle * (b - a)
    assert energy.net_energy_j == pytest.approx(true_net, rel=0.03)

    # The same recording through the battery's own sources.
    status = series["power/battery/status"]
    times = sorted((i["start"] + i["end"]) / 2 for i in measured if i.get("exit_status", 0) == 0)
    baseline_span = (baseline["t"], after)
    for method, ids, tolerance in (
        (
            "charge counter x voltage",
            ("power/battery/charge_counter", "power/battery/voltage"),
            0.02,
        ),
        ("power", ("power/battery/power",), 0.05),
    ):
        source = PowerSource("power/battery", method, ids, "power/battery/status")
        trace = build_power_trace(source, channels, series)
        figure = analyze_energy(trace, status, a, b, times, baseline_span)
        assert trace.refresh_period_s == pytest.approx(1.0, abs=0.1), method
        assert figure.energy_j == pytest.approx(true_gross, rel=tolerance), method
        assert figure.idle_power_w == pytest.approx(true_idle, rel=tolerance), method

    # The gauge reports current_now positive while discharging; qtop shows it negative.
    assert analysis.current_sign is not None
    assert analysis.current_sign.convention == POSITIVE_DISCHARGE
    currents = series["power/battery/current"].values
    raw = series["power/battery/current_now"].values
    assert max(currents) < 0 < min(raw)

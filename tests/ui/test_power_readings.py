"""The power pane's lines: the battery current in qtop's one sign convention, validity marked."""

from __future__ import annotations

from qtop.analysis.live import analyze_live, capture
from qtop.analysis.power_source import (
    METHOD_CHARGE_COUNTER,
    METHOD_CURRENT_VOLTAGE,
    METHOD_ENERGY_COUNTERS,
    METHOD_POWER,
    PowerSource,
)
from qtop.events import ChannelInfo, Channels, Header, Iteration, PhaseChange, Sample
from qtop.stats.model import SessionModel
from qtop.ui.panes.power import energy_line, power_now, readings_line, source_name

GROUP = "power/battery"
CHANNELS = (
    ChannelInfo(id=f"{GROUP}/status", kind="battery_status", unit="code"),
    ChannelInfo(id=f"{GROUP}/current", kind="current", unit="A"),
    ChannelInfo(id=f"{GROUP}/current_now", kind="current_raw", unit="A"),
    ChannelInfo(id=f"{GROUP}/voltage", kind="voltage", unit="V"),
    ChannelInfo(id=f"{GROUP}/power", kind="power", unit="W"),
)


def glasses_model(measure_s: float) -> SessionModel:
    """A gauge positive while discharging, read at 10 Hz, refreshing once a second."""
    model = SessionModel()
    model.apply(Header(session_id="s", profile={"name": "glasses"}))
    model.apply(Channels(t=0.0, channels=CHANNELS))
    model.apply(PhaseChange(t=0.0, phase="baseline"))
    model.apply(PhaseChange(t=12.0, phase="measure"))
    for k in range(round((12.0 + measure_s + 1.0) * 10)):
        t = k / 10
        amps = 0.14 if int(t) < 12 else 0.42 + 0.01 * (int(t) % 3)
        values = {
            f"{GROUP}/status": -1.0,
            f"{GROUP}/current": -amps,
            f"{GROUP}/current_now": amps,
            f"{GROUP}/voltage": 4.0,
            f"{GROUP}/power": amps * 4.0,
        }
        model.apply(Sample(t=t, seq=k, values=values))
    for index in range(round(measure_s / 0.1)):
        start = 12.0 + index * 0.1
        model.apply(
            Iteration(
                t=start + 0.1, seq=index, index=index, phase="measure", start=start,
                end=start + 0.1, latency_s=0.1,
            )
        )  # fmt: skip
    return model


def test_the_current_keeps_its_sign_and_names_the_gauges_convention():
    model = glasses_model(30.0)
    live = analyze_live(capture(model, ""))
    now = power_now(model, live.power_source)
    assert now is not None
    assert now.current_a == -0.42
    assert now.current_sign == "gauge: + discharging (inverted)"
    assert "│  -420 mA (gauge: + discharging (inverted))  4.00 V" in readings_line(now).plain


def test_an_energy_figure_from_too_few_readings_is_marked_on_screen():
    short = analyze_live(capture(glasses_model(8.0), ""))
    assert short.energy is not None and not short.energy.valid
    assert "mJ NOT VALID" in energy_line(short).plain
    long = analyze_live(capture(glasses_model(30.0), ""))
    assert long.energy is not None and long.energy.valid
    assert "NOT VALID" not in energy_line(long).plain


def test_the_source_is_named_by_what_it_is_and_how_power_comes_from_it():
    def named(group: str, method: str) -> str:
        return source_name(PowerSource(group, method, (f"{group}/x",), None))

    assert named("meter/ina226", METHOD_POWER) == "meter ina226 · power"
    assert named("power/battery", METHOD_CURRENT_VOLTAGE) == "supply battery · |I| × V"
    assert named("odpm", METHOD_ENERGY_COUNTERS) == "rails odpm · energy counters"
    assert named("power/battery", METHOD_CHARGE_COUNTER) == "supply battery · charge counter × V"

"""The metric families of deterministic sessions, read back through Prometheus's parsers."""

import math
import re

import pytest
from fixtures.make_ui_recordings import CURRENT, METER, glasses_events, sustained_events
from fixtures.sessions import CDSP, NSP, simple_session_events
from metrics.helpers import Scrape, fold, openmetrics_of, paced_events, text_of

from qtop.analysis.live import analyze_live, capture
from qtop.events import ChannelInfo, Channels, Header, PhaseChange, Sample
from qtop.metrics.capture import copy_model
from qtop.metrics.labels import MAX_LABEL_CHARS, MAX_ZONES


def last_sample_value(events, channel_id):
    return [e.values[channel_id] for e in events if isinstance(e, Sample)][-1]


@pytest.fixture(scope="module")
def simple():
    events = simple_session_events()
    return events, Scrape(text_of(fold(events)))


def test_latency_percentiles_are_the_fixture_s_known_answers(simple):
    _, scrape = simple
    measured = {"phase": "measure", "variant": ""}
    expected = {"0.5": 0.0595, "0.9": 0.0991, "0.95": 0.10405, "0.99": 0.10801}
    for quantile, seconds in expected.items():
        value = scrape.value("qtop_latency_seconds", quantile=quantile, **measured)
        assert value == pytest.approx(seconds, rel=1e-12)
    assert scrape.value("qtop_latency_seconds_count", **measured) == 100
    assert scrape.value("qtop_latency_seconds_sum", **measured) == pytest.approx(5.95)
    assert scrape.value("qtop_latency_min_seconds", **measured) == 0.010
    assert scrape.value("qtop_latency_max_seconds", **measured) == 0.109
    assert scrape.value("qtop_latency_seconds_count", phase="warmup") == 5
    assert scrape.value("qtop_latency_seconds", phase="warmup", quantile="0.5") == 0.2


def test_iteration_counts_by_phase_and_outcome(simple):
    _, scrape = simple
    assert scrape.value("qtop_iterations_total", phase="measure", outcome="ok") == 100
    assert scrape.value("qtop_iterations_total", phase="measure", outcome="failed") == 0
    assert scrape.value("qtop_iterations_total", phase="warmup", outcome="ok") == 5


def test_a_paced_run_s_misses_lateness_and_rates_are_the_latency_pane_s():
    scrape = Scrape(openmetrics_of(fold(paced_events())))
    measured = {"phase": "measure", "variant": "v1"}
    assert scrape.value("qtop_paced_iterations_total", **measured) == 40
    assert scrape.value("qtop_deadline_misses_total", **measured) == 10
    assert scrape.value("qtop_start_lateness_p50_seconds", **measured) == pytest.approx(0.004)
    assert scrape.value("qtop_start_lateness_max_seconds", **measured) == pytest.approx(0.008)
    assert scrape.value("qtop_target_rate_hertz", **measured) == 10.0
    assert scrape.value("qtop_deadline_seconds", **measured) == 0.05
    # 40 starts over 3.9 s + the last one's 8 ms lateness - the first's 0: about 10/s.
    assert scrape.value("qtop_achieved_rate_hertz", **measured) == pytest.approx(10.0, rel=0.01)
    assert 0.3 < scrape.value("qtop_duty_cycle_ratio", **measured) < 0.4
    # A run that is not paced serves none of them.
    unpaced = Scrape(text_of(fold(simple_session_events()))).families
    assert not unpaced["qtop_paced_iterations"].samples
    assert not unpaced["qtop_start_lateness_p95_seconds"].samples


def test_thermal_figures_are_the_last_and_highest_readings(simple):
    events, scrape = simple
    zone = NSP.removeprefix("thermal/")
    readings = [e.values[NSP] for e in events if isinstance(e, Sample)]
    assert scrape.value("qtop_temperature_celsius", zone=zone) == readings[-1]
    assert scrape.value("qtop_temperature_peak_celsius", zone=zone) == max(readings)
    assert scrape.value("qtop_temperature_trip_celsius", zone=zone, trip="passive") == 105.0
    assert scrape.value("qtop_cooling_state", cooling_device="cdsp") == 1.0
    assert last_sample_value(events, CDSP) == 1.0
    assert scrape.value("qtop_cooling_max_state", cooling_device="cdsp") == 12


def test_the_session_its_phase_and_its_labels(simple):
    events, scrape = simple
    assert scrape.value("qtop_phase", qtop_phase="done") == 1
    assert sum(scrape.all("qtop_phase").values()) == 1
    assert scrape.value("qtop_session_info", soc="", source="fixture") == 1
    assert scrape.value("qtop_events_total") == len(events)
    assert scrape.value("qtop_samples_total") == sum(isinstance(e, Sample) for e in events)
    assert scrape.value("qtop_link_up") == 1
    assert scrape.value("qtop_link_state", qtop_link_state="connected") == 1
    for name, family in scrape.families.items():
        for sample in family.samples:
            assert sample.labels["device"] == "fixture-board", name
            assert sample.labels["profile"] == "fixture-simple", name


def test_openmetrics_carries_types_and_units(simple):
    events, _ = simple
    scrape = Scrape(openmetrics_of(fold(events)), openmetrics=True)
    expected = {
        "qtop_latency_seconds": ("summary", "seconds"),
        "qtop_iterations": ("counter", ""),
        "qtop_phase": ("stateset", ""),
        "qtop_link_state": ("stateset", ""),
        "qtop_session": ("info", ""),
        "qtop_temperature_celsius": ("gauge", "celsius"),
        "qtop_link_gap_seconds": ("counter", "seconds"),
    }
    for name, (kind, unit) in expected.items():
        family = scrape.families[name]
        assert (family.type, family.unit) == (kind, unit), name
    assert scrape.value("qtop_latency_seconds", quantile="0.99", phase="measure") == (
        pytest.approx(0.10801, rel=1e-12)
    )


def test_energy_and_throttling_are_the_ui_s_live_analysis():
    model = fold(sustained_events())
    scrape = Scrape(text_of(model))
    analysis = analyze_live(capture(model, ""))
    energy, thermal = analysis.energy, analysis.thermal
    assert energy is not None and thermal is not None and thermal.onset_offset_s is not None
    gross = scrape.value("qtop_energy_per_inference_joules", basis="gross")
    assert gross == energy.energy_per_inference_j
    # 6.1-6.5 W for one inference every 0.2 s; net of the 2 W idle baseline.
    assert 1.1 < gross < 1.35
    assert scrape.value("qtop_energy_per_inference_joules", basis="net") == (
        energy.net_energy_per_inference_j
    )
    assert scrape.value("qtop_energy_per_inference_valid", basis="gross") == int(energy.valid)
    assert scrape.value("qtop_measured_power_watts") == energy.mean_power_w
    assert scrape.value("qtop_idle_power_watts") == pytest.approx(2.0, abs=0.05)
    assert scrape.value("qtop_throttling_detected") == 1
    onset = scrape.value("qtop_throttling_onset_seconds")
    assert onset == thermal.onset_offset_s
    assert 35 < onset < 50  # the fixture slows down 40 s into the measurement
    assert scrape.value("qtop_throttling_sustained_slowdown_ratio") == thermal.sustained_slowdown


def test_power_now_is_the_meter_s_last_reading():
    events = sustained_events()
    scrape = Scrape(text_of(fold(events)))
    power = scrape.value("qtop_power_watts", source="meter/ina226")
    assert power == last_sample_value(events, METER)
    assert scrape.has("qtop_power_peak_watts", source="meter/ina226")
    assert not scrape.has("qtop_battery_charging")  # a meter has no battery status


def test_a_battery_powered_run_with_two_variants_and_a_dropped_link():
    events = glasses_events()
    scrape = Scrape(text_of(fold(events)))
    assert scrape.label_values("qtop_latency_seconds_count", "variant") == ["w8a16", "w8a8"]
    failed = scrape.value("qtop_iterations_total", variant="w8a16", phase="measure",
                          outcome="failed")  # fmt: skip
    assert failed == 2
    assert scrape.value("qtop_iterations_total", variant="w8a16", phase="measure",
                        outcome="ok") == 98  # fmt: skip
    current = scrape.value("qtop_supply_current_amperes", source="power/battery")
    assert current == last_sample_value(events, CURRENT) < 0  # out of the battery
    assert scrape.value("qtop_battery_charging", source="power/battery") == 0
    assert scrape.value("qtop_link_disconnects_total") == 1
    assert scrape.value("qtop_link_reconnects_total") == 1
    assert scrape.value("qtop_link_gap_seconds_total") == pytest.approx(1.6)
    assert scrape.value("qtop_link_state", qtop_link_state="gap") == 1
    # The battery charged during the w8a16 measurement: no energy figure, and why.
    assert scrape.has("qtop_energy_per_inference_joules", variant="w8a8", basis="gross")
    assert scrape.value("qtop_energy_charging", variant="w8a8") == 0
    assert not scrape.has("qtop_energy_per_inference_joules", variant="w8a16")
    assert scrape.value("qtop_energy_charging", variant="w8a16") == 1


def test_a_copy_stays_as_it_was_while_the_model_goes_on():
    events = simple_session_events()
    model = fold(events[:60])
    copy = copy_model(model)
    before = text_of(copy)
    assert before == text_of(model)
    for event in events[60:]:
        model.apply(event)
    assert text_of(copy) == before
    assert text_of(model) != before


def hostile_model(zones: int) -> tuple:
    hostile = 'zone"}\n\x1b[31m{bad=' + "x" * 500
    channels = tuple(
        ChannelInfo(id=f"thermal/{hostile}{index}", kind="temperature", unit="C")
        for index in range(zones)
    )
    model = fold([
        Header(profile={"name": "p\n" * 100}, device={"hostname": "evil\x00host" * 20}),
        Channels(t=0.0, channels=channels),
        PhaseChange(t=0.0, phase="measure", variant="v" * 300),
        Sample(t=0.1, seq=0, values={c.id: 50.0 + i for i, c in enumerate(channels)}),
    ])  # fmt: skip
    return model, channels


def test_device_text_becomes_short_distinct_label_values_within_the_caps():
    model, _ = hostile_model(MAX_ZONES + 72)
    scrape = Scrape(text_of(model))
    zones = scrape.label_values("qtop_temperature_celsius", "zone")
    assert len(zones) == MAX_ZONES
    safe = re.compile(r"^[A-Za-z0-9_.:+#/@~-]*$")
    for family in scrape.families.values():
        for sample in family.samples:
            for value in sample.labels.values():
                assert len(value) <= MAX_LABEL_CHARS and safe.match(value), value
    # Each zone keeps its own series and its own reading, in order.
    values = sorted(scrape.all("qtop_temperature_celsius").values())
    assert values == [50.0 + i for i in range(MAX_ZONES)]


def test_the_endpoint_reports_what_the_caps_left_out():
    from qtop.metrics.server import SessionCollector

    class Tap:
        def capture(self):
            from qtop.metrics.capture import Capture

            return Capture(copy_model(model), 0.0)

    model, _ = hostile_model(MAX_ZONES + 72)
    collector = SessionCollector()
    collector.tap = Tap()
    scrape = Scrape(render(collector))
    assert scrape.value("qtop_session_up") == 1
    assert scrape.value("qtop_metrics_series_dropped", what="zone") == 72
    assert scrape.value("qtop_metrics_series_dropped", what="variant") == 0


def render(collector) -> str:
    from prometheus_client import CollectorRegistry, generate_latest

    registry = CollectorRegistry(auto_describe=False)
    registry.register(collector)
    return generate_latest(registry).decode()


def test_a_model_without_a_session_yet_still_renders():
    scrape = Scrape(text_of(fold([])))
    assert scrape.value("qtop_phase", qtop_phase="idle") == 1
    assert scrape.all("qtop_latency_seconds") == {}
    assert math.isclose(scrape.value("qtop_session_duration_seconds"), 0.0)

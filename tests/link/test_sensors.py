import pytest

from qtop.device import units
from qtop.device.probe import parse_probe
from qtop.device.refresh import RefreshEstimator
from qtop.device.sensors import plan_sensors
from qtop.errors import RunFailed
from qtop.events import Trip
from qtop.live.backoff import Backoff
from qtop.profiles import DeviceProfile, MeterChannel

PROBE = "\n".join(
    [
        "root\t/s",
        "id\thostname\tevk",
        "id\tuname\tLinux evk 6.6 aarch64",
        "id\tsoc_machine\tQCS9075",
        "id\tqnn\tqnn-net-run pid:123",
        "id\tqnn\tQNN SDK v2.43.0.251119_abc",
        "cap\tbash\t/bin/bash\t5\t5.2.15(1)-release",
        "cap\tpagesize\t16384",
        "cap\tspool\t/tmp/qtop",
        "zone\t/s/class/thermal/thermal_zone10\tnsp-0-0-0-thermal\t52000",
        "trip\t/s/class/thermal/thermal_zone10\t1\tpassive\t115000\t5000",
        "trip\t/s/class/thermal/thermal_zone10\t0\tpassive\t105000\t5000",
        "zone\t/s/class/thermal/thermal_zone2\tcpu-0-0-0-thermal\t45000",
        "zone\t/s/class/thermal/thermal_zone3\tcamera-0\t-273000",
        "zone\t/s/class/thermal/thermal_zone4\tcpu-0-0-0-thermal\t46000",
        "cooling\t/s/class/thermal/cooling_device0\tcdsp\t12",
        "supply\t/s/class/power_supply/usb\tusb\tUSB\tstatus",
        "supply\t/s/class/power_supply/battery\tbattery\tBattery\tstatus,current_now,voltage_now",
        "cpufreq\t/s/devices/system/cpu/cpufreq/policy4\tpolicy4\t2361600",
        "cpufreq\t/s/devices/system/cpu/cpufreq/policy0\tpolicy0\t1171200",
        "meter\t/s/class/hwmon/hwmon2/power1_input\t1500000",
        "end",
    ]
)


def test_probe_output_parses_into_identity_caps_and_sensors():
    probe = parse_probe(PROBE)
    assert probe.root == "/s"
    assert probe.identity["soc_machine"] == "QCS9075"
    assert probe.qnn_version == "2.43.0.251119_abc"
    assert probe.bash_path == "/bin/bash"
    assert probe.page_size == 16384
    assert probe.spool == "/tmp/qtop"
    assert [z.type for z in probe.zones][:2] == ["nsp-0-0-0-thermal", "cpu-0-0-0-thermal"]
    assert len(probe.zones[0].trips) == 2


def test_a_probe_cut_short_is_an_error_not_an_empty_device():
    with pytest.raises(RunFailed, match="stopped before its end"):
        parse_probe(PROBE.rsplit("\n", 1)[0], "evk")


def test_channels_are_matched_by_type_ordered_by_zone_and_converted():
    device = DeviceProfile(
        power_meter=(
            MeterChannel(path="/sys/class/hwmon/hwmon2/power1_input", quantity="power", unit="uW"),
        )
    )
    plan = plan_sensors(parse_probe(PROBE), device)
    ids = [c.id for c in plan.channels]
    assert ids == [
        "thermal/cpu-0-0-0-thermal",
        "thermal/camera-0",
        "thermal/cpu-0-0-0-thermal#2",
        "thermal/nsp-0-0-0-thermal",
        "cooling/cdsp",
        "power/battery/status",
        "power/battery/current",
        "power/battery/current_now",
        "power/battery/voltage",
        "power/battery/power",
        "meter/hwmon2-power1_input/power",
        "cpufreq/policy0",
        "cpufreq/policy4",
        "memory/command_rss",
    ]
    nsp = plan.channels[3]
    assert nsp.trips == (
        Trip(type="passive", temp_c=105.0, hyst_c=5.0),
        Trip(type="passive", temp_c=115.0, hyst_c=5.0),
    )
    assert plan.channels[4].max_state == 12
    assert plan.channels[9].label == "battery computed |I| x V"
    assert plan.channels[7].kind == "current_raw"
    raw = [
        "45000", "-273000", "", "52100", "3", "Discharging", "-420000", "3900000",
        "1500000", "1171200", "bogus", "100",
    ]  # fmt: skip
    values = plan.decode(raw)
    assert values == {
        "thermal/cpu-0-0-0-thermal": 45.0,
        "thermal/camera-0": None,
        "thermal/cpu-0-0-0-thermal#2": None,
        "thermal/nsp-0-0-0-thermal": 52.1,
        "cooling/cdsp": 3.0,
        "power/battery/status": -1.0,
        "power/battery/current": -0.42,
        "power/battery/current_now": -0.42,
        "power/battery/voltage": 3.9,
        "power/battery/power": pytest.approx(1.638),
        "meter/hwmon2-power1_input/power": 1.5,
        "cpufreq/policy0": 1171.2,
        "cpufreq/policy4": None,
        "memory/command_rss": 100 * 16384 / 2**20,
    }
    assert plan.reads[-1].kind == "command_rss"


def test_a_short_tick_gives_unavailable_values_not_zeros():
    plan = plan_sensors(parse_probe(PROBE), DeviceProfile(cpufreq="none", cooling_devices="none"))
    assert set(plan.decode(["45000"]).values()) == {45.0, None}


def test_selection_by_pattern_and_warnings_for_unmatched_names():
    device = DeviceProfile(thermal_zones=("nsp*", "gpu*"), power_supply="bms")
    plan = plan_sensors(parse_probe(PROBE), device)
    assert [c.id for c in plan.channels if c.kind == "temperature"] == ["thermal/nsp-0-0-0-thermal"]
    assert not any(c.kind == "current" for c in plan.channels)
    assert [(f.key, f.problem) for f in plan.findings] == [
        (
            "device.thermal_zones",
            "'gpu*' matches nothing (found: camera-0, cpu-0-0-0-thermal, nsp-0-0-0-thermal)",
        ),
        (
            "device.power_supply",
            "no supply named 'bms' on the device (found: usb, battery); no battery telemetry",
        ),
    ]
    assert plan.findings[0].fix.startswith("use names from the list above or from 'qtop probe'")
    assert plan.warnings == tuple(str(f) for f in plan.findings)
    assert plan.warnings[1].endswith(
        "; fix: name one of the supplies found, or use auto (the first of type Battery)"
    )


def test_current_direction_comes_from_status_not_the_drivers_sign():
    assert units.directed_current(-0.5, 1.0) == 0.5
    assert units.directed_current(0.5, -1.0) == -0.5
    # Only Charging sends current into the battery; full, idle or unknown supply the board.
    assert units.directed_current(0.5, 0.0) == -0.5
    assert units.directed_current(0.5, None) == -0.5
    assert units.status_code("Not charging") == 0.0
    assert units.status_code("") is None


def test_sentinels_and_failed_reads_are_none():
    assert units.millicelsius("-273000") is None
    assert units.millicelsius("") is None
    assert units.millicelsius("47000") == 47.0
    assert units.pages_to_mb("0", 4096) is None
    assert units.kilohertz_to_mhz("0") is None


def test_refresh_period_is_estimated_from_value_changes():
    estimator = RefreshEstimator(0.1, {"power/battery/power": "power", "cooling/cdsp": "cooling"})
    warnings = []
    for tick in range(100):
        t = tick * 0.1
        warnings += estimator.observe(t, {"power/battery/power": float(tick // 10)})
    assert estimator.periods() == {"power/battery/power": pytest.approx(1.0)}
    assert warnings == [
        "power/battery/power refreshes about every 1 s but is sampled every 0.1 s: its "
        "repeated values come from the sensor"
    ]


def test_a_sensor_as_fast_as_the_sampler_draws_no_warning():
    estimator = RefreshEstimator(0.1, {"thermal/nsp": "temperature"})
    warnings = [
        w for tick in range(50) for w in estimator.observe(tick / 10, {"thermal/nsp": tick})
    ]
    assert warnings == []
    assert estimator.periods()["thermal/nsp"] == pytest.approx(0.1)


def test_backoff_doubles_to_ten_seconds_within_its_jitter():
    backoff = Backoff()
    for attempt, base in [(1, 0.5), (2, 1.0), (3, 2.0), (5, 8.0), (6, 10.0), (30, 10.0)]:
        for _ in range(20):
            assert base * 0.75 <= backoff.delay(attempt) <= base * 1.25

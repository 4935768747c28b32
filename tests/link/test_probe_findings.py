"""sysfs_root's one meaning, and what the plan says when the device lacks what was asked."""

from __future__ import annotations

import subprocess
from dataclasses import replace

import pytest

from qtop.device.control import probe_script
from qtop.device.plan import build_run_plan
from qtop.device.probe import parse_probe
from qtop.device.sensors import meter_path, plan_sensors, zone_quantity
from qtop.errors import UsageError
from qtop.profiles import DeviceProfile, MeterChannel, load_profile_text

from .helpers import SHELLS, make_sysfs, probe_locally, profile_for

ANDROID_ZONES = "\n".join(
    [
        "root\t/sys",
        "zone\t/sys/class/thermal/thermal_zone0\tsocd\t13",
        "zone\t/sys/class/thermal/thermal_zone1\tvbat\t3980",
        "zone\t/sys/class/thermal/thermal_zone2\tpm8550b-ibat-lvl0\t5500",
        "zone\t/sys/class/thermal/thermal_zone3\tpm8550b-bcl-lvl1\t0",
        "zone\t/sys/class/thermal/thermal_zone4\tnsphvx-0\t41200",
        "zone\t/sys/class/thermal/thermal_zone5\tmdmss-0\t-273000",
        "cooling\t/sys/class/thermal/cooling_device0\tcdsp\t12\t0",
        "supply\t/sys/class/power_supply/battery\tbattery\tBattery\tstatus,current_now,voltage_now",
        "end",
    ]
)


def probe_of(*records: str, root: str = "/sys") -> str:
    return "\n".join([f"root\t{root}", *records, "end"])


def test_the_default_sysfs_root_is_sys_itself():
    assert DeviceProfile().sysfs_root == "/sys"
    profile = load_profile_text("name: p\nrun: {command: 'true', iterations: 1}\n")
    assert profile.device.sysfs_root == "/sys"


@pytest.mark.parametrize(
    ("root", "path", "read_at"),
    [
        ("/sys", "/sys/class/hwmon/hwmon2/power1_input", "/sys/class/hwmon/hwmon2/power1_input"),
        ("/srv/rig/sys", "/sys/class/hwmon/hwmon2/power1_input",
         "/srv/rig/sys/class/hwmon/hwmon2/power1_input"),
        ("/srv/rig/sys/", "/sys/bus/iio/devices/iio:device0/in_power0_raw",
         "/srv/rig/sys/bus/iio/devices/iio:device0/in_power0_raw"),
        ("/srv/rig/sys", "/dev/shm/meter/power_uw", "/dev/shm/meter/power_uw"),
        ("/srv/rig/sys", "/system-meter", "/system-meter"),
    ],
)  # fmt: skip
def test_a_meter_path_under_sys_is_read_under_the_root_and_any_other_as_it_is(root, path, read_at):
    assert meter_path(root, path) == read_at


@pytest.mark.parametrize("shell", SHELLS)
def test_the_probe_maps_meter_paths_as_the_host_does(shell, tmp_path):
    rig = make_sysfs(tmp_path / "rig")
    (rig / "class/hwmon/hwmon2").mkdir(parents=True)
    (rig / "class/hwmon/hwmon2/power1_input").write_text("2500000\n")
    outside = tmp_path / "meter_uw"
    outside.write_text("700000\n")
    meters = ["/sys/class/hwmon/hwmon2/power1_input", str(outside)]
    result = subprocess.run(
        [shell, "-s", "--", str(rig), str(tmp_path / "spool"), *meters],
        input=probe_script(),
        capture_output=True,
        text=True,
        check=True,
    )
    probe = parse_probe(result.stdout)
    assert probe.meters == {
        f"{rig}/class/hwmon/hwmon2/power1_input": "2500000",
        str(outside): "700000",
    }
    device = DeviceProfile(
        sysfs_root=str(rig),
        power_supply="none",
        power_meter=tuple(MeterChannel(path=m, quantity="power", unit="uW") for m in meters),
    )
    plan = plan_sensors(probe, device)
    meters_planned = [c for c in plan.channels if c.id.startswith("meter/")]
    assert [c.path for c in meters_planned] == [meter_path(str(rig), m) for m in meters]
    raw = {read.path: "" for read in plan.reads}
    raw.update({c.path: probe.meters[c.path] for c in meters_planned})
    values = plan.decode([raw[read.path] for read in plan.reads])
    assert [values[c.id] for c in meters_planned] == [2.5, 0.7]
    assert plan.findings == ()


def test_zones_that_are_not_temperatures_are_never_sampled_as_one():
    plan = plan_sensors(parse_probe(ANDROID_ZONES), DeviceProfile(power_supply="none"))
    temperatures = [c.id for c in plan.channels if c.kind == "temperature"]
    assert temperatures == ["thermal/nsphvx-0", "thermal/mdmss-0"]
    # The offline sensor's sentinel decodes to "unavailable", never to a temperature.
    raw = ["41200", "-273000", "0"]
    assert plan.decode(raw)["thermal/mdmss-0"] is None
    assert plan.decode(raw)["thermal/nsphvx-0"] == 41.2
    assert zone_quantity("vbat") == "battery voltage, mV"
    assert zone_quantity("pm8550b-ibat-lvl0") == "battery current, mA"
    assert zone_quantity("cpu-hw-trip-0") is None
    assert plan.findings == ()


def test_naming_a_zone_that_is_not_a_temperature_says_so():
    device = DeviceProfile(thermal_zones=("nsp*", "vbat"), power_supply="none")
    plan = plan_sensors(parse_probe(ANDROID_ZONES), device)
    assert [c.id for c in plan.channels if c.kind == "temperature"] == ["thermal/nsphvx-0"]
    (finding,) = plan.findings
    assert finding.key == "device.thermal_zones"
    assert finding.problem == (
        "'vbat' matches only vbat, which is not a temperature (battery voltage, mV); not sampled"
    )


def test_no_thermal_zone_where_all_were_asked_is_a_finding_with_its_fix():
    probe = parse_probe(probe_of("cooling\t/sys/class/thermal/cooling_device0\tcdsp\t12\t0"))
    plan = plan_sensors(probe, DeviceProfile(power_supply="none"))
    (finding,) = plan.findings
    assert finding.key == "device.thermal_zones"
    assert finding.problem == (
        "no thermal zone with a temperature in /sys/class/thermal; the run records no temperatures"
    )
    assert finding.fix.startswith("check 'ls /sys/class/thermal' on the device")
    assert "thermal_zones: none" in finding.fix
    assert plan.warnings == (str(finding),)
    assert str(finding) == f"device.thermal_zones: {finding.problem}; fix: {finding.fix}"


def test_only_non_temperature_zones_are_no_thermal_zone_either():
    probe = parse_probe(probe_of("zone\t/sys/class/thermal/thermal_zone0\tsocd\t13"))
    plan = plan_sensors(probe, DeviceProfile(power_supply="none", cooling_devices="none"))
    (finding,) = plan.findings
    assert "(only socd, which are not temperatures)" in finding.problem


def test_a_root_of_slash_gets_the_fix_that_names_sysfs_root():
    probe = parse_probe(probe_of(root="/"))
    plan = plan_sensors(probe, DeviceProfile(sysfs_root="/"))
    assert [f.key for f in plan.findings] == [
        "device.thermal_zones",
        "device.cooling_devices",
        "device.power_supply",
    ]
    assert "in /class/thermal" in plan.findings[0].problem
    for finding in plan.findings:
        assert finding.fix.startswith("device.sysfs_root is '/', but it names the directory")
        assert "remove sysfs_root from the profile (the default is /sys)" in finding.fix


def test_a_root_without_class_gets_the_fix_that_names_sysfs_root(tmp_path):
    result = subprocess.run(
        ["/bin/sh", "-s", "--", str(tmp_path / "nothing"), str(tmp_path / "spool")],
        input=probe_script(),
        capture_output=True,
        text=True,
        check=True,
    )
    probe = parse_probe(result.stdout)
    plan = plan_sensors(probe, DeviceProfile(sysfs_root=str(tmp_path / "nothing")))
    assert len(plan.findings) == 3
    assert plan.findings[0].fix.startswith(f"{tmp_path / 'nothing'} has no class/ directory")


def test_no_cooling_device_where_all_were_asked_is_a_finding():
    probe = parse_probe(probe_of("zone\t/sys/class/thermal/thermal_zone0\tcpu-0-0-0\t41000"))
    plan = plan_sensors(probe, DeviceProfile(power_supply="none"))
    (finding,) = plan.findings
    assert finding.key == "device.cooling_devices"
    assert finding.problem.startswith("no cooling device in /sys/class/thermal")
    assert "cooling_devices: none" in finding.fix


def test_no_power_source_where_auto_was_asked_is_a_finding_unless_a_meter_gives_power():
    usb = "supply\t/sys/class/power_supply/usb\tusb\tUSB\tstatus"
    zone = "zone\t/sys/class/thermal/thermal_zone0\tcpu-0-0-0\t41000"
    plan = plan_sensors(parse_probe(probe_of(usb, zone)), DeviceProfile(cooling_devices="none"))
    (finding,) = plan.findings
    assert finding.key == "device.power_supply"
    assert finding.problem == (
        "no power source: no supply of type Battery in /sys/class/power_supply (found: usb "
        "(USB)) and no power_meter; energy per inference cannot be measured"
    )
    assert finding.fix.startswith("add a power_meter (an INA2xx hwmon power*_input")
    meter = "meter\t/sys/class/hwmon/hwmon0/power1_input\t9500000"
    with_meter = DeviceProfile(
        cooling_devices="none",
        power_meter=(
            MeterChannel(path="/sys/class/hwmon/hwmon0/power1_input", quantity="power", unit="uW"),
        ),
    )
    assert plan_sensors(parse_probe(probe_of(usb, zone, meter)), with_meter).findings == ()


def test_a_supply_without_current_or_power_is_a_finding():
    probe = parse_probe(
        probe_of(
            "zone\t/sys/class/thermal/thermal_zone0\tcpu-0-0-0\t41000",
            "supply\t/sys/class/power_supply/battery\tbattery\tBattery\tstatus",
        )
    )
    plan = plan_sensors(probe, DeviceProfile(cooling_devices="none", power_supply="battery"))
    (finding,) = plan.findings
    assert finding.problem.startswith("supply 'battery' has neither current_now nor power_now")


def test_an_unreadable_meter_is_a_finding_that_points_at_qtop_probe():
    probe = parse_probe(
        probe_of(
            "zone\t/sys/class/thermal/thermal_zone0\tcpu-0-0-0\t41000",
            "meter\t/sys/class/hwmon/hwmon3/power1_input\t",
        )
    )
    device = DeviceProfile(
        cooling_devices="none",
        power_supply="none",
        power_meter=(
            MeterChannel(path="/sys/class/hwmon/hwmon3/power1_input", quantity="power", unit="uW"),
        ),
    )
    (finding,) = plan_sensors(probe, device).findings
    assert finding.key == "device.power_meter"
    assert "could not be read on the device" in finding.problem
    assert "hwmon numbers can change between boots" in finding.fix


def test_nothing_is_said_where_nothing_was_asked():
    probe = parse_probe(probe_of(root="/"))
    device = DeviceProfile(
        sysfs_root="/", thermal_zones="none", cooling_devices="none", power_supply="none"
    )
    plan = plan_sensors(probe, device)
    assert plan.findings == () and plan.warnings == ()


def test_a_device_without_a_readable_uptime_is_refused_before_the_launch(tmp_path):
    """Every clock line of the agent pairs its clock with /proc/uptime: the plan refuses
    rather than launch a run that would wait for it for ever."""
    profile = profile_for(
        make_sysfs(tmp_path / "sys"), tmp_path / "spool", "{command: 'true', iterations: 1}"
    )
    probe = probe_locally("sh", profile)
    assert probe.has("uptime")
    sensors = plan_sensors(probe, profile.device)
    build_run_plan(profile, probe, sensors, shell="sh", run_id="r1")
    caps = {name: value for name, value in probe.caps.items() if name != "uptime"}
    with pytest.raises(UsageError) as refused:
        build_run_plan(profile, replace(probe, caps=caps), sensors, shell="sh", run_id="r1")
    assert "/proc/uptime is not readable" in refused.value.problem
    assert refused.value.fix == "run qtop as a user that can read /proc/uptime"

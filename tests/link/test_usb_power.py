"""A device charging from its cable: the session says its battery figures mean nothing."""

from __future__ import annotations

from pathlib import Path

from qtop.device.plan import RunOptions
from qtop.live.backoff import Backoff
from qtop.live.source import LiveSource
from qtop.profiles import load_profile_text
from qtop.transport.local import LocalTransport

from .helpers import make_sysfs
from .recording import of_kind, record


def tree(tmp_path: Path, status: str, usb_online: str | None) -> Path:
    sysfs = make_sysfs(tmp_path / "sys")
    (sysfs / "class/power_supply/battery/status").write_text(status + "\n")
    if usb_online is not None:
        usb = sysfs / "class/power_supply/usb"
        usb.mkdir(parents=True)
        (usb / "type").write_text("USB\n")
        (usb / "online").write_text(usb_online + "\n")
    (sysfs / "hwmon").mkdir()
    (sysfs / "hwmon/power1_input").write_text("1500000\n")
    return sysfs


async def warnings_of_a_run(tmp_path: Path, sysfs: Path, meter: bool = False) -> list[str]:
    meters = (
        ", power_meter: [{path: "
        f"'{sysfs}/hwmon/power1_input', quantity: power, unit: uW, label: vdd_npu}}]"
        if meter
        else ""
    )
    profile = load_profile_text(
        f"device: {{sysfs_root: '{sysfs}', spool_dir: '{tmp_path / 'spool'}', "
        f"sample_interval: 50ms{meters}}}\n"
        "run: {command: 'sleep 0.01', warmup: 0, iterations: 2, min_iterations: 2}\n",
        "usb.yaml",
    )
    source = LiveSource(
        profile,
        LocalTransport(),
        run_options=RunOptions(calibrations=3),
        backoff=Backoff(initial_s=0.05, maximum_s=0.2),
    )
    events = await record(source, tmp_path / "run.jsonl")
    assert events[-1]["reason"] == "completed"
    return [e["text"] for e in of_kind(events, "log") if e["level"] == "warning"]


async def test_charging_over_usb_is_a_warning_with_the_ways_out(tmp_path):
    warnings = await warnings_of_a_run(tmp_path, tree(tmp_path, "Charging", "1"))
    usb = [text for text in warnings if "external power" in text]
    assert len(usb) == 1
    text = usb[0]
    assert text.startswith(
        "the device is on external power (usb online) and its battery battery reports "
        "Charging: its current_now shows the charger"
    )
    assert "device.power_meter" in text and "dumpsys battery suspend_input" in text
    assert "'dumpsys battery unplug' only changes what Android reports" in text


async def test_with_a_meter_the_warning_points_at_the_rails(tmp_path):
    sysfs = tree(tmp_path, "Full", "1")
    warnings = await warnings_of_a_run(tmp_path, sysfs, meter=True)
    usb = [text for text in warnings if "external power" in text]
    assert len(usb) == 1 and "energy should come from the rails (vdd_npu (uW))" in usb[0]


async def test_a_charging_battery_is_enough_to_tell(tmp_path):
    warnings = await warnings_of_a_run(tmp_path, tree(tmp_path, "Charging", None))
    assert any(
        text.startswith("the device is on external power and its battery battery reports Charging")
        for text in warnings
    )


async def test_a_device_on_its_battery_gets_no_such_warning(tmp_path):
    # A USB supply online while the battery discharges: charging suspended, the battery pays.
    for status, online in (("Discharging", "0"), ("Not charging", None), ("Discharging", "1")):
        run_dir = tmp_path / f"{status}-{online}"
        run_dir.mkdir()
        warnings = await warnings_of_a_run(run_dir, tree(run_dir, status, online))
        assert not [text for text in warnings if "external power" in text], (status, online)

"""A device charging from its cable: the session says its battery figures mean nothing."""

from __future__ import annotations

from pathlib import Path

from .helpers import make_sysfs
from .recording import warnings_of_a_short_local_run


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
    return await warnings_of_a_short_local_run(tmp_path, sysfs, meters)


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

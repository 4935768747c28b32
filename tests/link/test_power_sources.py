"""Battery and ODPM power sources: probed and read per tick by real shells, builtins only."""

import csv
import io
import shutil
import subprocess
from pathlib import Path

import pytest

from qtop.device.control import probe_script
from qtop.device.plan import _tick_sh
from qtop.device.probe import ProbeResult, parse_probe
from qtop.device.sensors import ODPM_ENERGY, plan_sensors

from .helpers import make_sysfs, profile_for

SHELLS = [
    pytest.param([path], id=name)
    for name, path in (("dash", "/bin/dash"), ("bash", "/bin/bash"), ("mksh", "/usr/bin/mksh"))
    if Path(path).exists()
]
if shutil.which("busybox"):
    SHELLS.append(pytest.param([shutil.which("busybox"), "sh"], id="busybox"))

PIXEL_ODPM = (
    "t=358356\n"
    "CH0(T=358356)[S10M_VDD_TPU], 761330\n"
    "CH1(T=358356)[VSYS_PWR_DISPLAY], 12000000\n"
    "CH2(T=358356)[L2M_ALIVE], 5\n"
)
OLDER_ODPM = "123456\nVDD_NSP,4000000\nVDD_CX,250\n"


def write(root: Path, relative: str, text: str) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def android_tree(root: Path) -> Path:
    """make_sysfs's board, with a gauge positive while discharging and two ODPM monitors."""
    make_sysfs(root)
    write(root, "class/power_supply/battery/current_now", "420000\n")
    write(root, "class/power_supply/battery/charge_counter", "2512345\n")
    pixel = "bus/iio/devices/iio:device0"
    write(root, f"{pixel}/name", "s2mpg10-odpm\n")
    write(root, f"{pixel}/energy_value", PIXEL_ODPM)
    rails = "CH0[S10M_VDD_TPU]:TPU\nCH1[VSYS_PWR_DISPLAY]:Display\nCH2[L2M_ALIVE]:DDR\n"
    write(root, f"{pixel}/enabled_rails", rails)
    write(root, "bus/iio/devices/iio:device1/name", "older-odpm\n")
    write(root, "bus/iio/devices/iio:device1/energy_value", OLDER_ODPM)
    write(root, "bus/iio/devices/iio:device1/enabled_rails", "VDD_NSP:NSP\nVDD_CX:CX\n")
    # An accelerometer: an iio device without energy counters.
    write(root, "bus/iio/devices/iio:device2/name", "bmi160\n")
    write(root, "bus/iio/devices/iio:device2/in_accel_x_raw", "12\n")
    return root


def probe_with(shell: list[str], profile) -> ProbeResult:
    device = profile.device
    done = subprocess.run(
        [*shell, "-s", "--", device.sysfs_root, device.spool_dir],
        input=probe_script(),
        capture_output=True,
        text=True,
        check=True,
    )
    return parse_probe(done.stdout)


def tick_values(shell: list[str], plan) -> dict[str, float | None]:
    """One tick of the generated tick.sh, with no PATH: only builtins can run."""
    script = f"T='\t'; qtop_dir=/nonexistent\n{_tick_sh(plan)}l=; qtop_tick; echo \"$l\"\n"
    done = subprocess.run(
        [*shell, "-c", script], capture_output=True, text=True, env={"PATH": "/nonexistent"}
    )
    assert done.returncode == 0, done.stderr
    fields = done.stdout.rstrip("\n").split("\t")[1:]
    assert len(fields) == plan.field_count
    return plan.decode(fields)


@pytest.mark.parametrize("shell", SHELLS)
def test_odpm_monitors_and_the_charge_counter_are_probed_and_read(tmp_path, shell):
    root = android_tree(tmp_path / "sys")
    profile = profile_for(root, tmp_path / "spool", "{command: 'true', iterations: 1}")
    probe = probe_with(shell, profile)
    pixel, older = probe.odpm
    assert (pixel.name, pixel.rails) == (
        "s2mpg10-odpm",
        ("S10M_VDD_TPU", "VSYS_PWR_DISPLAY", "L2M_ALIVE"),
    )
    assert pixel.subsystems == {
        "S10M_VDD_TPU": "TPU",
        "VSYS_PWR_DISPLAY": "Display",
        "L2M_ALIVE": "DDR",
    }
    assert (older.name, older.rails, older.subsystems) == (
        "older-odpm",
        ("VDD_NSP", "VDD_CX"),
        {"VDD_NSP": "NSP", "VDD_CX": "CX"},
    )
    plan = plan_sensors(probe, profile.device)
    assert [r.fields for r in plan.reads if r.kind == ODPM_ENERGY] == [4, 3]
    clocks = [c.id for c in plan.channels if c.kind == "energy_time"]
    assert clocks == ["odpm/iio_device0/time", "odpm/iio_device1/time"]
    rails = [c for c in plan.channels if c.kind == "energy"]
    assert [c.id for c in rails] == [
        "odpm/iio_device0/S10M_VDD_TPU",
        "odpm/iio_device0/VSYS_PWR_DISPLAY",
        "odpm/iio_device0/L2M_ALIVE",
        "odpm/iio_device1/VDD_NSP",
        "odpm/iio_device1/VDD_CX",
    ]
    assert rails[0].label == "s2mpg10-odpm S10M_VDD_TPU (TPU): energy since boot"
    values = tick_values(shell, plan)
    assert values["odpm/iio_device0/time"] == pytest.approx(358.356)
    assert values["odpm/iio_device1/time"] == pytest.approx(123.456)
    assert values["odpm/iio_device0/S10M_VDD_TPU"] == pytest.approx(0.76133)
    assert values["odpm/iio_device0/VSYS_PWR_DISPLAY"] == pytest.approx(12.0)
    assert values["odpm/iio_device0/L2M_ALIVE"] == pytest.approx(5e-6)
    assert values["odpm/iio_device1/VDD_NSP"] == pytest.approx(4.0)
    assert values["odpm/iio_device1/VDD_CX"] == pytest.approx(250e-6)
    # qtop's convention everywhere, the driver's own sign beside it.
    assert values["power/battery/current"] == pytest.approx(-0.42)
    assert values["power/battery/current_now"] == pytest.approx(0.42)
    assert values["power/battery/charge_counter"] == pytest.approx(2.512345)
    assert values["thermal/nsp-0-0-0-thermal"] == 52.0


@pytest.mark.parametrize("shell", SHELLS)
def test_a_vanished_or_reordered_energy_file_gives_unavailable_rails_not_shifted_values(
    tmp_path, shell
):
    root = android_tree(tmp_path / "sys")
    profile = profile_for(root, tmp_path / "spool", "{command: 'true', iterations: 1}")
    plan = plan_sensors(probe_with(shell, profile), profile.device)
    (root / "bus/iio/devices/iio:device0/energy_value").unlink()
    reordered = "t=1\nVDD_CX,260\nVDD_NSP,4100000\n"
    (root / "bus/iio/devices/iio:device1/energy_value").write_text(reordered)
    values = tick_values(shell, plan)
    assert values["odpm/iio_device1/time"] == pytest.approx(0.001)
    del values["odpm/iio_device1/time"]
    assert [v for k, v in values.items() if k.startswith("odpm/")] == [None] * 6
    # Every other channel is still where it belongs.
    assert values["power/battery/voltage"] == pytest.approx(3.9)
    assert values["cpufreq/policy0"] == pytest.approx(1171.2)


def test_power_supply_none_leaves_the_odpm_rails_out(tmp_path):
    root = android_tree(tmp_path / "sys")
    profile = profile_for(
        root, tmp_path / "spool", "{command: 'true', iterations: 1}", "power_supply: none"
    )
    plan = plan_sensors(probe_with(["/bin/dash"], profile), profile.device)
    assert not [c for c in plan.channels if c.kind in ("energy", "current", "charge")]


def test_every_output_shows_the_battery_current_in_one_convention(tmp_path):
    """A gauge positive while discharging: CSV, report and the live pane all say -0.42 A."""
    from qtop.analysis.energy import PowerSource
    from qtop.analysis.live import analyze_live, capture
    from qtop.events import Channels, Header, Sample
    from qtop.export.csv import write_samples_csv
    from qtop.report.render import render
    from qtop.report.summary import summarize_model
    from qtop.stats.model import SessionModel
    from qtop.ui.panes.power import power_now

    root = android_tree(tmp_path / "sys")
    profile = profile_for(root, tmp_path / "spool", "{command: 'true', iterations: 1}")
    plan = plan_sensors(probe_with(["/bin/dash"], profile), profile.device)
    events = [Header(session_id="s"), Channels(t=0.0, channels=plan.channels)]
    for k in range(30):
        events.append(Sample(t=k * 0.1, seq=k, values=tick_values(["/bin/dash"], plan)))
    out = io.StringIO()
    write_samples_csv(events, out)
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert float(rows[-1]["power/battery/current_A"]) == pytest.approx(-0.42)
    assert float(rows[-1]["power/battery/current_now_A"]) == pytest.approx(0.42)
    model = SessionModel()
    for event in events:
        model.apply(event)
    table = render([summarize_model(model, "run.jsonl")], "text")
    current_row = next(line for line in table.splitlines() if "power/battery/current " in line)
    assert current_row.split()[1:3] == ["A", "-0.42"]
    # The static ODPM counters here are the live pane's source; the battery's is shown as such.
    assert analyze_live(capture(model, "")).power_source.group == "odpm"
    battery = PowerSource(
        "power/battery", "power", ("power/battery/power",), "power/battery/status"
    )
    now = power_now(model, battery)
    assert now is not None and now.current_a == pytest.approx(-0.42)
    assert now.current_sign == "gauge: + discharging (inverted)"

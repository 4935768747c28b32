"""The two simulated boards look like their real counterparts, not like qtop's expectations."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from qtop.errors import UsageError
from qtop.sim import SimBoard
from qtop.sim.config import CoolingSpec, RawZoneSpec, default_config
from qtop.sim.npu import NpuArbiter
from qtop.sim.sensors import SensorLoop

from .helpers import BoardShell


def make_loop(root: Path, variant: str, time_scale: float = 1.0) -> tuple[SensorLoop, list]:
    clock = [0.0]
    npu = NpuArbiter(lambda: clock[0])
    loop = SensorLoop(default_config(variant), root, npu, seed=1, time_scale=time_scale, start=0.0)
    return loop, clock


def read(path: Path) -> str:
    return path.read_text().strip()


def types_in(root: Path, kind: str) -> list[str]:
    entries = sorted(
        (root / "class/thermal").glob(f"{kind}*"),
        key=lambda p: int(p.name.removeprefix(kind)),
    )
    return [read(entry / "type") for entry in entries]


def test_the_glasses_name_zones_and_cooling_devices_as_an_android_kernel(sysfs_dir: Path) -> None:
    make_loop(sysfs_dir, "glasses")
    assert types_in(sysfs_dir, "thermal_zone") == [
        "socd", "vbat", "ibat-lvl0", "mdmss-0", "aoss-0", "cpu-0-0-0", "cpu-0-1-0",
        "cpu-0-2-0", "cpu-0-3-0", "cpuss-0", "gpuss-0", "nsphvx-0", "nsphvx-1", "nsphmx-0",
        "nsphmx-1", "ddr", "pm8550_tz", "sys-therm-0", "sys-therm-1", "shell_front", "battery",
    ]  # fmt: skip
    assert not [t for t in types_in(sysfs_dir, "thermal_zone") if t.endswith("-thermal")]
    assert types_in(sysfs_dir, "cooling_device") == [
        "thermal-cpufreq-0", "cdsp", "cdsp_hw", "cdsp_sw_hvx", "cdsp_sw_hmx",
    ]  # fmt: skip
    zones = sysfs_dir / "class/thermal"
    assert read(zones / "thermal_zone3/temp") == "-273000"
    assert read(zones / "thermal_zone0/temp") == "13"  # socd: 100 - 87 %
    assert 4100 < int(read(zones / "thermal_zone1/temp")) < 4300  # vbat, mV
    assert 130 <= int(read(zones / "thermal_zone2/temp")) <= 150  # ibat, mA at idle
    assert read(zones / "thermal_zone11/trip_point_0_temp") == "95000"
    assert list((sysfs_dir / "class/hwmon").iterdir()) == []


def test_the_offline_sensor_stays_offline_while_the_board_heats(sysfs_dir: Path) -> None:
    loop, clock = make_loop(sysfs_dir, "glasses", time_scale=40.0)
    loop.npu.set_busy(True)
    offline = sysfs_dir / "class/thermal/thermal_zone3/temp"
    nsp = sysfs_dir / "class/thermal/thermal_zone11/temp"
    start = int(read(nsp))
    for step in range(1, 41):
        clock[0] = step * 0.05
        loop.tick(clock[0])
        assert read(offline) == "-273000"
    assert int(read(nsp)) > start + 5000


def test_the_evk_keeps_upstream_names_and_has_an_ina226_on_its_input(sysfs_dir: Path) -> None:
    loop, clock = make_loop(sysfs_dir, "evk", time_scale=40.0)
    types = types_in(sysfs_dir, "thermal_zone")
    assert all(t.endswith("-thermal") for t in types) and "nsp-0-0-0-thermal" in types
    assert types_in(sysfs_dir, "cooling_device") == ["cpufreq-cpu0", "cpufreq-cpu4", "cdsp"]
    assert list((sysfs_dir / "class/power_supply").iterdir()) == []
    hwmon = sysfs_dir / "class/hwmon/hwmon0"
    assert hwmon.is_symlink()
    assert "i2c" in str(hwmon.resolve().relative_to(sysfs_dir.resolve()))
    assert read(hwmon / "name") == "ina226"

    def reading() -> tuple[float, float, float]:
        watts = int(read(hwmon / "power1_input")) / 1e6
        return watts, int(read(hwmon / "curr1_input")) / 1e3, int(read(hwmon / "in1_input")) / 1e3

    idle_watts, amps, volts = reading()
    assert 9 < idle_watts < 10.5
    assert idle_watts == pytest.approx(amps * volts, rel=0.01)
    assert 11.9 < volts < 12.0
    loop.npu.set_busy(True)
    for step in range(1, 21):
        clock[0] = step * 0.05
        loop.tick(clock[0])
    busy_watts, _, busy_volts = reading()
    assert busy_watts > idle_watts + 5
    assert busy_volts < volts  # the rail sags under load


def test_the_meter_refreshes_every_100_ms(sysfs_dir: Path) -> None:
    loop, clock = make_loop(sysfs_dir, "evk")
    power = sysfs_dir / "class/hwmon/hwmon0/power1_input"
    last, changes = read(power), []
    for step in range(1, 21):
        clock[0] = step * 0.05
        loop.tick(clock[0])
        if read(power) != last:
            changes.append(round(clock[0], 2))
            last = read(power)
    assert changes == [round(0.1 * i, 2) for i in range(1, 11)]


def test_glasses_sessions_have_the_usual_tools_but_no_bash(tmp_path: Path) -> None:
    with SimBoard(tmp_path / "state", variant="glasses") as board:
        shell = BoardShell(board)
        result = shell.run(
            "for t in bash python3 sh setsid tail date sleep timeout mkdir; do "
            'printf "%s=%s\\n" "$t" "$(command -v $t)"; done'
        )
    found = dict(line.split("=", 1) for line in result.stdout.splitlines())
    assert found["bash"] == "" and found["python3"] == ""
    for tool in ("sh", "setsid", "tail", "date", "sleep", "timeout", "mkdir"):
        assert found[tool] == f"{board.system_bin_dir}/{tool}"
    assert board.session_env()["PATH"] == f"{board.bin_dir}:{board.system_bin_dir}"


def test_evk_sessions_keep_the_full_path(tmp_path: Path) -> None:
    with SimBoard(tmp_path / "state", variant="evk") as board:
        result = BoardShell(board).run("command -v bash")
    assert result.returncode == 0 and result.stdout.strip().endswith("/bash")


def test_a_config_names_what_it_gets_wrong() -> None:
    glasses = default_config("glasses")
    with pytest.raises(UsageError, match="unknown reading 'volts'"):
        replace(glasses, raw_zones=(RawZoneSpec("vbat", "volts"),)).validate()
    with pytest.raises(UsageError, match="needs a 'cdsp' cooling device"):
        replace(glasses, cooling=(CoolingSpec("cdsp_hw", 3),)).validate()


@pytest.mark.parametrize("variant", ["evk", "glasses"])
async def test_the_profile_snippet_reads_the_boards_power(tmp_path: Path, variant: str) -> None:
    from qtop.profiles import builtin_profile_dir, load_profile, load_profile_text
    from qtop.sim import start_sim

    async with start_sim(tmp_path / "sim", variant=variant) as sim:
        snippet = sim.profile_snippet()
    profile = load_profile_text(f"name: snip\n{snippet}run: {{command: ':', iterations: 1}}\n")
    shipped = load_profile(builtin_profile_dir() / f"sim-{variant}.yaml").device
    assert profile.device.sysfs_root == shipped.sysfs_root == "$QTOP_SIM_SYSFS"
    assert profile.device.power_meter == shipped.power_meter
    if variant == "evk":
        assert profile.device.power_supply == "none"
        assert [m.path for m in profile.device.power_meter] == [
            "/sys/class/hwmon/hwmon0/power1_input",
            "/sys/class/hwmon/hwmon0/curr1_input",
            "/sys/class/hwmon/hwmon0/in1_input",
        ]
    else:
        assert profile.device.power_meter == ()

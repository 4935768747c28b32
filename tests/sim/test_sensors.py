"""The sysfs tree and its refresh schedule, driven by a fake clock."""

from __future__ import annotations

import itertools
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest

from qtop.sim.config import default_config
from qtop.sim.npu import NpuArbiter
from qtop.sim.sensors import SensorLoop


def make_loop(root: Path, variant: str = "evk", start: float = 0.0) -> SensorLoop:
    return SensorLoop(
        default_config(variant), root, NpuArbiter(lambda: 0.0), seed=1, time_scale=1.0, start=start
    )


def read(path: Path) -> str:
    return path.read_text().strip()


def zone_by_type(root: Path, zone_type: str) -> Path:
    """The thermal zone of that type: numbers say nothing, as on a real board."""
    (zone,) = [
        z for z in (root / "class/thermal").glob("thermal_zone*") if read(z / "type") == zone_type
    ]
    return zone


def test_the_tree_has_lemans_zones_trips_and_cooling_devices(sysfs_dir: Path) -> None:
    root = sysfs_dir
    make_loop(root)
    zones = sorted((root / "class/thermal").glob("thermal_zone*"), key=lambda p: int(p.name[12:]))
    types = [read(zone / "type") for zone in zones]
    assert types[:2] == ["aoss-0-thermal", "cpu-0-0-0-thermal"]
    assert {"nsp-0-0-0-thermal", "nsp-1-2-0-thermal", "gpuss-0-thermal", "ddrss-0-thermal"} <= set(
        types
    )
    assert len(types) == 18
    nsp = zones[types.index("nsp-0-0-0-thermal")]
    assert nsp.is_symlink()
    assert read(nsp / "mode") == "enabled"
    assert [read(nsp / f"trip_point_{i}_type") for i in range(3)] == [
        "passive",
        "passive",
        "critical",
    ]
    assert read(nsp / "trip_point_0_temp") == "105000"
    assert read(nsp / "trip_point_0_hyst") == "5000"
    assert 40000 <= int(read(nsp / "temp")) <= 45000
    devices = sorted((root / "class/thermal").glob("cooling_device*"))
    assert [read(d / "type") for d in devices] == ["cpufreq-cpu0", "cpufreq-cpu4", "cdsp"]
    assert read(devices[2] / "max_state") == "12" and read(devices[2] / "cur_state") == "0"
    policy = root / "devices/system/cpu/cpufreq/policy0/scaling_cur_freq"
    assert read(policy) == "1171200"
    assert list((root / "class/power_supply").iterdir()) == []


def test_the_glasses_gauge_is_positive_while_discharging(sysfs_dir: Path) -> None:
    root = sysfs_dir
    make_loop(root, "glasses")
    battery = root / "class/power_supply/battery"
    assert read(battery / "type") == "Battery"
    assert read(battery / "status") == "Discharging"
    assert read(battery / "capacity") == "87"
    # As some Android vendors report it (the kernel ABI would say negative).
    assert 137000 <= int(read(battery / "current_now")) <= 143000
    assert 4_100_000 < int(read(battery / "voltage_now")) < 4_300_000
    assert int(read(battery / "charge_counter")) == 300 * 870


def test_a_kernel_abi_gauge_can_be_configured(sysfs_dir: Path) -> None:
    base = default_config("glasses")
    assert base.battery is not None
    config = replace(base, battery=replace(base.battery, discharge_sign=-1))
    SensorLoop(config, sysfs_dir, NpuArbiter(lambda: 0.0), seed=1, time_scale=1.0, start=0.0)
    assert int(read(sysfs_dir / "class/power_supply/battery/current_now")) < 0


def odpm_counters(root: Path) -> tuple[int, dict[str, int]]:
    lines = read(root / "bus/iio/devices/iio:device0/energy_value").splitlines()
    rails = {}
    for line in lines[1:]:
        name = line[line.index("[") + 1 : line.index("]")]
        rails[name] = int(line.rsplit(", ", 1)[1])
    return int(lines[0].removeprefix("t=")), rails


def test_odpm_rails_integrate_the_simulated_power_exactly(sysfs_dir: Path) -> None:
    root = sysfs_dir
    clock = [100.0]
    npu = NpuArbiter(lambda: clock[0])
    loop = SensorLoop(default_config("glasses"), root, npu, seed=1, time_scale=30.0, start=clock[0])
    device = root / "bus/iio/devices/iio:device0"
    assert device.is_symlink()
    assert read(device / "name") == "qtop-sim-odpm"
    assert read(device / "enabled_rails").splitlines() == [
        "CH0[VDD_NSP]:NSP",
        "CH1[VSYS_PWR_SOC]:SoC",
    ]
    _, start = odpm_counters(root)
    snapshots = []
    for step in range(1, 401):
        clock[0] = 100.0 + step * 0.05
        npu.set_busy(60 <= step < 300 and step % 7 != 0)
        loop.tick(clock[0])
        if step in (40, 120, 400):
            snapshots.append((clock[0], odpm_counters(root)))
    assert snapshots[0][1][1]["VDD_NSP"] == start["VDD_NSP"]  # idle NPU: its rail stands still
    for (t0, (_, a)), (t1, (stamp, b)) in itertools.pairwise(snapshots):
        assert stamp == round(t1 * 1000)
        drawn = sum(b.values()) - sum(a.values())
        # Integer µWs per rail: the counters agree with the truth to a few µWs.
        assert abs(drawn - loop.true_energy_j(t0, t1) * 1e6) <= 3
    busy = loop.true_energy_j(103.0, 115.0) / 12.0
    idle = loop.true_energy_j(100.0, 102.0) / 2.0
    assert idle == pytest.approx(0.14 * 4.17, rel=0.02)
    assert busy > 2 * idle


def test_the_charge_counter_falls_by_the_charge_drawn(sysfs_dir: Path) -> None:
    root = sysfs_dir
    clock = [0.0]
    npu = NpuArbiter(lambda: clock[0])
    loop = SensorLoop(default_config("glasses"), root, npu, seed=1, time_scale=1.0, start=0.0)
    counter = root / "class/power_supply/battery/charge_counter"
    volts = root / "class/power_supply/battery/voltage_now"
    npu.set_busy(True)
    readings = []
    for step in range(1, 121):
        clock[0] = step * 0.05
        loop.tick(clock[0])
        if step % 20 == 0:
            readings.append((int(read(counter)), int(read(volts)) / 1e6))
    # Refreshed with the gauge, once a second: 1, 2, ... 6 s.
    drawn_uah = readings[0][0] - readings[-1][0]
    mean_volts = sum(v for _, v in readings) / len(readings)
    assert drawn_uah * 3.6e-3 * mean_volts == pytest.approx(loop.true_energy_j(1.0, 6.0), rel=0.01)


def test_the_evk_has_neither_battery_nor_power_monitor(sysfs_dir: Path) -> None:
    make_loop(sysfs_dir, "evk")
    assert not (sysfs_dir / "bus").exists()
    assert list((sysfs_dir / "class/power_supply").iterdir()) == []


def test_each_sensor_refreshes_at_its_own_period(sysfs_dir: Path) -> None:
    root = sysfs_dir
    loop = make_loop(root, "glasses")
    watched = {
        "nsp": zone_by_type(root, "nsphvx-0") / "temp",
        "gpu": zone_by_type(root, "gpuss-0") / "temp",
        "fuel gauge": root / "class/power_supply/battery/current_now",
    }
    last = {name: read(path) for name, path in watched.items()}
    changes: dict[str, list[float]] = {name: [] for name in watched}
    for step in range(1, 61):
        now = step * 0.05
        loop.tick(now)
        for name, path in watched.items():
            value = read(path)
            if value != last[name]:
                changes[name].append(round(now, 2))
                last[name] = value
    assert changes["nsp"] == [round(0.1 * i, 2) for i in range(1, 31)]
    assert changes["gpu"] == [0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0, 2.25, 2.5, 2.75, 3.0]
    assert changes["fuel gauge"] == [1.0, 2.0, 3.0]


def test_readers_never_see_a_torn_or_empty_value(sysfs_dir: Path) -> None:
    root = sysfs_dir
    loop = make_loop(root, "glasses")
    paths = [
        zone_by_type(root, "nsphvx-0") / "temp",
        root / "class/power_supply/battery/current_now",
    ]
    bad: list[str] = []
    stop = threading.Event()

    def reader() -> None:
        while not stop.is_set():
            for path in paths:
                text = path.read_text()
                if not text.endswith("\n") or not text.strip().lstrip("-").isdigit():
                    bad.append(text)
            time.sleep(0)

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        for step in range(1, 301):
            loop.tick(step * 0.5)
    finally:
        stop.set()
        thread.join()
    assert bad == []
    assert not [p for p in (root / "devices").rglob(".*")]


def test_the_npu_load_heats_the_nsp_and_steps_cdsp(sysfs_dir: Path) -> None:
    root = sysfs_dir
    clock = [0.0]
    npu = NpuArbiter(lambda: clock[0])
    loop = SensorLoop(default_config("evk"), root, npu, seed=1, time_scale=40.0, start=0.0)
    npu.set_busy(True)
    hottest = 0
    for step in range(1, 151):
        clock[0] = step * 0.05
        loop.tick(clock[0])
        hottest = max(hottest, int(read(root / "class/thermal/thermal_zone11/temp")))
    cdsp = root / "class/thermal/cooling_device2/cur_state"
    assert int(read(cdsp)) >= 2
    assert hottest >= 105000
    snapshot = loop.snapshot()
    assert snapshot.latency_multiplier == pytest.approx(1 + 0.08 * snapshot.cdsp_state)

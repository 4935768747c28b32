"""The observer effect: python bench/observer_effect.py

The same benchmark run twice by qtop's device agent on this machine: once
with the sampler reading 12 channels at 10 Hz, once with it effectively off
(one tick an hour). The workload is CPU-bound (dd copying 390 MB from
/dev/zero to /dev/null, about 12 ms here), the worst case for a sampler
sharing the CPU; prints the median and p95 latency of each and the
difference, for dash and bash as the agent's shell.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from qtop.device.plan import RunOptions, agent_script, build_run_plan, launch_script, new_run_id
from qtop.device.probe import parse_probe
from qtop.device.protocol import ClockLine, ProcessLine, RunEndLine, parse_line
from qtop.device.sensors import plan_sensors
from qtop.profiles import load_profile_text

WORKLOAD = "dd if=/dev/zero of=/dev/null bs=64k count=6000 2>/dev/null"
ITERATIONS = 150


def make_sysfs(root: Path, zones: int = 11) -> None:
    for index in range(zones):
        zone = root / "class" / "thermal" / f"thermal_zone{index}"
        zone.mkdir(parents=True)
        (zone / "type").write_text(f"zone-{index}\n")
        (zone / "temp").write_text(f"{40000 + index}\n")


def run(shell: str, root: Path, interval: str) -> list[float]:
    profile = load_profile_text(
        f"name: observer\ndevice: {{sysfs_root: '{root / 'sys'}', spool_dir: '{root / 'spool'}', "
        f"sample_interval: {interval}, cpufreq: none, power_supply: none}}\n"
        f"run: {{command: '{WORKLOAD}', warmup: 5, iterations: {ITERATIONS}}}\n"
    )
    probe = parse_probe(
        subprocess.run(
            [shell, "-s", "--", profile.device.sysfs_root, profile.device.spool_dir],
            input=agent_script("probe.sh"),
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    sensors = plan_sensors(probe, profile.device)
    plan = build_run_plan(profile, probe, sensors, shell=shell, run_id=new_run_id("observer"),
                          options=RunOptions(calibrations=21))  # fmt: skip
    out = subprocess.run([shell, "-s"], input=launch_script(plan), capture_output=True, text=True)
    run_dir = Path(out.stdout.split("\t")[1])
    events = run_dir / "events"
    while True:
        lines = [parse_line(line) for line in events.read_text().splitlines()]
        if lines and isinstance(lines[-1], RunEndLine):
            break
        time.sleep(0.2)
    calibration = next(line for line in lines if line.__class__.__name__ == "CalibrationLine")
    overhead = statistics.median(calibration.durations_us)
    assert isinstance(lines[0], ClockLine)
    return [
        (line.end_us - line.start_us - overhead) / 1000
        for line in lines
        if isinstance(line, ProcessLine) and line.phase == "measure"
    ], len(sensors.reads)


def main() -> None:
    rounds = 3
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        make_sysfs(root / "sys")
        print(f"workload: {WORKLOAD}; {ITERATIONS} measured iterations per run")
        print("off and on alternate, so load from elsewhere on the machine hits both alike")
        for shell in ("/bin/dash", "/bin/bash"):
            differences = []
            for _ in range(rounds):
                off, _ = run(shell, root, "1h")
                on, channels = run(shell, root, "100ms")
                off_p50, on_p50 = statistics.median(off), statistics.median(on)
                differences.append((on_p50 - off_p50, on_p50 / off_p50 - 1))
                print(
                    f"  {shell}: sampler off p50 {off_p50:.3f} ms | {channels} channels at "
                    f"10 Hz p50 {on_p50:.3f} ms | {on_p50 - off_p50:+.3f} ms"
                )
            ms = statistics.median(d[0] for d in differences)
            share = statistics.median(d[1] for d in differences)
            print(f"{shell}: median p50 difference {ms:+.3f} ms ({share * 100:+.2f} %)")


if __name__ == "__main__":
    main()

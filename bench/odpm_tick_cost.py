"""What reading ODPM energy counters adds to a sampler tick: python bench/odpm_tick_cost.py

Runs qtop's sampler (qtop/device/agent/sampler.sh with the tick.sh qtop
generates) at 10 Hz on this machine against a fake sysfs: 12 single-line
channels, then the same plus one and two Pixel-style ``energy_value`` files
of 8 rails each (a timestamp line and one line per rail, read in one
redirection with ``read`` builtins). For each shell it prints the CPU per tick
(the sampler and anything it forked, from the kernel's accounting) as
min / median / max of 3 runs, and the extra cost per ODPM file.
"""

from __future__ import annotations

import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from qtop.device.plan import _tick_sh, agent_script
from qtop.device.sensors import ODPM_ENERGY, DeviceRead, SensorPlan
from qtop.transport.command import assignment

CHANNELS = 12
RAILS = 8
SECONDS = 8.0
RUNS = 3
INTERVAL_US = 100_000


def shells() -> list[list[str]]:
    found = [[p] for p in ("/bin/dash", "/bin/bash", "/usr/bin/mksh") if Path(p).exists()]
    busybox = shutil.which("busybox")
    return found + ([[busybox, "sh"]] if busybox else [])


def make_tree(root: Path) -> tuple[list[Path], list[Path]]:
    files = []
    for index in range(CHANNELS):
        path = root / f"zone{index}" / "temp"
        path.parent.mkdir(parents=True)
        path.write_text(f"{40000 + index * 100}\n")
        files.append(path)
    monitors = []
    for device in range(2):
        path = root / "bus/iio/devices" / f"iio:device{device}" / "energy_value"
        path.parent.mkdir(parents=True)
        lines = [f"t={358356 + device}"]
        lines += [f"CH{k}(T=358356)[S{k}M_VDD_RAIL_{k}], {761330 * (k + 1)}" for k in range(RAILS)]
        path.write_text("\n".join(lines) + "\n")
        monitors.append(path)
    return files, monitors


def plan_for(files: list[Path], monitors: list[Path]) -> SensorPlan:
    reads = [DeviceRead(str(f)) for f in files]
    reads += [DeviceRead(str(m), ODPM_ENERGY, 1 + RAILS) for m in monitors]
    return SensorPlan(tuple(reads), (), ())


def run_dir(root: Path, plan: SensorPlan) -> Path:
    run = root / f"run-{time.monotonic_ns()}"
    run.mkdir()
    for name in ("lib.sh", "fast_bash.sh", "sampler.sh"):
        (run / name).write_text(agent_script(name))
    (run / "plan.sh").write_text(assignment("QTOP_INTERVAL_US", str(INTERVAL_US)) + "\n")
    (run / "tick.sh").write_text(_tick_sh(plan))
    (run / "samples").write_text("")
    return run


def cpu_per_tick(shell: list[str], root: Path, plan: SensorPlan) -> tuple[float, int]:
    run = run_dir(root, plan)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    process = subprocess.Popen(
        [*shell, str(run / "sampler.sh"), str(run)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(SECONDS)
    process.send_signal(signal.SIGTERM)
    process.wait()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    ticks = [line for line in (run / "samples").read_text().splitlines() if line[:2] == "S\t"]
    fields = len(ticks[0].split("\t")) - 4 if ticks else 0
    assert fields == sum(r.fields for r in plan.reads), (fields, shell)
    return cpu / max(1, len(ticks)), len(ticks)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        files, monitors = make_tree(root / "sys")
        layouts = {
            f"{CHANNELS} channels": plan_for(files, []),
            f"+ 1 ODPM file ({RAILS} rails)": plan_for(files, monitors[:1]),
            f"+ 2 ODPM files ({2 * RAILS} rails)": plan_for(files, monitors),
        }
        print(f"sampler at 10 Hz, {SECONDS:g} s per run, {RUNS} runs: CPU per tick min/median/max")
        for shell in shells():
            name = Path(shell[0]).name + (" " + shell[1] if len(shell) > 1 else "")
            medians = []
            for label, plan in layouts.items():
                results = [cpu_per_tick(shell, root, plan) for _ in range(RUNS)]
                costs = sorted(cost * 1e3 for cost, _ in results)
                rate = statistics.median(ticks for _, ticks in results) / SECONDS
                medians.append(statistics.median(costs))
                print(
                    f"  {name:<12}{label:<26}{costs[0]:7.3f} {costs[1]:7.3f} {costs[-1]:7.3f} ms"
                    f"  ({rate:.1f} ticks/s)"
                )
            print(
                f"  {name:<12}{'extra per ODPM file':<26}"
                f"{(medians[1] - medians[0]) * 1e3:7.0f} µs, "
                f"{(medians[2] - medians[0]) / 2 * 1e3:.0f} µs (mean of two)"
            )


if __name__ == "__main__":
    main()

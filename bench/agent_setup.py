"""Shared by the device-agent benches: a fake sysfs, the real plan, the shells.

The sampler measured is the one qtop sends: the run directory is written from
``build_run_plan`` (lib.sh, sampler.sh, plan.sh and the generated tick.sh),
with 11 thermal zones and the measured command's memory (cmd.pid -> its
child -> /proc/PID/statm) as the 12 channels.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from qtop.device.control import probe_script
from qtop.device.plan import RunOptions, RunPlan, build_run_plan, launch_script, new_run_id
from qtop.device.probe import parse_probe
from qtop.device.sensors import SensorPlan, plan_sensors
from qtop.profiles import Profile, load_profile_text

ZONES = 11


def shells() -> dict[str, str]:
    """The agent shells this machine has, by name (busybox ash through a file named sh)."""
    names = ("dash", "bash", "mksh")
    found = {name: f"/bin/{name}" for name in names if os.path.exists(f"/bin/{name}")}
    busybox = shutil.which("busybox")
    if busybox:
        directory = Path(tempfile.gettempdir()) / f"qtop-bench-{os.getuid()}"
        directory.mkdir(exist_ok=True)
        link = directory / "sh"
        if not link.is_symlink():
            link.symlink_to(busybox)
        found["busybox"] = str(link)
    return found


def scratch() -> tempfile.TemporaryDirectory[str]:
    """Memory-backed when possible, like sysfs."""
    base = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
    return tempfile.TemporaryDirectory(prefix="qtop-bench-", dir=base)


def compile_c(source: Path, binary: Path) -> Path | None:
    """``source`` built into ``binary`` with gcc (or cc); None where there is no compiler."""
    compiler = shutil.which("gcc") or shutil.which("cc")
    if compiler is None:
        return None
    subprocess.run([compiler, "-O2", "-o", str(binary), str(source)], check=True)
    return binary


def make_sysfs(root: Path, zones: int = ZONES) -> Path:
    for index in range(zones):
        zone = root / "class" / "thermal" / f"thermal_zone{index}"
        zone.mkdir(parents=True)
        (zone / "type").write_text(f"zone-{index}\n")
        (zone / "temp").write_text(f"{40000 + index * 100}\n")
    return root


def profile(root: Path, interval: str, run: str) -> Profile:
    return load_profile_text(
        f"name: bench\ndevice: {{sysfs_root: '{root / 'sys'}', spool_dir: '{root / 'spool'}', "
        f"sample_interval: {interval}, cpufreq: none, power_supply: none}}\nrun: {run}\n"
    )


def plan(
    shell: str, used: Profile, options: RunOptions | None = None
) -> tuple[RunPlan, SensorPlan]:
    probe = parse_probe(
        subprocess.run(
            [shell, "-s", "--", used.device.sysfs_root, used.device.spool_dir],
            input=probe_script(),
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    sensors = plan_sensors(probe, used.device)
    built = build_run_plan(
        used, probe, sensors, shell=shell, run_id=new_run_id("bench"), options=options
    )
    return built, sensors


def launch(shell: str, built: RunPlan) -> Path:
    out = subprocess.run(
        [shell, "-s"], input=launch_script(built), capture_output=True, text=True, check=True
    )
    return Path(out.stdout.split("\t")[1])


def write_sampler_dir(built: RunPlan, directory: Path) -> Path:
    directory.mkdir(mode=0o700)
    for name in ("lib.sh", "sampler.sh", "plan.sh", "tick.sh"):
        (directory / name).write_text(built.files[name])
    for name in ("samples", "cmd.pid"):
        (directory / name).write_text("")
    return directory


def spread(values: list[float]) -> str:
    """min / median / max."""
    return f"{min(values):.3f} / {statistics.median(values):.3f} / {max(values):.3f}"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

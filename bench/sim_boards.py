"""The two simulated boards and `qtop probe` against them: python bench/sim_boards.py

For each variant (evk: upstream zones and an INA226 meter refreshed every
100 ms; glasses: Android zones, battery-current-limit zones, no bash):

- the physics loop's CPU, idle, as a share of one core (its own thread time
  over wall time, ``board.stats()``), and its sysfs writes per second;
- the wall time of `qtop probe PROFILE --json --window 0` over real SSH to the
  simulator (connect, probe, inspection, leftovers; the CLI's own start-up
  included), and of the default `--window 4`.

Each figure is the min / median / max of 3 runs, with the rate it ran at.
"""

from __future__ import annotations

import asyncio
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from qtop.profiles import builtin_profile_dir
from qtop.sim import SimBoard, start_sim

RUNS = 3
IDLE_S = 10.0


def spread(values: list[float], unit: str, digits: int = 2) -> str:
    low, middle, high = min(values), statistics.median(values), max(values)
    return f"{low:.{digits}f} / {middle:.{digits}f} / {high:.{digits}f} {unit}"


def physics(variant: str) -> tuple[list[float], list[float]]:
    cpu, writes = [], []
    for run in range(RUNS):
        with tempfile.TemporaryDirectory() as state, SimBoard(state, variant=variant) as board:
            before = board.stats()["sysfs_writes"]
            time.sleep(IDLE_S)
            stats = board.stats()
            cpu.append(stats["physics_cpu_percent"])
            writes.append((stats["sysfs_writes"] - before) / IDLE_S)
        del run
    return cpu, writes


def profile_for(sim, variant: str, directory: Path) -> Path:
    text = (builtin_profile_dir() / f"sim-{variant}.yaml").read_text()
    text = re.sub(r"(?m)^  port: .*$", f"  port: {sim.port}", text)
    text = re.sub(r"(?m)^  identity_file: .*$", f"  identity_file: {sim.client_key_path}", text)
    text = re.sub(r"(?m)^  known_hosts: .*$", f"  known_hosts: {sim.known_hosts_path}", text)
    path = directory / f"sim-{variant}.yaml"
    path.write_text(text)
    return path


async def probe_times(variant: str, window: str) -> list[float]:
    times = []
    with tempfile.TemporaryDirectory() as directory:
        async with start_sim(Path(directory) / "sim", variant=variant) as sim:
            profile = profile_for(sim, variant, Path(directory))
            for _ in range(RUNS):
                started = time.perf_counter()
                process = await asyncio.create_subprocess_exec(
                    sys.executable, "-m", "qtop", "probe", str(profile), "--json",
                    "--window", window,
                    stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
                )  # fmt: skip
                _, err = await process.communicate()
                if process.returncode != 0:
                    raise SystemExit(f"qtop probe failed: {err.decode()}")
                times.append(time.perf_counter() - started)
    return times


def main() -> None:
    print(f"{RUNS} runs each; figures are min / median / max")
    for variant in ("evk", "glasses"):
        cpu, writes = physics(variant)
        print(f"{variant}: physics loop idle over {IDLE_S:g} s: {spread(cpu, '% of one core')}, "
              f"{spread(writes, 'sysfs writes/s', 0)}")  # fmt: skip
        for window in ("0", "4"):
            times = asyncio.run(probe_times(variant, window))
            print(f"{variant}: qtop probe --window {window}: {spread(times, 's')}")


if __name__ == "__main__":
    main()

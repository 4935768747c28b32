"""Pairs of sustained runs on simulated boards, for calibrating compare's gate.

Three simulated EVKs with the demo's thermal settings (an NSP that would settle
far above its trip, so every run heats, throttles and settles into the governor's
sawtooth): BASE and SAME run at the models' latency, SLOW at ``slowdown`` times
it. Each round runs one sustained measurement on each board at once (so all three
see the same load on the host), each after a cooldown to the same temperature.
(BASE, SAME) is a pair of runs of one configuration; (BASE, SLOW) one with a real
slowdown. The slow test (tests/live/test_compare_calibration.py) and
bench/compare_calibration.py share this.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from link.recording import record

from qtop.device.plan import RunOptions
from qtop.live.profiler_hooks import profiler_hook_for
from qtop.live.source import LiveSource
from qtop.profiles import Profile
from qtop.sim import start_sim
from qtop.sim.config import SimConfig, default_config, lemans_zones
from qtop.transport.ssh import SSHTarget, SSHTransport

from .sim_runs import FAST, shipped

# The demo's board: an EVK in a warm enclosure (qtop/commands/demo.py).
DEMO_NSP_RISE_C = 125.0
DEMO_NSP_TAU_S = 90.0
BOARDS = ("base", "same", "slow")


@dataclass(frozen=True, slots=True)
class Settings:
    """One calibration set-up: how the boards run and how long each measurement is."""

    time_scale: float = 120.0
    # A count, not a duration: a busy host stretches a run but leaves its statistics alone.
    iterations: int = 5500
    inferences_per_process: int = 200
    cooldown_below_c: float = 60.0
    slowdown: float = 1.03

    def describe(self) -> str:
        return (
            f"runs of {self.iterations} measured inferences at thermal time "
            f"x{self.time_scale:g}, {self.inferences_per_process} inferences per qnn-net-run, "
            f"cooldown below {self.cooldown_below_c:g} C, slowdown x{self.slowdown:g}"
        )


@dataclass(frozen=True, slots=True)
class Round:
    """One round's three recordings."""

    base: Path
    same: Path
    slow: Path


def board_config(median_scale: float) -> SimConfig:
    evk = default_config("evk")
    return dataclasses.replace(
        evk,
        zones=lemans_zones(nsp_rise_c=DEMO_NSP_RISE_C, nsp_tau_s=DEMO_NSP_TAU_S),
        latency=dataclasses.replace(evk.latency, median_scale=median_scale),
    )


def _profile(sim: object, settings: Settings) -> Profile:
    profile = shipped("sim-evk", sim)
    assert "--num_inferences 20" in profile.run.command, "sim-evk's command has changed"
    command = profile.run.command.replace(
        "--num_inferences 20", f"--num_inferences {settings.inferences_per_process}"
    )
    cooldown = dataclasses.replace(profile.run.cooldown, below_c=settings.cooldown_below_c)
    return profile.replace_run(
        command=command, iterations=settings.iterations, duration_s=None, cooldown=cooldown
    )


async def _measure(sim: object, settings: Settings, path: Path) -> None:
    profile = _profile(sim, settings)
    source = LiveSource(
        profile,
        SSHTransport(SSHTarget.from_profile(profile.device)),
        source_kind="sim",
        backoff=FAST,
        hook=profiler_hook_for(profile),
        run_options=RunOptions(calibrations=3),
    )
    await record(source, path)


async def run_rounds(
    directory: Path,
    rounds: int,
    settings: Settings,
    seed: int = 0,
    on_round: Callable[[int, Round], None] | None = None,
) -> list[Round]:
    """``rounds`` rounds of three concurrent runs; the recordings are kept in ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    scales = {"base": 1.0, "same": 1.0, "slow": settings.slowdown}
    out = []
    async with contextlib.AsyncExitStack() as stack:
        sims = {}
        for number, name in enumerate(BOARDS):
            sims[name] = await stack.enter_async_context(
                start_sim(
                    directory / f"sim-{name}",
                    time_scale=settings.time_scale,
                    seed=seed * len(BOARDS) + number,
                    config=board_config(scales[name]),
                )
            )
        for index in range(rounds):
            paths = {name: directory / f"round{index:03d}-{name}.jsonl" for name in BOARDS}
            await asyncio.gather(*(_measure(sims[n], settings, paths[n]) for n in BOARDS))
            done = Round(paths["base"], paths["same"], paths["slow"])
            out.append(done)
            if on_round is not None:
                on_round(index, done)
    return out

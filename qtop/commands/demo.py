"""qtop demo: the whole product against a simulated IQ-9075 board."""

from __future__ import annotations

import argparse

from qtop.commands._live_options import add_live_options, wants_headless

HELP = "start a simulated IQ-9075 board on loopback and watch a run on it"
DESCRIPTION = """\
Start the simulated board (an SSH server on 127.0.0.1 with a thermal model and
simulated qnn-net-run / genie-t2t-run) and open the live UI on a run against it:
everything qtop does, with no hardware. The run is profiles/sim-evk.yaml,
reached over real SSH: per-inference latency from the Execute Stat blocks of
each qnn-net-run's profiling log, the HTP linting breakdown in the ops pane,
and thermals; thermal time runs 15 times faster than wall time, so the two
minutes the demo measures by default are half an hour of heating in a warm
enclosure: the NSP passes its 105 °C trip, cdsp throttles it and latency
decays, live.

examples:
  qtop demo
  qtop demo --headless --duration 30s
"""

DEMO_PROFILE = "sim-evk"
DEMO_TIME_SCALE = 15.0
# An EVK in a warm enclosure: the NSP's sustained load would settle above its
# 105 °C trip, so the demo shows throttling rather than a board that copes.
DEMO_NSP_RISE_C = 125.0
# Long enough, at DEMO_TIME_SCALE, for the whole thermal story: onset, decay, plateau.
DEMO_DURATION_S = 120.0


def configure(parser: argparse.ArgumentParser) -> None:
    add_live_options(parser)


def run(args: argparse.Namespace) -> int:
    import asyncio
    import tempfile
    from dataclasses import replace
    from functools import partial

    from qtop.commands.run import open_ui
    from qtop.live.hooks import profiler_hook_for
    from qtop.live.overrides import apply_overrides
    from qtop.live.runner import LiveOptions, LiveRun
    from qtop.live.source import LiveSource
    from qtop.profiles import load_profile, resolve_profile
    from qtop.sim import start_sim
    from qtop.sim.config import default_config, lemans_zones
    from qtop.transport.ssh import SSHTarget, SSHTransport

    profile = load_profile(resolve_profile(DEMO_PROFILE))
    if args.iterations is None and args.duration is None:
        profile = profile.replace_run(iterations=None, duration_s=DEMO_DURATION_S)
    profile = apply_overrides(profile, args)
    options = LiveOptions(
        profile_ref=DEMO_PROFILE,
        record=args.record,
        no_record=args.no_record,
        headless=wants_headless(args),
    )

    async def main(state_dir: str) -> int:
        evk = default_config("evk")
        config = replace(evk, zones=lemans_zones(nsp_rise_c=DEMO_NSP_RISE_C, nsp_tau_s=90.0))
        async with start_sim(state_dir, time_scale=DEMO_TIME_SCALE, config=config) as sim:
            used = profile.replace_device(**sim.device_overrides())
            print(f"simulated board on {sim.host}:{sim.port} (state in {state_dir})")
            transport = SSHTransport(SSHTarget.from_profile(used.device))
            source = LiveSource(used, transport, source_kind="sim", hook=profiler_hook_for(used))
            # The board goes away when qtop exits: a run cannot be left going on it.
            return await LiveRun(source, options).run(partial(open_ui, run_outlives_qtop=False))

    with tempfile.TemporaryDirectory(prefix="qtop-demo-") as state_dir:
        return asyncio.run(main(state_dir))

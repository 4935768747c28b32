"""qtop demo: the whole product against a simulated board (IQ-9075 EVK or glasses)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import TYPE_CHECKING

from qtop.commands._live_options import add_live_options, metrics_listen, wants_headless

if TYPE_CHECKING:
    from qtop.sim.config import SimConfig

HELP = "start a simulated board (IQ-9075 EVK or glasses) on loopback and watch a run on it"
DESCRIPTION = """\
Start a simulated board (an SSH server on 127.0.0.1 with a thermal model and
simulated qnn-net-run / genie-t2t-run) and open the live UI on a run against it:
everything qtop does, with no hardware, over real SSH.

--board evk (the default) runs profiles/sim-evk.yaml on an IQ-9075 EVK:
per-inference latency from the Execute Stat blocks of each qnn-net-run's
profiling log, the HTP linting breakdown in the ops pane, power from the
board's external INA226 meter (the EVK has no battery), and thermals; thermal
time runs 15 times faster than wall time, so the two minutes the demo measures
by default are half an hour of heating in a warm enclosure: the NSP passes its
105 °C trip, cdsp throttles it and latency decays, live.

--board glasses runs profiles/sim-glasses.yaml on a pair of Snapdragon glasses
as an Android kernel shows them (nsphvx-0, shell_front, battery, ...; no bash):
three quantisations of PrismML, each measured for 40 s after an idle baseline,
with battery power and energy per inference; thermal time runs 8 times faster,
and the glasses' little thermal mass makes the NSP reach its 95 °C trip within
each variant.

examples:
  qtop demo
  qtop demo --board glasses
  qtop demo --headless --duration 30s
  qtop demo --adb
  qtop demo --side-by-side            # both boards at once, in the combined view
"""


@dataclass(frozen=True, slots=True)
class DemoBoard:
    """Which profile a demo runs, how long each variant measures, how fast thermal time runs."""

    profile: str
    duration_s: float
    time_scale: float


BOARDS = {
    # Long enough, at this time scale, for the whole thermal story: onset, decay, plateau.
    "evk": DemoBoard("sim-evk", 120.0, 15.0),
    # Three variants, about two and a half minutes in all, each long enough to throttle;
    # slower thermal time, so the small battery is not drained by the end.
    "glasses": DemoBoard("sim-glasses", 40.0, 8.0),
}
# An EVK in a warm enclosure: the NSP's sustained load would settle above its
# 105 °C trip, so the demo shows throttling rather than a board that copes.
DEMO_NSP_RISE_C = 125.0


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--board",
        choices=tuple(BOARDS),
        default="evk",
        help="evk: IQ-9075 EVK with an external power meter; glasses: Android glasses on "
        "battery (default evk)",
    )
    parser.add_argument(
        "--adb",
        action="store_true",
        # Not "adb": that one is run's --adb [SERIAL], which the profile overrides read.
        dest="over_adb",
        help="reach the simulated board with the real adb client, through a simulated adb "
        "server, instead of SSH",
    )
    parser.add_argument(
        "--side-by-side",
        action="store_true",
        help="both boards at once, an EVK and glasses, in the combined view (docs/devices.md)",
    )
    add_live_options(parser)


def demo_config(board: str) -> SimConfig:
    """The simulated board a demo runs: the EVK in a warm enclosure, the glasses as they are."""
    from dataclasses import replace

    from qtop.sim.config import default_config, lemans_zones

    config = default_config(board)
    if board == "evk":
        config = replace(
            config, zones=lemans_zones(nsp_rise_c=DEMO_NSP_RISE_C, nsp_tau_s=90.0)
        ).validate()
    return config


def run(args: argparse.Namespace) -> int:
    import asyncio
    import tempfile
    from functools import partial
    from pathlib import Path

    from qtop.commands.run import open_ui
    from qtop.live.overrides import apply_overrides
    from qtop.live.profiler_hooks import profiler_hook_for
    from qtop.live.runner import LiveOptions, LiveRun
    from qtop.live.source import LiveSource
    from qtop.profiles import builtin_profile, load_profile
    from qtop.sim import start_sim
    from qtop.sim.stale import claim, remove_stale
    from qtop.transport.factory import make_transport

    if args.side_by_side:
        from qtop.commands._demo_devices import run_side_by_side

        return run_side_by_side(args)
    board = BOARDS[args.board]
    profile = load_profile(builtin_profile(board.profile))
    if args.iterations is None and args.duration is None:
        profile = profile.replace_run(iterations=None, duration_s=board.duration_s)
    profile = apply_overrides(profile, args)
    options = LiveOptions(
        profile_ref=board.profile,
        record=args.record,
        no_record=args.no_record,
        headless=wants_headless(args),
        metrics_listen=metrics_listen(args),
    )
    config = demo_config(args.board)

    async def main(state_dir: str) -> int:
        async with start_sim(
            state_dir, time_scale=board.time_scale, config=config, adb=args.over_adb
        ) as sim:
            if sim.adb is not None:
                used = profile.replace_device(**sim.adb.device_overrides())
                where = f"adb server {sim.adb.address}, device {sim.adb.serial}"
            else:
                used = profile.replace_device(**sim.device_overrides())
                where = f"{sim.host}:{sim.port}"
            print(f"simulated board on {where} ({args.board}, state in {state_dir})")
            # The board is on loopback with its own keys: a user's ~/.ssh/config (a
            # `Host *` ProxyJump, say) must not reroute or re-key the demo.
            transport = make_transport(used, ssh_config=())
            source = LiveSource(used, transport, source_kind="sim", hook=profiler_hook_for(used))
            # The board goes away when qtop exits: a run cannot be left going on it.
            return await LiveRun(source, options).run(partial(open_ui, run_outlives_qtop=False))

    remove_stale(Path(tempfile.gettempdir()), "qtop-demo-")
    with tempfile.TemporaryDirectory(prefix="qtop-demo-") as state_dir:
        claim(Path(state_dir))
        return asyncio.run(main(state_dir))

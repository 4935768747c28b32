"""``qtop demo --side-by-side``: a simulated EVK and simulated glasses, run at once.

Each board is the one ``qtop demo --board`` starts (its own SSH server, state
directory, thermal model and time scale), each run is what that demo runs, and
the two go through ``qtop run A B``'s machinery: one session and recording
each, the combined view, one outcome per device.
"""

from __future__ import annotations

import argparse

from qtop.errors import UsageError

SIDE_BY_SIDE = ("evk", "glasses")


def run_side_by_side(args: argparse.Namespace) -> int:
    import asyncio
    import contextlib
    import tempfile
    from functools import partial
    from pathlib import Path

    from qtop.commands._live_options import wants_headless
    from qtop.commands._run_devices import open_devices_ui
    from qtop.commands.demo import BOARDS, demo_config
    from qtop.live.multi import MultiRun, per_device_options, plan_recordings
    from qtop.live.overrides import apply_overrides
    from qtop.live.profiler_hooks import profiler_hook_for
    from qtop.live.runner import LiveOptions
    from qtop.live.source import LiveSource
    from qtop.profiles import builtin_profile, load_profile
    from qtop.sim import start_sim
    from qtop.sim.stale import claim, remove_stale
    from qtop.transport.factory import make_transport

    if args.over_adb:
        raise UsageError(
            "--adb with --side-by-side: the two boards are reached over SSH",
            "leave out --adb, or run 'qtop demo --adb --board glasses' on its own",
        )
    if args.metrics_listen is not None:
        raise UsageError(
            "--metrics-listen serves one device's figures, and --side-by-side runs two",
            "leave out --metrics-listen, or run one board at a time",
        )
    profiles = []
    for name in SIDE_BY_SIDE:
        board = BOARDS[name]
        profile = load_profile(builtin_profile(board.profile))
        if args.iterations is None and args.duration is None:
            profile = profile.replace_run(iterations=None, duration_s=board.duration_s)
        profiles.append(apply_overrides(profile, args))
    recordings = plan_recordings([p.name for p in profiles], args.record, args.no_record)
    refs = [BOARDS[name].profile for name in SIDE_BY_SIDE]
    options = per_device_options(
        LiveOptions(profile_ref="", headless=wants_headless(args)), refs, recordings
    )

    async def main(state_dir: Path) -> int:
        async with contextlib.AsyncExitStack() as stack:
            sources = []
            for name, profile in zip(SIDE_BY_SIDE, profiles, strict=True):
                sim = await stack.enter_async_context(
                    start_sim(
                        state_dir / name,
                        time_scale=BOARDS[name].time_scale,
                        config=demo_config(name),
                    )
                )
                print(f"simulated {name} on {sim.host}:{sim.port} (state in {state_dir / name})")
                used = profile.replace_device(**sim.device_overrides())
                # On loopback with its own keys: a user's ~/.ssh/config must not reroute it.
                transport = make_transport(used, ssh_config=())
                hook = profiler_hook_for(used)
                sources.append(LiveSource(used, transport, source_kind="sim", hook=hook))
            # The boards go away when qtop exits: their runs cannot be left going.
            opener = partial(open_devices_ui, run_outlives_qtop=False)
            return await MultiRun(sources, options).run(opener)

    remove_stale(Path(tempfile.gettempdir()), "qtop-demo-")
    with tempfile.TemporaryDirectory(prefix="qtop-demo-") as state_dir:
        claim(Path(state_dir))
        return asyncio.run(main(Path(state_dir)))

"""qtop run: a live session against the device of a profile."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from qtop.commands._live_options import (
    add_live_options,
    load_run_profile,
    metrics_listen,
    wants_headless,
)

if TYPE_CHECKING:
    from qtop.session import Session

HELP = "run a profile's benchmark on its device and watch it live"
DESCRIPTION = """\
Connect to the device of PROFILE over SSH (or adb), run its warm-up and measured
iterations (or a sustained run), and watch latency, power and thermals live.
PROFILE is a path or a name from 'qtop profiles'. The session is recorded to
a timestamped file under ./recordings unless --record or --no-record says otherwise.

Several profiles run the same way on their devices at once, side by side: one
session and one recording per device (--record then names a directory), one
combined view of them all (headless: each line prefixed with the device), and
the outcome of each at the end. One device failing does not stop the others.

The run is launched detached on the device: if the link drops, qtop reconnects
and resumes without losing a sample. Ctrl-C asks whether to stop the device
run. A run left over from an earlier session is offered for stopping.

examples:
  qtop run iq9075-qwen-netrun
  qtop run profiles/glasses-prismml.yaml --variant w8a16 --headless
  qtop run my-profile --local --headless --iterations 50
  qtop run glasses-prismml --adb 1a2b3c4d
  qtop run glasses-prismml.yaml phone-prismml.yaml --record recordings/side-by-side
"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "profile",
        metavar="PROFILE",
        nargs="+",
        help="profile path or name; several run side by side, one device each",
    )
    target = parser.add_argument_group("target")
    target.add_argument("--host", help="override the profile's host (name or ssh alias)")
    target.add_argument("--local", action="store_true", help="run on this machine instead")
    target.add_argument(
        "--adb",
        nargs="?",
        const="",
        metavar="SERIAL",
        help="reach the device over adb (the serial, else device.serial, $ANDROID_SERIAL or "
        "the only device attached)",
    )
    target.add_argument(
        "--accept-new-host-key",
        action="store_true",
        help="trust an unknown host key and add it to known_hosts (a changed key is refused)",
    )
    target.add_argument(
        "--stop-leftover",
        action="store_true",
        help="stop a run left over from an earlier session before starting",
    )
    add_live_options(parser)


async def open_ui(session: Session, *, run_outlives_qtop: bool = True) -> bool:
    """Run the Textual UI on ``session``; False when the UI is not available.

    ``run_outlives_qtop`` is False when the device goes away with qtop (the demo's
    simulated board): quitting then offers to stop the run, never to leave it.
    """
    try:
        from qtop.ui.app import QtopApp
    except ImportError:
        return False
    await QtopApp(session, run_outlives_qtop=run_outlives_qtop).run_async()
    return True


def run(args: argparse.Namespace) -> int:
    import asyncio

    from qtop.errors import UsageError
    from qtop.live.profiler_hooks import profiler_hook_for
    from qtop.live.runner import LiveOptions, LiveRun
    from qtop.live.source import LiveSource
    from qtop.transport.factory import make_transport

    if len(args.profile) > 1:
        from qtop.commands._run_devices import run_devices

        return run_devices(args)
    args.profile = args.profile[0]
    if args.adb is not None and args.local:
        raise UsageError("--local and --adb both say where the run goes", "give one of them")
    profile = load_run_profile(args)
    if not args.local and profile.device.transport == "ssh":
        from qtop.sim.reach import check_simulator_up

        check_simulator_up(profile, args.host)
    transport = make_transport(
        profile, host=args.host, local=args.local, accept_new_host_key=args.accept_new_host_key
    )
    options = LiveOptions(
        profile_ref=args.profile,
        record=args.record,
        no_record=args.no_record,
        headless=wants_headless(args),
        stop_leftover=args.stop_leftover,
        metrics_listen=metrics_listen(args),
    )

    async def main() -> int:
        source = LiveSource(profile, transport, hook=profiler_hook_for(profile))
        return await LiveRun(source, options).run(open_ui)

    return asyncio.run(main())

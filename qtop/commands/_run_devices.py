"""``qtop run A.yaml B.yaml``: the same plan on several devices at once.

Each profile names its own device, so the options that pick one device
(``--host``, ``--adb``, ``--local``) are refused with several profiles, and so
is one device named twice: two benchmarks on one board would each heat and
slow the other.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from qtop.errors import UsageError

if TYPE_CHECKING:
    from qtop.session_set import DeviceSession
    from qtop.transport.base import Transport


def _refuse_single_device_options(args: argparse.Namespace) -> None:
    count = len(args.profile)
    for given, option in (
        (args.host is not None, "--host"),
        (args.adb is not None, "--adb"),
        (args.local, "--local"),
    ):
        if given:
            raise UsageError(
                f"{option} picks one device, and {count} profiles run on {count} devices",
                "put each device in its profile (device.host, or device.transport: adb with "
                "device.serial), or run one profile at a time",
            )
    if args.metrics_listen is not None:
        raise UsageError(
            "--metrics-listen serves one device's figures, and several profiles were given",
            "run one qtop per device, each with its own --metrics-listen port",
        )


async def open_devices_ui(devices: list[DeviceSession], *, run_outlives_qtop: bool = True) -> bool:
    """Run the combined view over ``devices``; False when the UI is not available."""
    try:
        from qtop.ui.devices.app import DevicesApp
    except ImportError:
        return False
    await DevicesApp(devices, run_outlives_qtop=run_outlives_qtop).run_async()
    return True


def run_devices(args: argparse.Namespace) -> int:
    import asyncio
    from copy import copy

    from qtop.commands._live_options import load_run_profile, wants_headless
    from qtop.live.multi import MultiRun, per_device_options, plan_recordings
    from qtop.live.profiler_hooks import profiler_hook_for
    from qtop.live.runner import LiveOptions
    from qtop.live.source import LiveSource
    from qtop.sim.reach import check_simulator_up
    from qtop.transport.factory import make_transport

    _refuse_single_device_options(args)
    profiles = []
    for ref in args.profile:
        one = copy(args)
        one.profile = ref
        profiles.append(load_run_profile(one))
    # A --record that cannot take several recordings is refused before anything connects.
    recordings = plan_recordings([p.name for p in profiles], args.record, args.no_record)
    transports: list[Transport] = []
    for ref, profile in zip(args.profile, profiles, strict=True):
        if profile.device.transport == "ssh":
            check_simulator_up(profile)
        transport = make_transport(profile, accept_new_host_key=args.accept_new_host_key)
        for earlier_ref, earlier in zip(args.profile, transports, strict=False):
            if earlier.description == transport.description:
                raise UsageError(
                    f"{earlier_ref} and {ref} both run on {transport.description}: two "
                    "benchmarks on one device would each heat and slow the other",
                    "give each profile its own device, or run them one after the other",
                )
        transports.append(transport)
    base = LiveOptions(
        profile_ref="", headless=wants_headless(args), stop_leftover=args.stop_leftover
    )
    options = per_device_options(base, args.profile, recordings)

    async def main() -> int:
        sources = [
            LiveSource(profile, transport, hook=profiler_hook_for(profile))
            for profile, transport in zip(profiles, transports, strict=True)
        ]
        return await MultiRun(sources, options).run(open_devices_ui)

    return asyncio.run(main())

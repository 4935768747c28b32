"""qtop probe: what qtop finds on a device, and whether it can run there."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from qtop.device.checkup import Checkup
    from qtop.profiles import DeviceProfile, Profile
    from qtop.transport.base import Transport

HELP = "show what qtop finds on a device (sensors, shell, tools, NPU) and what is missing"
DESCRIPTION = """\
Connect to a device the way 'qtop run' does, run the same probe, and show what
a run would find there: the shell and clock the agent would use, whether the
spool directory is writable, every thermal zone (type, value, trips), cooling
device, power supply (the sign of current_now against status, and how often
the gauge refreshes, from a short sampling window) and power meter, the hwmon
devices a meter could come from, cpufreq, the QNN/Genie tools and the SDK
version, and any process holding the NPU. Each missing item comes with its fix.
Nothing is started and nothing is left on the device.

TARGET is a profile (a path or a name from 'qtop profiles': its device settings
are used) or a host (a name or an ~/.ssh/config alias, with default settings).
Exit status: 0 when qtop can run there, 1 when something stops it, 2 on bad usage.

examples:
  qtop probe iq9075-qwen-netrun
  qtop probe evk9075 --json
  qtop probe sim-glasses
  qtop probe --local
"""
DEFAULT_WINDOW_S = 4.0
WATCH_INTERVAL_S = 0.05


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "target", nargs="?", metavar="PROFILE|HOST", help="profile path or name, or a host"
    )
    parser.add_argument("--host", help="with a PROFILE: probe this host instead of its own")
    parser.add_argument(
        "--local", action="store_true", help="probe this machine (with a PROFILE's settings)"
    )
    parser.add_argument(
        "--accept-new-host-key",
        action="store_true",
        help="trust an unknown host key and add it to known_hosts (a changed key is refused)",
    )
    parser.add_argument("--json", action="store_true", help="print the findings as JSON")
    parser.add_argument(
        "--window",
        type=float,
        default=DEFAULT_WINDOW_S,
        metavar="SECONDS",
        help=f"how long to watch the power readings (default {DEFAULT_WINDOW_S:g}; 0 skips)",
    )


def _target(args: argparse.Namespace) -> tuple[Profile | None, DeviceProfile, str]:
    """The profile (if TARGET names one), the device settings to use, and what was named."""
    from pathlib import Path

    from qtop.errors import UsageError
    from qtop.profiles import DeviceProfile, ProfileError, load_profile, resolve_profile

    target = args.target
    if target is None:
        if not args.local:
            raise UsageError(
                "name a PROFILE or a HOST to probe (or --local for this machine)",
                "e.g. qtop probe iq9075-qwen-netrun, qtop probe evk9075, qtop probe --local",
            )
        return None, DeviceProfile(), "this machine"
    looks_like_file = target.endswith((".yaml", ".yml")) or "/" in target
    try:
        path = resolve_profile(target)
    except ProfileError:
        if looks_like_file or Path(target).expanduser().exists():
            raise
        if args.local:
            raise UsageError(
                f"--local probes this machine, but {target!r} is not a profile",
                "pass a profile name or path with --local, or drop --local to probe a host",
            ) from None
        return None, DeviceProfile(host=target), target
    profile = load_profile(path)
    return profile, profile.device, profile.name


def run(args: argparse.Namespace) -> int:
    import asyncio
    import json
    import sys

    from qtop.errors import UsageError

    if not 0 <= args.window <= 60:
        raise UsageError(f"--window {args.window:g} is out of range", "use 0 to 60 seconds")
    profile, device, named = _target(args)
    transport: Transport
    if args.local:
        from qtop.transport.local import LocalTransport

        transport = LocalTransport()
    else:
        from qtop.transport.ssh import SSHTarget, SSHTransport

        if profile is not None:
            from qtop.sim.reach import check_simulator_up

            check_simulator_up(profile, args.host)
        target = SSHTarget.from_profile(device, args.host, args.accept_new_host_key)
        transport = SSHTransport(target)
    checkup = asyncio.run(_probe(transport, profile, device, named, args.window))
    if args.json:
        from qtop.device.checkup import checkup_dict

        json.dump(checkup_dict(checkup), sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        from qtop.report.checkup import render_checkup

        print(render_checkup(checkup))
    return 0 if checkup.can_run else 1


async def _probe(
    transport: Transport,
    profile: Profile | None,
    device: DeviceProfile,
    named: str,
    window_s: float,
) -> Checkup:
    from qtop.device import control
    from qtop.device.checkup import Problem, build_checkup, watch_files
    from qtop.device.inspect import inspect
    from qtop.device.sensors import plan_sensors
    from qtop.errors import RunFailed
    from qtop.transport.base import LinkDown

    where = transport.description
    try:
        await transport.connect()
    except LinkDown as exc:
        raise RunFailed(
            str(exc),
            "check the host name, that the device is up and reachable, and your "
            "~/.ssh/config; 'ssh HOST true' should work without a password prompt",
        ) from None
    try:
        probe = await control.probe(transport, device, where)
        plan = plan_sensors(probe, device)
        inspection = await inspect(
            transport,
            root=device.sysfs_root,
            workdir=device.workdir or "",
            env=dict(device.env),
            window_s=window_s,
            interval_s=WATCH_INTERVAL_S,
            files=watch_files(probe, device),
            where=where,
        )
        leftovers = await control.leftovers(transport, probe.spool) if probe.spool else []
    except LinkDown as exc:
        raise RunFailed(f"{where}: the link dropped: {exc}", "try again") from None
    finally:
        await transport.close()
    target = {
        "profile": profile.name if profile else None,
        "host": getattr(getattr(transport, "target", None), "host", None) or named,
        "transport": where,
    }
    checkup = build_checkup(
        target=target,
        profile=profile,
        device=device,
        probe=probe,
        plan=plan,
        inspection=inspection,
        leftovers=leftovers,
    )
    if profile is not None:
        from qtop.sim.reach import simulator_mismatch

        mismatch = simulator_mismatch(profile, checkup.device["soc"])
        if mismatch:
            checkup.problems.insert(0, Problem("warning", "simulator", mismatch))
    return checkup

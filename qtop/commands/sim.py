"""qtop sim: run the simulated board as an SSH server in the foreground."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from qtop.sim.adb_front import AdbFront

HELP = "run a simulated board (IQ-9075 EVK or glasses) as an SSH server on loopback"
DESCRIPTION = """\
Run a simulated board: an SSH server on 127.0.0.1 only, with its own host key
and a client key written into the state directory, a simulated sysfs tree
refreshed by a thermal model, and simulated qnn-net-run, qnn-profile-viewer and
genie-t2t-run. Prints one ssh command line for the plain OpenSSH client and the
equivalent profile snippet, then runs until Ctrl-C.

--variant evk is an IQ-9075 EVK (upstream zone names, no battery, an INA226
power meter on its 12 V input); --variant glasses is a pair of Snapdragon
glasses as an Android kernel shows them (nsphvx-0, shell_front, battery, ...;
a battery; no bash on the PATH).

profiles/sim-evk.yaml and profiles/sim-glasses.yaml work against the defaults
(port 2222, state in ~/.local/state/qtop/sim; --variant glasses for the latter).

examples:
  qtop sim
  qtop sim --variant glasses --time-scale 20
  qtop sim --variant glasses --adb     # and: adb -H 127.0.0.1 -P 15037 devices
  qtop sim --port 2300 --state-dir /tmp/qtop-sim
"""
DEFAULT_PORT = 2222
DEFAULT_ADB_PORT = 15037


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--port",
        type=int,
        default=DEFAULT_PORT,
        help=f"TCP port on loopback (default {DEFAULT_PORT}; 0 picks a free one)",
    )
    parser.add_argument(
        "--state-dir",
        metavar="DIR",
        help="keys, known_hosts, sysfs tree and ground truth (default ~/.local/state/qtop/sim)",
    )
    parser.add_argument(
        "--host", default="127.0.0.1", help="bind address: 127.0.0.1, ::1 or localhost only"
    )
    parser.add_argument(
        "--variant",
        choices=("evk", "glasses"),
        default="evk",
        help="evk: IQ-9075 EVK with a power meter; glasses: Android glasses on battery "
        "(default evk)",
    )
    parser.add_argument(
        "--time-scale",
        type=float,
        default=1.0,
        metavar="FACTOR",
        help="compress thermal time by FACTOR (latency is not scaled)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed for latencies and sensor noise")
    parser.add_argument(
        "--latency-scale",
        type=float,
        default=1.0,
        metavar="FACTOR",
        help="multiply every simulated inference's latency by FACTOR, e.g. 1.03 for a 3%% "
        "slowdown to check a compare gate against (default 1)",
    )
    parser.add_argument(
        "--adb",
        action="store_true",
        help="also serve the board as an adb device, through a simulated adb server on loopback "
        "(for the real adb client: adb -H 127.0.0.1 -P PORT ...)",
    )
    parser.add_argument(
        "--adb-port",
        type=int,
        default=DEFAULT_ADB_PORT,
        metavar="PORT",
        help=f"the simulated adb server's port (default {DEFAULT_ADB_PORT}; 0 picks a free one; "
        "not 5037, which a real adb server would want)",
    )


def run(args: argparse.Namespace) -> int:
    import asyncio

    from qtop.errors import UsageError

    if not 0 <= args.port < 65536:
        raise UsageError(f"--port {args.port} is not a TCP port", "use 1-65535, or 0 for any")
    if not 0 <= args.adb_port < 65536:
        raise UsageError(f"--adb-port {args.adb_port} is not a TCP port", "use 1-65535, or 0")
    if not args.time_scale > 0:
        raise UsageError(f"--time-scale must be > 0, got {args.time_scale}", "use e.g. 1 or 20")
    if not 0.1 <= args.latency_scale <= 10:
        raise UsageError(
            f"--latency-scale must be between 0.1 and 10, got {args.latency_scale}",
            "use e.g. 1.03 for a 3% slowdown",
        )
    return asyncio.run(_serve(args))


async def _serve(args: argparse.Namespace) -> int:
    import asyncio
    import signal
    import sys
    from dataclasses import replace
    from pathlib import Path

    from qtop.sim import default_config, default_state_dir, start_sim
    from qtop.sim.keys import known_hosts_line

    state_dir = Path(args.state_dir).expanduser() if args.state_dir else default_state_dir()
    config = default_config(args.variant)
    config = replace(config, latency=replace(config.latency, median_scale=args.latency_scale))
    async with start_sim(
        state_dir,
        variant=args.variant,
        port=args.port,
        time_scale=args.time_scale,
        seed=args.seed,
        config=config,
        host=args.host,
        adb=args.adb,
        adb_port=args.adb_port,
    ) as sim:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop.set)
        host_line = known_hosts_line(sim.server.keys.host_key, sim.host, sim.port)
        print(
            f"qtop sim: simulated board ({args.variant}) listening on {sim.host}:{sim.port}\n"
            f"state directory: {sim.state_dir}\n"
            f"user: {sim.username}\n"
            f"host key: {host_line}\n"
            f"time scale: {args.time_scale:g}, seed: {args.seed}, "
            f"latency scale: {args.latency_scale:g}\n"
            "\nconnect with:\n"
            f"{sim.ssh_command()}\n"
            "\nprofile snippet:\n"
            f"{sim.profile_snippet()}"
            + (_adb_text(sim.adb) if sim.adb is not None else "")
            + "\nCtrl-C stops the board and every process started on it.",
            flush=True,
        )
        await stop.wait()
        stats = sim.stats()
        sys.stdout.write(
            f"qtop sim: stopping (physics loop used {stats['physics_cpu_percent']:.2f}% "
            "of one core)\n"
        )
    return 0


def _adb_text(front: AdbFront) -> str:
    import shlex

    return (
        f"\nover adb: simulated adb server on {front.address}, device {front.serial}\n"
        f"{shlex.join(front.adb_command('-s', front.serial, 'shell'))}\n"
        "\nprofile snippet (adb):\n"
        f"{front.profile_snippet()}"
    )

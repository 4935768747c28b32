"""Is the simulated board a profile points at running? Asked before connecting.

A profile for the simulator (``sim-evk``, ``sim-glasses``) names a loopback
host and a ``$QTOP_SIM_*`` sysfs root. When nothing listens there, or its
client key has never been written, the useful message is "start the
simulator", not the SSH layer's "check identity_file".
"""

from __future__ import annotations

import contextlib
import os
import socket

from qtop.errors import RunFailed
from qtop.profiles import Profile
from qtop.sim.config import VARIANTS
from qtop.sim.sysfs import SOC_IDENTITY

SIM_VARIABLE = "$QTOP_SIM_"
LOOPBACK = ("127.0.0.1", "::1", "localhost")
CONNECT_TIMEOUT_S = 2.0


def simulator_variant(profile: Profile) -> str | None:
    """The simulator variant a profile is written for, or ``None`` for a real device.

    The variant is the one the profile's name mentions (``sim-glasses``), else evk.
    """
    device = profile.device
    if not device.sysfs_root.startswith(SIM_VARIABLE) or device.host not in LOOPBACK:
        return None
    return next((variant for variant in VARIANTS if variant in profile.name), "evk")


def start_command(variant: str) -> str:
    return "qtop sim" if variant == "evk" else f"qtop sim --variant {variant}"


def check_simulator_up(profile: Profile, host_override: str | None = None) -> None:
    """Refuse, with the command that starts it, when the profile's simulator is not running."""
    variant = simulator_variant(profile)
    if variant is None or host_override:
        return
    device = profile.device
    host, port = device.host or "127.0.0.1", device.port or 22
    fix = f"start `{start_command(variant)}` first (in another terminal), then run this again"
    key = os.path.expanduser(device.identity_file) if device.identity_file else None
    if key is not None and not os.path.exists(key):
        raise RunFailed(
            f"{profile.name} is a profile for the simulated board ({variant}), and its client "
            f"key {key} does not exist: the simulator has not been started with that state "
            "directory",
            fix,
        )
    try:
        with contextlib.closing(socket.create_connection((host, port), CONNECT_TIMEOUT_S)):
            pass
    except OSError:
        raise RunFailed(
            f"{profile.name} is a profile for the simulated board ({variant}), and nothing "
            f"answers on {host}:{port}",
            fix,
        ) from None


def simulator_mismatch(profile: Profile, soc_machine: str) -> str | None:
    """Why the running simulator is the wrong variant for the profile, if it is."""
    variant = simulator_variant(profile)
    if variant is None or not soc_machine:
        return None
    running = next((name for name, (soc, _) in SOC_IDENTITY.items() if soc == soc_machine), None)
    if running is None or running == variant:
        return None
    return (
        f"{profile.name} is written for the simulated {variant}, but the simulator running is "
        f"the {running} (SoC {soc_machine}); stop it and start `{start_command(variant)}`"
    )

"""The transport a live session uses: this machine, SSH, or adb, from the profile as used."""

from __future__ import annotations

from qtop.errors import UsageError
from qtop.profiles import Profile
from qtop.transport.base import Transport


def make_transport(
    profile: Profile,
    *,
    host: str | None = None,
    local: bool = False,
    accept_new_host_key: bool = False,
    ssh_config: tuple[str, ...] | None = None,
) -> Transport:
    """``--local``, else ``device.transport`` (``--adb`` has set it to adb already).

    ``ssh_config`` replaces the ssh config files read (``()``: none), for boards qtop runs
    itself on loopback.
    """
    device = profile.device
    if local:
        from qtop.transport.local import LocalTransport

        return LocalTransport()
    if device.transport == "adb":
        if host is not None:
            raise UsageError(
                f"--host {host} names an SSH host, but the device is reached over adb "
                "(device.transport: adb, or --adb)",
                "drop --host: adb reaches the device by serial (device.serial or --adb SERIAL)",
            )
        from qtop.transport.adb import AdbTarget, AdbTransport

        return AdbTransport(AdbTarget.from_profile(device))
    from qtop.transport.ssh import SSHTarget, SSHTransport

    return SSHTransport(
        SSHTarget.from_profile(device, host, accept_new_host_key, ssh_config=ssh_config)
    )

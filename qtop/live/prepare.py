"""What happens on the device between the probe and the launch: the payload, the power source.

``run.push`` is brought up to date (``qtop.device.push``), a device
that charges from its cable is said to, loudly (``qtop.device.usb_power``),
and so is a wall clock NTP has not set yet (``qtop.device.checkup``).
The notes come back as (text, level) for the session's stream.
"""

from __future__ import annotations

from qtop.device.checkup import unsynced_clock
from qtop.device.probe import ProbeResult
from qtop.device.push import push
from qtop.device.sensors import SensorPlan
from qtop.device.usb_power import usb_power_warning
from qtop.profiles import Profile
from qtop.transport.base import Transport


async def prepare_device(
    transport: Transport, profile: Profile, probe: ProbeResult, sensors: SensorPlan
) -> list[tuple[str, str]]:
    notes: list[tuple[str, str]] = []
    pushed = await push(transport, profile)
    if pushed is not None:
        notes.append((pushed.summary(), "info"))
    warning = await usb_power_warning(transport, probe, sensors)
    if warning is not None:
        notes.append((warning, "warning"))
    clock = unsynced_clock(probe)
    if clock is not None:
        notes.append((f"{clock.problem}; fix: {clock.fix}", "warning"))
    return notes

"""Is the device charging from its cable? Then its battery current is not what the run draws.

Over adb the device is usually on a USB cable: the USB supply is online and
the battery reports ``Charging`` (or ``Full``), so ``current_now`` mostly
shows the charger topping the battery up, and energy per inference from the
battery means nothing. One look at the supplies before the run; the session
then carries a warning with the way out: rails (ODPM, an external meter)
measure the load whatever powers it; ``dumpsys battery suspend_input``
(Android 12+, where the health HAL supports it) stops the charger so the
battery carries the device; ``dumpsys battery unplug`` only changes what
Android's framework reports, not the hardware, so it does not help here.
"""

from __future__ import annotations

from dataclasses import dataclass

from qtop.device.probe import ProbeResult
from qtop.device.sensors import SensorPlan
from qtop.transport.base import LinkDown, Transport
from qtop.transport.command import join

CHECK_TIMEOUT_S = 30.0
EXTERNAL_TYPES = ("usb", "usb_dcp", "usb_cdp", "usb_aca", "usb_c", "usb_pd", "mains", "wireless")
CHARGING_STATES = ("charging", "full")

READ_SCRIPT = r"""
for qtop_d in "$@"; do
	qtop_o=
	qtop_s=
	read -r qtop_o <"$qtop_d/online" 2>/dev/null
	read -r qtop_s <"$qtop_d/status" 2>/dev/null
	printf '%s\t%s\t%s\n' "$qtop_d" "$qtop_o" "$qtop_s"
done
"""


@dataclass(frozen=True, slots=True)
class PowerSource:
    """What powers the device right now: the external supplies online, the battery's status."""

    online: tuple[str, ...]
    battery: str | None
    battery_status: str

    @property
    def charging(self) -> bool:
        # Some devices list no USB supply at all; the battery's own status says it.
        return self.battery_status.lower() in CHARGING_STATES


def _printable(text: str) -> str:
    return "".join(c if c.isprintable() else "?" for c in text)[:60]


async def power_source(transport: Transport, probe: ProbeResult) -> PowerSource | None:
    """The supplies' state, or None when the device has no battery (nothing to warn about)."""
    batteries = [s for s in probe.supplies if s.type.lower() == "battery"]
    if not batteries:
        return None
    external = [s for s in probe.supplies if s.type.lower() in EXTERNAL_TYPES]
    paths = [s.path for s in (*external, batteries[0])]
    result = await transport.run(
        join(["sh", "-s", "--", *paths]), stdin=READ_SCRIPT.encode(), timeout=CHECK_TIMEOUT_S
    )
    state = {}
    for line in result.text.splitlines():
        path, _, rest = line.partition("\t")
        online_flag, _, status = rest.partition("\t")
        state[path] = (online_flag.strip(), status.strip())
    online = tuple(_printable(s.name) for s in external if state.get(s.path, ("", ""))[0] == "1")
    battery = batteries[0]
    return PowerSource(online, _printable(battery.name), state.get(battery.path, ("", ""))[1])


def warning(source: PowerSource, sensors: SensorPlan) -> str:
    # Power that is not a power_supply's: an external meter, ODPM rails.
    rails = [
        c.label for c in sensors.channels if c.kind == "power" and not c.id.startswith("power/")
    ]
    prefer = (
        f"energy should come from the rails ({', '.join(rails[:3])}), which measure the load "
        "whatever powers it"
        if rails
        else "measure from power rails instead (ODPM rails or an external meter: "
        "device.power_meter)"
    )
    online = f" ({', '.join(source.online)} online)" if source.online else ""
    return (
        f"the device is on external power{online} and its battery "
        f"{source.battery} reports {_printable(source.battery_status)}: its current_now shows "
        "the charger, not what the run draws, so battery power and energy per inference are "
        f"not valid. {prefer}; or stop charging for the run with 'adb shell dumpsys battery "
        "suspend_input' (Android 12+; 'dumpsys battery reset' after), or run on battery over "
        "adb over Wi-Fi ('dumpsys battery unplug' only changes what Android reports, not the "
        "current)"
    )


async def usb_power_warning(
    transport: Transport, probe: ProbeResult, sensors: SensorPlan
) -> str | None:
    """The warning to put in the session when the device charges from its cable, else None."""
    try:
        source = await power_source(transport, probe)
    except LinkDown:
        return None
    if source is None or not source.charging:
        return None
    return warning(source, sensors)

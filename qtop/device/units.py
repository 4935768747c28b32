"""Raw sysfs text to numbers in qtop's units, at the edge, before events exist.

sysfs speaks millidegrees, microamps, microvolts, microwatts, microamp-hours,
microwatt-seconds and kilohertz; recordings speak C, A, V, W, Ah, J and MHz
(docs/recording-format.md). A value that
cannot be read is ``None``, never 0: an empty read (the file is absent, or the
driver answered EINVAL/EAGAIN/ENODATA) and a thermal sentinel alike.
"""

from __future__ import annotations

import math

# Offline or absent thermal sensors report absolute zero (or below).
THERMAL_SENTINEL_MC = -273000
STATUS_CODES = {"charging": 1, "discharging": -1}
METER_SCALE = {
    "uW": 1e-6,
    "mW": 1e-3,
    "W": 1.0,
    "uA": 1e-6,
    "mA": 1e-3,
    "A": 1.0,
    "uV": 1e-6,
    "mV": 1e-3,
    "V": 1.0,
}
MEBIBYTE = 1024 * 1024


def integer(raw: str) -> int | None:
    """A decimal integer as sysfs prints it, or ``None`` for anything else."""
    text = raw.strip()
    if not text:
        return None
    try:
        return int(text, 10)
    except ValueError:
        return None


def number(raw: str) -> float | None:
    text = raw.strip()
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def millicelsius(raw: str) -> float | None:
    value = integer(raw)
    if value is None or value <= THERMAL_SENTINEL_MC:
        return None
    return value / 1000.0


def state(raw: str) -> float | None:
    value = integer(raw)
    return None if value is None else float(value)


def micro(raw: str) -> float | None:
    """µA, µV or µW to A, V or W, keeping the sign the driver gave."""
    value = integer(raw)
    return None if value is None else value / 1e6


def kilohertz_to_mhz(raw: str) -> float | None:
    value = integer(raw)
    return None if value is None or value <= 0 else value / 1000.0


def status_code(raw: str) -> float | None:
    """``Charging`` 1, ``Discharging`` -1, any other status 0; unreadable ``None``."""
    text = raw.strip().lower()
    if not text:
        return None
    return float(STATUS_CODES.get(text, 0))


def meter(raw: str, unit: str) -> float | None:
    value = number(raw)
    return None if value is None else value * METER_SCALE[unit]


def pages_to_mb(raw: str, page_size: int) -> float | None:
    """Resident pages (``/proc/PID/statm``) to MB; 0 means no process, not zero memory."""
    value = integer(raw)
    if value is None or value <= 0:
        return None
    return value * page_size / MEBIBYTE


def directed_current(amps: float | None, status: float | None) -> float | None:
    """|I| signed as the kernel ABI says: + into the battery (charging), - out of it.

    Drivers disagree about the sign of ``current_now`` (formats.md 5b), so the
    magnitude is trusted and the direction comes from ``status``. Only
    ``Charging`` means current flows in: a full, idle or unknown battery (or
    one whose status could not be read) is taken to be supplying the board.
    """
    if amps is None:
        return None
    magnitude = abs(amps)
    return magnitude if status == 1 else -magnitude


def odpm_rail(raw: str) -> tuple[str, int] | None:
    """(rail name, µWs) of one line of an ODPM ``energy_value`` file.

    Pixel-style lines are ``CH3(T=358356)[S2M_VDD_CPUCL2], 761330`` (the
    sampler strips everything up to the ``[``); older ones ``RAIL_NAME,761330``.
    """
    text = raw.strip()
    if "[" in text:
        text = text.split("[", 1)[1]
    name, comma, value = text.rpartition(",")
    energy = integer(value) if comma else None
    if energy is None or energy < 0:
        return None
    name = name.strip().removesuffix("]")
    return (name, energy) if name else None


def odpm_time(raw: str) -> float | None:
    """The first line of an ODPM ``energy_value`` (``t=358356``, or bare): ms since boot, in s."""
    value = integer(raw.strip().removeprefix("t="))
    return None if value is None or value <= 0 else value / 1000.0


def odpm_joules(raw: str, rail: str) -> float | None:
    """The rail's energy since boot in J, or None when the line is another rail's (reordered)."""
    parsed = odpm_rail(raw)
    if parsed is None or parsed[0] != rail:
        return None
    return parsed[1] / 1e6


def computed_power(amps: float | None, volts: float | None) -> float | None:
    if amps is None or volts is None:
        return None
    return abs(amps) * abs(volts)

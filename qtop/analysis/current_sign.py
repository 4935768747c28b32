"""Which sign convention a battery's ``current_now`` follows, judged from the session itself.

The kernel ABI says negative while discharging, but drivers differ
(formats.md 5b): Qualcomm's pm8150b fuel gauge and several Android vendors
report positive while discharging, and some gauges are always positive. qtop
records the driver's value untouched (``power/<supply>/current_now``, kind
``current_raw``) next to the battery current it shows everywhere
(``power/<supply>/current``: negative out of the battery, positive into it,
with the direction from ``status``). This module compares the driver's sign
with ``status`` over the session's samples and says which convention the
gauge follows.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from qtop.analysis.series import ChannelSeries
from qtop.events import ChannelInfo

NEGATIVE_DISCHARGE = "negative-discharge"
POSITIVE_DISCHARGE = "positive-discharge"
ALWAYS_POSITIVE = "always-positive"
UNKNOWN = "unknown"
# Samples of one direction needed before the sign is judged, and the share that must agree.
MIN_SAMPLES = 5
AGREEMENT = 0.9
# Readings this close to zero say nothing about the sign.
ZERO_A = 0.0005
STATUS_CHARGING = 1
STATUS_DISCHARGING = -1
SHOWN = "qtop shows the battery current negative while discharging, positive while charging"


@dataclass(frozen=True, slots=True)
class CurrentSign:
    """The convention detected for one supply's ``current_now``, with the evidence."""

    convention: str
    channel: str | None
    discharging: int = 0
    discharging_negative: int = 0
    charging: int = 0
    charging_negative: int = 0
    reason: str = ""

    def describe(self) -> str:
        """One sentence for reports: what the driver does and what qtop shows."""
        where = f"{self.channel}: " if self.channel else ""
        evidence = self._evidence()
        if self.convention == NEGATIVE_DISCHARGE:
            what = "current_now is negative while discharging (the kernel ABI)"
        elif self.convention == POSITIVE_DISCHARGE:
            what = "current_now is POSITIVE while discharging (inverted, as some vendors do)"
            if self.charging < MIN_SAMPLES:
                what += "; no charging was seen, so an always-positive gauge is not ruled out"
        elif self.convention == ALWAYS_POSITIVE:
            what = "current_now is positive whether charging or discharging: its sign says nothing"
        else:
            what = f"current_now sign convention unknown: {self.reason}"
        return f"{where}{what}{evidence}; {SHOWN}"

    def short(self) -> str:
        """A few words for the live power pane."""
        return {
            NEGATIVE_DISCHARGE: "gauge: − discharging (kernel)",
            POSITIVE_DISCHARGE: "gauge: + discharging (inverted)",
            ALWAYS_POSITIVE: "gauge: always +",
        }.get(self.convention, "gauge sign: unknown")

    def _evidence(self) -> str:
        parts = []
        if self.discharging:
            parts.append(
                f"{self.discharging_negative} of {self.discharging} discharging samples negative"
            )
        if self.charging:
            parts.append(f"{self.charging_negative} of {self.charging} charging samples negative")
        return f" ({'; '.join(parts)})" if parts else ""


def classify(
    pairs: Iterable[tuple[float, float | None]], channel: str | None = None
) -> CurrentSign:
    """The convention shown by (driver's current in A, status code) pairs.

    Status codes: 1 charging, -1 discharging, anything else is ignored (a full
    or idle battery carries no direction).
    """
    discharging = discharging_negative = charging = charging_negative = 0
    for amps, status in pairs:
        if status is None or abs(amps) < ZERO_A:
            continue
        code = round(status)
        if code == STATUS_DISCHARGING:
            discharging += 1
            discharging_negative += amps < 0
        elif code == STATUS_CHARGING:
            charging += 1
            charging_negative += amps < 0

    def sign(count: int, negative: int) -> str | None:
        if count < MIN_SAMPLES:
            return None
        if negative >= AGREEMENT * count:
            return "-"
        if count - negative >= AGREEMENT * count:
            return "+"
        return "mixed"

    found = CurrentSign(
        UNKNOWN, channel, discharging, discharging_negative, charging, charging_negative
    )
    out, into = sign(discharging, discharging_negative), sign(charging, charging_negative)
    conventions = {
        ("-", "+"): NEGATIVE_DISCHARGE,
        ("-", None): NEGATIVE_DISCHARGE,
        ("+", "-"): POSITIVE_DISCHARGE,
        ("+", None): POSITIVE_DISCHARGE,
        (None, "-"): POSITIVE_DISCHARGE,
        ("+", "+"): ALWAYS_POSITIVE,
    }
    convention = conventions.get((out, into))
    if convention is not None:
        return _with(found, convention, "")
    if out is None and into is None:
        reason = (
            f"fewer than {MIN_SAMPLES} samples with status Charging or Discharging and a "
            "non-zero current"
        )
    elif out is None and into == "+":
        reason = (
            "positive while charging, and no discharging was seen to tell it from always-positive"
        )
    else:
        reason = "its sign does not follow status consistently"
    return _with(found, UNKNOWN, reason)


def _with(sign: CurrentSign, convention: str, reason: str) -> CurrentSign:
    return CurrentSign(
        convention,
        sign.channel,
        sign.discharging,
        sign.discharging_negative,
        sign.charging,
        sign.charging_negative,
        reason,
    )


def detect_current_sign(
    channels: Mapping[str, ChannelInfo], series: Mapping[str, ChannelSeries]
) -> CurrentSign | None:
    """The convention of the first supply with a battery status, or None without any battery.

    Each driver reading is paired with the status read at the same tick (or the
    last one before it).
    """
    statuses = sorted(c.id for c in channels.values() if c.kind == "battery_status")
    for status_id in statuses:
        group = status_id.rsplit("/", 1)[0]
        raw = next(
            (
                c.id
                for c in channels.values()
                if c.kind == "current_raw" and c.id.rsplit("/", 1)[0] == group
            ),
            None,
        )
        if raw is None:
            if any(c.kind == "current" and c.id.startswith(group + "/") for c in channels.values()):
                return CurrentSign(
                    UNKNOWN,
                    None,
                    reason=(
                        f"{group} has no current_now channel with the driver's sign (recorded "
                        "by an older qtop)"
                    ),
                )
            continue
        data = series.get(raw, ChannelSeries())
        status = series.get(status_id, ChannelSeries())
        pairs = (
            (amps, status.value_at(t)) for t, amps in zip(data.times, data.values, strict=True)
        )
        return classify(pairs, raw)
    return None

"""The chosen power source's readings now: what the power pane and the metrics endpoint show.

Power now, the battery current with its sign, the voltage, the average of the
last ``ROLLING_WINDOW_S`` and the session's peak, read from the live model's
last values and downsampled series. It is one function so that the screen and
a Prometheus scrape of the same model state cannot disagree. No Textual here.
"""

from __future__ import annotations

from dataclasses import dataclass

from qtop.analysis.current_sign import detect_current_sign
from qtop.analysis.energy import STATUS_CHARGING, UNIT_SCALE, PowerSource, build_power_trace
from qtop.analysis.live import channel_series
from qtop.stats.model import SessionModel

ROLLING_WINDOW_S = 10.0


@dataclass(frozen=True, slots=True)
class PowerNow:
    """The latest readings of the chosen power source (watts, amps, volts)."""

    power_w: float | None
    current_a: float | None
    voltage_v: float | None
    average_w: float | None
    peak_w: float | None
    charging: bool
    trace: tuple[tuple[float, float], ...]
    current_sign: str | None = None


def _scaled(model: SessionModel, channel_id: str | None, signed: bool = False) -> float | None:
    if channel_id is None:
        return None
    value = model.last_value(channel_id)
    channel = model.channels.get(channel_id)
    if value is None or channel is None:
        return None
    return (value if signed else abs(value)) * UNIT_SCALE.get(channel.unit, 1.0)


def _group_channel(model: SessionModel, source: PowerSource, kind: str) -> str | None:
    return next(
        (
            c.id
            for c in model.channels.values()
            if c.kind == kind and c.id.rsplit("/", 1)[0] == source.group
        ),
        None,
    )


def power_trace(model: SessionModel, source: PowerSource) -> list[tuple[float, float]]:
    """(device time, watts) from the model's series of the source's channels."""
    if any(c not in model.channel_series for c in source.channels):
        return []
    series = {c: channel_series(model.channel_series[c]) for c in source.channels}
    return build_power_trace(source, model.channels, series).power_points()


def _current_sign(model: SessionModel) -> str | None:
    """The sign convention the battery's gauge was seen to follow, in a few words."""
    kinds = ("current_raw", "battery_status")
    series = {
        c.id: channel_series(model.channel_series[c.id])
        for c in model.channels.values()
        if c.kind in kinds and c.id in model.channel_series
    }
    sign = detect_current_sign(model.channels, series)
    return sign.short() if sign is not None else None


def power_now(model: SessionModel, source: PowerSource | None) -> PowerNow | None:
    if source is None:
        return None
    trace = power_trace(model, source)
    current_id = _group_channel(model, source, "current")
    voltage_id = _group_channel(model, source, "voltage")
    # The battery current keeps its sign: negative out of the battery, positive into it.
    current, voltage = _scaled(model, current_id, signed=True), _scaled(model, voltage_id)
    if source.method == "power":
        power = _scaled(model, source.channels[0])
    elif source.method == "current x voltage":
        power = abs(current) * voltage if current is not None and voltage is not None else None
    else:
        power = trace[-1][1] if trace else None
    recent = [
        w for t, w in trace if model.t_last is not None and t >= model.t_last - ROLLING_WINDOW_S
    ]
    status = model.last_value(source.status_channel) if source.status_channel else None
    return PowerNow(
        power_w=power,
        current_a=current,
        voltage_v=voltage,
        average_w=sum(recent) / len(recent) if recent else None,
        peak_w=max((w for _, w in trace), default=None),
        charging=status is not None and round(status) == STATUS_CHARGING,
        trace=tuple(trace),
        current_sign=_current_sign(model) if current is not None else None,
    )

"""Builders of synthetic event streams whose analysis has known answers."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

from qtop.events import (
    ChannelInfo,
    Channels,
    End,
    Event,
    Header,
    Iteration,
    PhaseChange,
    Sample,
    Trip,
)

NSP = "thermal/nsp-0-0-0-thermal"
CDSP = "cooling/cdsp"
BATTERY_CURRENT = "power/battery/current"
BATTERY_VOLTAGE = "power/battery/voltage"
BATTERY_POWER = "power/battery/power"
BATTERY_STATUS = "power/battery/status"
METER_POWER = "meter/ina226/power"

NSP_INFO = ChannelInfo(
    id=NSP,
    kind="temperature",
    unit="C",
    label="nsp-0-0-0-thermal",
    trips=(Trip(type="passive", temp_c=95.0, hyst_c=5.0),),
)
CDSP_INFO = ChannelInfo(id=CDSP, kind="cooling", unit="state", label="cdsp", max_state=12)
CURRENT_INFO = ChannelInfo(id=BATTERY_CURRENT, kind="current", unit="A")
VOLTAGE_INFO = ChannelInfo(id=BATTERY_VOLTAGE, kind="voltage", unit="V")
POWER_INFO = ChannelInfo(id=BATTERY_POWER, kind="power", unit="W")
STATUS_INFO = ChannelInfo(id=BATTERY_STATUS, kind="battery_status", unit="code")
METER_INFO = ChannelInfo(id=METER_POWER, kind="power", unit="W", label="ina226")


def header(
    profile: dict | None = None, device: dict | None = None, session_id: str = "synthetic"
) -> Header:
    return Header(
        qtop_version="0.1.0",
        session_id=session_id,
        created="2026-11-29T10:00:00Z",
        source="synthetic",
        profile=profile if profile is not None else {"name": "synthetic"},
        device=device if device is not None else {},
    )


def back_to_back(
    t0: float,
    latencies: Sequence[float],
    *,
    variant: str = "",
    phase: str = "measure",
    gap_s: float = 0.0,
    first_index: int = 0,
    failed: Sequence[int] = (),
    metrics: Callable[[int], dict[str, float]] | None = None,
) -> list[Iteration]:
    """Iterations run one after the other from t0 (gap_s of idle between them)."""
    out = []
    t = t0
    for k, latency in enumerate(latencies):
        start, end = t, t + latency
        out.append(
            Iteration(
                t=end,
                seq=first_index + k,
                index=first_index + k,
                phase=phase,
                variant=variant,
                start=start,
                end=end,
                latency_s=latency,
                exit_status=1 if k in failed else 0,
                metrics=metrics(k) if metrics else {},
            )
        )
        t = end + gap_s
    return out


def ticks(
    t0: float, t1: float, dt: float, values: Callable[[float], dict[str, float | None]]
) -> list[Sample]:
    """One sample every dt from t0 to t1 inclusive (times computed, not accumulated)."""
    out = []
    k = 0
    while t0 + k * dt <= t1 + 1e-9:
        t = t0 + k * dt
        out.append(Sample(t=t, seq=k, values=values(t)))
        k += 1
    return out


def stream(
    infos: Sequence[ChannelInfo],
    *parts: Sequence[Event],
    head: Header | None = None,
    t0: float = 0.0,
) -> list[Event]:
    """Header, channels, then every part merged by device time."""
    body = sorted((e for part in parts for e in part), key=lambda e: e.t or 0.0)
    return [head or header(), Channels(t=t0, channels=tuple(infos)), *body]


def phase(t: float, name: str, variant: str = "") -> PhaseChange:
    return PhaseChange(t=t, phase=name, variant=variant)


def write_recording(path: Path, events: Sequence[Event]) -> Path:
    """A recording as plain JSON lines: header, events, end."""
    last_t = max((e.t for e in events if e.t is not None), default=0.0)
    lines = [json.dumps(e.to_dict()) for e in events]
    lines.append(json.dumps(End(t=last_t, reason="completed").to_dict()))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path

"""The event vocabulary: everything qtop knows about a session is one of these.

A live session and a replayed recording produce the same sequence of these
objects (design principle 1), and a recording is these objects as JSON Lines.
Each event turns into a plain JSON-ready dict with ``to_dict`` and back with
``event_from_dict``; the round trip is lossless. ``docs/recording-format.md``
describes every field.

Times: ``t`` is the device's monotonic clock in seconds, stamped on the
device; ``host_t`` is the host's wall clock (Unix seconds) when the event was
received and is never used for latency, rates or energy.
"""

from __future__ import annotations

import typing
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from qtop.codec import decode_dataclass, encode_dataclass

RECORDING_FORMAT = "qtop-recording"
RECORDING_VERSION = 1

Phase = Literal["idle", "cooldown", "baseline", "warmup", "measure", "done"]
PHASES: tuple[str, ...] = typing.get_args(Phase)


class EventDecodeError(ValueError):
    """A dict that does not describe a valid event."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Event:
    """Fields every event carries."""

    kind: ClassVar[str] = ""
    t: float | None = None
    host_t: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return _encode_event(self)


@dataclass(frozen=True, slots=True, kw_only=True)
class Trip:
    """One trip point of a thermal zone, in degrees Celsius."""

    type: str
    temp_c: float
    hyst_c: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ChannelInfo:
    """What one sampled channel is: its id, physical kind, unit and source."""

    id: str
    kind: str
    unit: str
    label: str = ""
    path: str = ""
    trips: tuple[Trip, ...] = ()
    max_state: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Header(Event):
    """First line of every recording: format, versions, profile and device."""

    kind: ClassVar[str] = "header"
    format: str = RECORDING_FORMAT
    version: int = RECORDING_VERSION
    qtop_version: str = ""
    session_id: str = ""
    created: str = ""
    source: str = ""
    profile: dict[str, Any] = field(default_factory=dict)
    device: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class Channels(Event):
    """The set of sampled channels; later samples refer to these ids."""

    kind: ClassVar[str] = "channels"
    channels: tuple[ChannelInfo, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Sample(Event):
    """One sampler tick: every channel's value, ``None`` when unavailable."""

    kind: ClassVar[str] = "sample"
    seq: int = 0
    values: dict[str, float | None] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class Iteration(Event):
    """One timed execution of the run's command (or one inference of it)."""

    kind: ClassVar[str] = "iteration"
    seq: int = 0
    index: int = 0
    phase: str = "measure"
    variant: str = ""
    start: float = 0.0
    end: float = 0.0
    latency_s: float = 0.0
    exit_status: int = 0
    error: str | None = None
    metrics: dict[str, float] = field(default_factory=dict)
    # Wall latency only: the spread of the device timer's calibration (half its IQR), seconds.
    latency_uncertainty_s: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class PhaseChange(Event):
    """The run entered a phase (cooldown, warm-up, measuring, ...)."""

    kind: ClassVar[str] = "phase"
    phase: str = "idle"
    variant: str = ""
    planned_iterations: int | None = None
    planned_duration_s: float | None = None
    note: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class ProfileReport(Event):
    """Parsed profiler output (graph-level and per-op rows), parsed at the edge."""

    kind: ClassVar[str] = "profile_report"
    source_kind: str = ""
    path: str = ""
    variant: str = ""
    report: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class Log(Event):
    """One line of device output, or a note from qtop or its device agent."""

    kind: ClassVar[str] = "log"
    seq: int = 0
    stream: str = "stdout"
    level: str = "info"
    text: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class Marker(Event):
    """A point of interest: a user's note, or one qtop detected."""

    kind: ClassVar[str] = "marker"
    label: str = ""
    note: str = ""
    origin: str = "user"


@dataclass(frozen=True, slots=True, kw_only=True)
class Link(Event):
    """A change of the link to the device, or a gap the device could not fill."""

    kind: ClassVar[str] = "link"
    state: str = "connected"
    detail: str = ""
    attempt: int = 0
    gap_from: float | None = None
    gap_to: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Keyframe(Event):
    """A snapshot of the session model, so a reader can seek without replaying all."""

    kind: ClassVar[str] = "keyframe"
    state: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class End(Event):
    """Last line of a recording that was closed cleanly."""

    kind: ClassVar[str] = "end"
    reason: str = "completed"
    detail: str = ""
    counts: dict[str, int] = field(default_factory=dict)


EVENT_TYPES: dict[str, type[Event]] = {
    cls.kind: cls
    for cls in (
        Header,
        Channels,
        Sample,
        Iteration,
        PhaseChange,
        ProfileReport,
        Log,
        Marker,
        Link,
        Keyframe,
        End,
    )
}


def _encode_event(event: Event) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": event.kind}
    out.update(encode_dataclass(event, omit="none"))
    return out


def event_from_dict(data: dict[str, Any]) -> Event:
    """Build the event a dict describes; raises ``EventDecodeError`` when it cannot."""
    if not isinstance(data, dict):
        raise EventDecodeError(f"an event must be a JSON object, got {type(data).__name__}")
    kind = data.get("kind")
    cls = EVENT_TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise EventDecodeError(f"unknown event kind {kind!r}")
    body = {key: value for key, value in data.items() if key != "kind"}
    try:
        return decode_dataclass(cls, body, kind)
    except ValueError as exc:
        raise EventDecodeError(str(exc)) from None

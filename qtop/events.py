"""The event vocabulary: everything qtop knows about a session is one of these.

A live session and a replayed recording produce the same sequence of these
objects (design principle 1), and a recording is these objects as JSON Lines
(``docs/recording-format.md`` describes every field and how the file packs
runs of them). Each event turns into a plain JSON-ready dict with ``to_dict``
and back with ``event_from_dict``; the round trip is lossless.

The classes are msgspec structs (frozen, keyword-only; ``replace`` makes a
changed copy) and they are also the schema: their annotations, with ``Finite``
and ``Int64`` where a JSON number must be bounded, are compiled by msgspec
into a decoder (``qtop.record.lines`` decodes a recording's lines with one),
so decoding, type checks and range checks happen in one pass in C instead of
per field in Python. A value of the wrong type, a non-finite number or an
integer beyond 64 bits is an ``EventDecodeError`` naming the field.

``IterationRun`` and ``LogRun`` are consecutive events as a recording packs
them, for readers that fold a whole file without making every event.

Times: ``t`` is the device's monotonic clock in seconds, stamped on the
device; ``host_t`` is the host's wall clock (Unix seconds) when the event was
received and is never used for latency, rates or energy.
"""

from __future__ import annotations

import typing
from collections.abc import Callable
from typing import Annotated, Any, ClassVar, Literal, TypeVar

import msgspec

RECORDING_FORMAT = "qtop-recording"
RECORDING_VERSION = 2

Phase = Literal["idle", "cooldown", "baseline", "warmup", "measure", "done"]
PHASES: tuple[str, ...] = typing.get_args(Phase)

_LARGEST = 1.7976931348623157e308
# A float that JSON can carry: NaN and the infinities are refused (a reading that
# is not a number is ``None``, never a NaN).
Finite = Annotated[float, msgspec.Meta(ge=-_LARGEST, le=_LARGEST)]
# Counters and sequence numbers: anything wider is a damaged line, not a count.
Int64 = Annotated[int, msgspec.Meta(ge=-(2**63), le=2**63 - 1)]


class EventDecodeError(ValueError):
    """A dict or line that does not describe a valid event."""


class Event(msgspec.Struct, frozen=True, kw_only=True, gc=False, tag_field="kind"):
    """Fields every event carries."""

    kind: ClassVar[str] = ""
    t: Finite | None = None
    host_t: Finite | None = None

    def to_dict(self) -> dict[str, Any]:
        """The event as JSON types: ``kind`` first, then ``t``; ``None`` fields left out."""
        return _encode_event(self)


class Trip(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """One trip point of a thermal zone, in degrees Celsius."""

    type: str
    temp_c: Finite
    hyst_c: Finite | None = None


class ChannelInfo(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """What one sampled channel is: its id, physical kind, unit and source."""

    id: str
    kind: str
    unit: str
    label: str = ""
    path: str = ""
    trips: tuple[Trip, ...] = ()
    max_state: Int64 | None = None


class Header(Event, tag="header", frozen=True):
    """First line of every recording: format, versions, profile and device."""

    kind: ClassVar[str] = "header"
    format: str = RECORDING_FORMAT
    version: Int64 = RECORDING_VERSION
    qtop_version: str = ""
    session_id: str = ""
    created: str = ""
    source: str = ""
    profile: dict[str, Any] = {}
    device: dict[str, Any] = {}


class Channels(Event, tag="channels", frozen=True):
    """The set of sampled channels; later samples refer to these ids."""

    kind: ClassVar[str] = "channels"
    channels: tuple[ChannelInfo, ...] = ()


class Sample(Event, tag="sample", frozen=True):
    """One sampler tick: every channel's value, ``None`` when unavailable."""

    kind: ClassVar[str] = "sample"
    seq: Int64 = 0
    values: dict[str, Finite | None] = {}


class Iteration(Event, tag="iteration", frozen=True):
    """One timed execution of the run's command (or one inference of it)."""

    kind: ClassVar[str] = "iteration"
    seq: Int64 = 0
    index: Int64 = 0
    phase: str = "measure"
    variant: str = ""
    start: Finite = 0.0
    end: Finite = 0.0
    latency_s: Finite = 0.0
    exit_status: Int64 = 0
    error: str | None = None
    metrics: dict[str, Finite] = {}
    # Wall latency only: the spread of the device timer's calibration (half its IQR), seconds.
    latency_uncertainty_s: Finite | None = None
    # Paced runs (``run.rate``): the arrival the schedule gave it (device time), how late it
    # started after that, and whether it ended later than the deadline after its arrival.
    scheduled: Finite | None = None
    lateness_s: Finite | None = None
    missed: bool | None = None


class PhaseChange(Event, tag="phase", frozen=True):
    """The run entered a phase (cooldown, warm-up, measuring, ...)."""

    kind: ClassVar[str] = "phase"
    phase: str = "idle"
    variant: str = ""
    planned_iterations: Int64 | None = None
    planned_duration_s: Finite | None = None
    note: str = ""


class ProfileReport(Event, tag="profile_report", frozen=True):
    """Parsed profiler output (graph-level and per-op rows), parsed at the edge."""

    kind: ClassVar[str] = "profile_report"
    source_kind: str = ""
    path: str = ""
    variant: str = ""
    report: dict[str, Any] = {}


class Log(Event, tag="log", frozen=True):
    """One line of device output, or a note from qtop or its device agent."""

    kind: ClassVar[str] = "log"
    seq: Int64 = 0
    stream: str = "stdout"
    level: str = "info"
    text: str = ""


class Marker(Event, tag="marker", frozen=True):
    """A point of interest: a user's note, or one qtop detected."""

    kind: ClassVar[str] = "marker"
    label: str = ""
    note: str = ""
    origin: str = "user"
    # The variant a marker is about (an early stop); None (left out) when it is about the run.
    variant: str | None = None


class Link(Event, tag="link", frozen=True):
    """A change of the link to the device, or a gap the device could not fill."""

    kind: ClassVar[str] = "link"
    state: str = "connected"
    detail: str = ""
    attempt: Int64 = 0
    gap_from: Finite | None = None
    gap_to: Finite | None = None


class Keyframe(Event, tag="keyframe", frozen=True):
    """A snapshot of the session model, so a reader can seek without replaying all."""

    kind: ClassVar[str] = "keyframe"
    state: dict[str, Any] = {}


class End(Event, tag="end", frozen=True):
    """Last line of a recording that was closed cleanly."""

    kind: ClassVar[str] = "end"
    reason: str = "completed"
    detail: str = ""
    counts: dict[str, Int64] = {}


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


class IterationRun:
    """Consecutive iterations as columns, as a recording packs them.

    A reader that folds a whole recording (``report``) takes the columns as
    they are; ``events()`` gives the same ``Iteration`` objects one by one.
    """

    __slots__ = ("_hosts", "_plain", "ends", "error", "index", "latency", "lateness", "metrics",
                 "missed", "n", "phase", "scheduled", "seq", "starts", "status", "uncertainty",
                 "variant")  # fmt: skip

    def __init__(
        self,
        *,
        hosts: list[float | None] | Callable[[], list[float | None]],
        seq: int,
        index: list[int],
        phase: list[str],
        variant: list[str],
        starts: list[float],
        ends: list[float],
        latency: list[float],
        status: list[int],
        error: list[str | None],
        metrics: list[dict[str, float]] | list[None],
        scheduled: list[float | None] | None = None,
        lateness: list[float | None] | None = None,
        missed: list[bool | None] | None = None,
        uncertainty: list[float | None] | None = None,
        plain: bool | None = None,
    ) -> None:
        self.n = len(latency)
        # A reader that knows (the line left the columns out) says so; else worked out once.
        self._plain = plain
        self._hosts, self.seq, self.index, self.phase = hosts, seq, index, phase
        self.variant, self.starts, self.ends, self.latency = variant, starts, ends, latency
        self.status, self.error, self.metrics = status, error, metrics
        # Paced runs only; None for a run without a schedule.
        self.scheduled, self.lateness, self.missed = scheduled, lateness, missed
        # Wall latency only: the timer calibration's spread, None where there was none.
        self.uncertainty = uncertainty

    @property
    def plain(self) -> bool:
        """Every iteration succeeded, none has metrics, and the run has no schedule: a fold
        of such runs needs nothing but their columns."""
        if self._plain is None:
            self._plain = not any(self.status) and not any(self.metrics) and self.lateness is None
        return self._plain

    @property
    def hosts(self) -> list[float | None]:
        """Host times (worked out on first use: a fold of a whole file rarely needs them)."""
        if callable(self._hosts):
            self._hosts = self._hosts()
        return self._hosts

    def event(self, k: int) -> Iteration:
        metrics = self.metrics[k]
        return Iteration(
            t=self.ends[k],
            host_t=self.hosts[k],
            seq=self.seq + k,
            index=self.index[k],
            phase=self.phase[k],
            variant=self.variant[k],
            start=self.starts[k],
            end=self.ends[k],
            latency_s=self.latency[k],
            exit_status=self.status[k],
            error=self.error[k],
            metrics=metrics if metrics is not None else {},
            scheduled=self.scheduled[k] if self.scheduled is not None else None,
            lateness_s=self.lateness[k] if self.lateness is not None else None,
            missed=self.missed[k] if self.missed is not None else None,
            latency_uncertainty_s=self.uncertainty[k] if self.uncertainty is not None else None,
        )

    def events(self) -> list[Event]:
        return [self.event(k) for k in range(self.n)]


class LogRun:
    """Consecutive output lines (stream ``stdout``, level ``info``, no device time)."""

    __slots__ = ("_hosts", "n", "seq", "texts")

    def __init__(
        self,
        *,
        hosts: list[float | None] | Callable[[], list[float | None]],
        seq: int,
        texts: list[str],
    ) -> None:
        self.n = len(texts)
        self._hosts, self.seq, self.texts = hosts, seq, texts

    @property
    def hosts(self) -> list[float | None]:
        """Host times (worked out on first use)."""
        if callable(self._hosts):
            self._hosts = self._hosts()
        return self._hosts

    def event(self, k: int) -> Log:
        return Log(host_t=self.hosts[k], seq=self.seq + k, text=self.texts[k])

    def events(self) -> list[Event]:
        return [self.event(k) for k in range(self.n)]


_ORDER: dict[type[Event], tuple[str, ...]] = {}
EventT = TypeVar("EventT", bound=Event)


def replace(event: EventT, **changes: Any) -> EventT:
    """A copy of ``event`` with some fields changed (events are frozen)."""
    return msgspec.structs.replace(event, **changes)


def _plain(value: Any) -> Any:
    """JSON types only: nested records (channels, trips) as dicts without their ``None``
    fields, tuples as lists, mappings copied."""
    if isinstance(value, tuple | list):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, msgspec.Struct):
        out = {}
        for name in value.__struct_fields__:
            item = getattr(value, name)
            if item is not None:
                out[name] = _plain(item)
        return out
    return value


def _field_order(cls: type[Event]) -> tuple[str, ...]:
    order = _ORDER.get(cls)
    if order is None:
        rest = tuple(n for n in cls.__struct_fields__ if n not in ("t", "host_t"))
        order = _ORDER[cls] = ("t", "host_t", *rest)
    return order


def _encode_event(event: Event) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": event.kind}
    for name in _field_order(type(event)):
        value = getattr(event, name)
        if value is None:
            continue
        out[name] = _plain(value) if isinstance(value, tuple | dict) else value
    return out


def describe_error(kind: str, exc: Exception) -> str:
    """msgspec's ``... - at `$.field``` as ``kind.field: ...``."""
    message = str(exc)
    problem, _, where = message.rpartition(" - at `$")
    if not problem:
        return f"{kind}: {message}"
    return f"{kind}{where.rstrip('`')}: {problem}"


def event_from_dict(data: dict[str, Any]) -> Event:
    """Build the event a dict describes; raises ``EventDecodeError`` when it cannot."""
    if not isinstance(data, dict):
        raise EventDecodeError(f"an event must be a JSON object, got {type(data).__name__}")
    kind = data.get("kind")
    cls = EVENT_TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise EventDecodeError(f"unknown event kind {kind!r}")
    try:
        return msgspec.convert(data, cls)
    except msgspec.ValidationError as exc:
        raise EventDecodeError(describe_error(str(kind), exc)) from None

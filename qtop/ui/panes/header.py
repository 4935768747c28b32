"""Header: which device and run, where the run is, the link, sampling, recording."""

from __future__ import annotations

import itertools

from textual.app import ComposeResult
from textual.content import Content
from textual.widgets import Static

from qtop.stats.model import SessionModel
from qtop.ui.format import clock, ellipsize
from qtop.ui.panes.base import Pane
from qtop.ui.playback import speed_name
from qtop.ui.view import View

# A live link is "stale" once nothing arrived for this long, or three sample periods.
STALE_AFTER_S = 2.0
LOUD = "bold reverse $error"
WARN = "bold $warning"
GOOD = "$success"
MUTED = "$text-muted"

Chip = tuple[str, str]


def phase_chip(model: SessionModel) -> Chip:
    """``warm-up 3/5``, ``measuring 41/100``, ``sustained 2:10 / 10:00``, ``cooldown 0:12``."""
    if model.end is not None:
        return f"ended: {model.end.reason}", WARN if model.end.reason != "completed" else GOOD
    phase = model.phase
    elapsed = (
        model.t_last - phase.started_t
        if model.t_last is not None and phase.started_t is not None
        else None
    )
    done = model.done(phase.phase, phase.variant) + model.failed(phase.phase, phase.variant)
    if phase.phase == "warmup":
        planned = f"/{phase.planned_iterations}" if phase.planned_iterations else ""
        return f"warm-up {done}{planned}", "bold $warning"
    if phase.phase == "measure":
        if phase.planned_duration_s:
            return f"sustained {clock(elapsed)} / {clock(phase.planned_duration_s)}", "bold $accent"
        planned = f"/{phase.planned_iterations}" if phase.planned_iterations else ""
        return f"measuring {done}{planned}", "bold $accent"
    if phase.phase == "cooldown":
        return f"cooldown {clock(elapsed)}", "bold $secondary"
    if phase.phase == "baseline":
        return f"idle baseline {clock(elapsed)}", "bold $secondary"
    if phase.phase == "done":
        return "run done", GOOD
    return phase.phase, MUTED


def live_link(view: View) -> tuple[str | None, float | None]:
    """The live source's own word on the link and its silence, when it keeps one.

    A LiveSource keeps ``state.link`` (connecting, connected, disconnected,
    reconnecting, ended) and ``state.stale_s()``; other sources do not, and
    then the stream's own arrival times tell the silence.
    """
    state = getattr(view.playback.source, "state", None)
    link = getattr(state, "link", None)
    stale = getattr(state, "stale_s", None)
    silent = stale() if callable(stale) else view.stream.silent_for()
    return (link if isinstance(link, str) else None), silent


def link_chip(view: View) -> Chip:
    model = view.model
    link = model.link
    if link.state in ("disconnected", "reconnecting"):
        return f"link {link.state.upper()} {link.detail}".strip(), LOUD
    history = []
    if link.reconnects:
        history.append(f"{link.reconnects} reconnect(s)")
    if link.gaps:
        history.append(f"{len(link.gaps)} gap(s) {link.gap_seconds:.1f} s")
    gaps = "".join(f" · {item}" for item in history)
    if view.playback.is_replay:
        return f"link ok{gaps}", WARN if history else MUTED
    state, silent = live_link(view)
    if state in ("connecting", "disconnected", "reconnecting"):
        return f"link {state.upper()}{gaps}", LOUD
    rate = sample_rate(model)
    limit = max(STALE_AFTER_S, 3 / rate) if rate else STALE_AFTER_S
    if model.end is None and silent is not None and silent > limit:
        return f"link stale {silent:.0f} s", LOUD
    return f"link ok{gaps}", WARN if history else GOOD


RATE_POINTS = 32


def sample_rate(model: SessionModel) -> float | None:
    """Ticks per second of device time, from the spacing of the latest series points.

    A point stands for ``stride`` ticks once the series has been thinned, so
    the rate holds for a session of any length.
    """
    series = max(model.channel_series.values(), key=lambda s: s.total, default=None)
    if series is None:
        return None
    times = [p.t for p in series.points[-RATE_POINTS:]]
    if len(times) < 2:
        return None
    gaps = sorted(b - a for a, b in itertools.pairwise(times))
    typical = gaps[len(gaps) // 2]
    return series.stride / typical if typical > 0 else None


def identity_chips(view: View) -> list[Chip]:
    model = view.model
    header = model.header
    device = ""
    profile = ""
    if header is not None:
        device = str(header.device.get("hostname") or header.device.get("host") or "")
        soc = header.device.get("soc")
        if soc:
            device = f"{device} ({soc})" if device else str(soc)
        profile = str(header.profile.get("name", ""))
    chips: list[Chip] = [("qtop", "bold $accent")]
    chips.append((f"device {device or '—'}", "bold"))
    chips.append((f"profile {profile or '—'}", ""))
    if model.variants and any(model.variants):
        running = model.phase.variant
        shown = view.variant
        text = f"variant {shown or '(none)'}"
        if view.variant_pinned and shown != running:
            text += f" (running: {running or '(none)'})"
        position = (
            f" {model.variants.index(shown) + 1}/{len(model.variants)}"
            if shown in model.variants
            else ""
        )
        chips.append((text + position, "bold"))
    chips.append((view.playback.source.description, MUTED))
    return chips


def status_chips(view: View) -> list[Chip]:
    model = view.model
    chips: list[Chip] = [phase_chip(model), link_chip(view)]
    if model.probe_warnings:
        # What the probe found missing (no zones, no power source): the fix is in the log.
        more = len(model.probe_warnings) - 1
        first = model.probe_warnings[0].split("; fix: ")[0]
        chips.append((f"⚠ {first}{f' (+{more} more)' if more else ''}, fix in log", LOUD))
    rate = sample_rate(model)
    channels = len(model.channels)
    chips.append((f"{rate:.1f} Hz × {channels} ch" if rate else f"— Hz × {channels} ch", ""))
    if model.missed_ticks:
        chips.append((f"{model.missed_ticks} ticks missed", WARN))
    playback = view.playback
    if playback.is_replay:
        replay = playback.replay
        assert replay is not None
        chips.append((f"replay {speed_name(replay.speed)}", MUTED))
    elif playback.display_paused:
        chips.append(("DISPLAY PAUSED (space)", LOUD))
    if view.recording_error:
        chips.append(("RECORDING FAILED: " + view.recording_error, LOUD))
    elif view.recording is not None:
        if view.recording_paused:
            chips.append((f"REC PAUSED {view.recording.name}", WARN))
        else:
            chips.append((f"● rec {view.recording.name}", "bold $error"))
    elif not playback.is_replay:
        chips.append(("not recording", WARN))
    if view.session_error:
        chips.append((view.session_error, LOUD))
    return chips


def chips_line(chips: list[Chip], width: int) -> Content:
    """Chips separated by bars, cut to ``width`` so nothing wraps."""
    parts: list[str | tuple[str, str]] = [" "]
    used = 1
    for index, (text, style) in enumerate(chips):
        separator = " │ " if index else ""
        room = width - used - len(separator)
        if room < 4:
            break
        text = ellipsize(text, room)
        if separator:
            parts.append((separator, MUTED))
        parts.append((text, style) if style else text)
        used += len(separator) + len(text)
    return Content.assemble(*parts)


class HeaderPane(Pane, can_focus=False):
    """Two lines across the top: who and what, then where the run is."""

    ALLOW_MAXIMIZE = False
    DEFAULT_CSS = """
    HeaderPane {
        height: 2;
        border: none;
        padding: 0;
        background: $panel;
    }
    HeaderPane > Static { height: 1; }
    """

    def compose(self) -> ComposeResult:
        yield Static(id="identity")
        yield Static(id="status")

    def update_view(self, view: View) -> None:
        width = self.size.width or 160
        identity, status = identity_chips(view), status_chips(view)
        self.show("#identity", (width, identity), chips_line(identity, width))
        self.show("#status", (width, status), chips_line(status, width))

"""Header: which device and run, where the run is and when it ends, the link, recording."""

from __future__ import annotations

import itertools
from collections.abc import Callable

from textual.app import ComposeResult
from textual.content import Content
from textual.widgets import Static

from qtop.live.progress import phase_eta_s
from qtop.stats.model import SessionModel
from qtop.textsafe import clean
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
# The device agent's note on each measured block of an interleaved run: ``block 3/12``.
BLOCK_NOTE = "block "
# The link states in which the device is not being heard from.
LINK_DOWN = ("connecting", "disconnected", "reconnecting")

Chip = tuple[str, str]


def phase_chip(model: SessionModel) -> Chip:
    """``warm-up 3/5``, ``measuring 41/100 · ETA 0:35``, ``sustained 2:10 / 10:00 · ETA 7:50``."""
    if model.end is not None:
        reason = model.end.reason
        return f"ended: {clean(reason)}", GOOD if reason == "completed" else WARN
    phase = model.phase
    elapsed = (
        model.t_last - phase.started_t
        if model.t_last is not None and phase.started_t is not None
        else None
    )
    done = model.done(phase.phase, phase.variant) + model.failed(phase.phase, phase.variant)
    eta = phase_eta_s(model)
    left = f" · ETA {clock(eta)}" if eta is not None else ""
    if phase.phase == "warmup":
        planned = f"/{phase.planned_iterations}" if phase.planned_iterations else ""
        return f"warm-up {done}{planned}{left}", "bold $warning"
    if phase.phase == "measure" and phase.note.startswith(BLOCK_NOTE):
        # Interleaved variants: which block of which variant, and its count so far.
        of = f" of {clean(phase.variant)}" if phase.variant else ""
        planned = f"/{phase.planned_iterations}" if phase.planned_iterations else ""
        return f"{clean(phase.note)}{of} · measured {done}{planned}", "bold $accent"
    if phase.phase == "measure":
        if phase.planned_duration_s:
            total = clock(phase.planned_duration_s)
            return f"sustained {clock(elapsed)} / {total}{left}", "bold $accent"
        planned = f"/{phase.planned_iterations}" if phase.planned_iterations else ""
        return f"measuring {done}{planned}{left}", "bold $accent"
    if phase.phase == "cooldown":
        return f"cooldown {clock(elapsed)}", "bold $secondary"
    if phase.phase == "baseline":
        return f"idle baseline {clock(elapsed)}", "bold $secondary"
    if phase.phase == "done":
        return "run done", GOOD
    return clean(phase.phase), MUTED


def plural(count: int, one: str, many: str | None = None) -> str:
    """``1 reconnect``, ``2 reconnects``."""
    return f"{count} {one if count == 1 else (many or one + 's')}"


def link_history(model: SessionModel) -> list[str]:
    """What the link has been through: reconnects, and gaps with their total length."""
    link = model.link
    history = []
    if link.reconnects:
        history.append(plural(link.reconnects, "reconnect"))
    if link.gaps:
        history.append(f"{plural(len(link.gaps), 'gap')} {link.gap_seconds:.1f} s")
    return history


def link_chip(view: View, silent_s: float | None) -> Chip:
    """The link as the event stream describes it, and (live) how long it has been quiet."""
    model = view.model
    link = model.link
    history = link_history(model)
    gaps = "".join(f" · {item}" for item in history)
    if link.state in LINK_DOWN and model.end is None:
        return f"link {link.state.upper()}{gaps}", LOUD
    if view.playback.is_replay:
        return f"link ok{gaps}", WARN if history else MUTED
    rate = sample_rate(model)
    limit = max(STALE_AFTER_S, 3 / rate) if rate else STALE_AFTER_S
    if model.end is None and silent_s is not None and silent_s > limit:
        return f"link stale {silent_s:.0f} s", LOUD
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
    chips.append((f"device {clean(device) or '—'}", "bold"))
    chips.append((f"profile {clean(profile) or '—'}", ""))
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
        chips.append((clean(text + position), "bold"))
    chips.append((clean(view.playback.source.description), MUTED))
    return chips


def status_chips(view: View, silent_s: float | None) -> list[Chip]:
    model = view.model
    chips: list[Chip] = [phase_chip(model), link_chip(view, silent_s)]
    if model.probe_warnings:
        # What the probe found missing (no zones, no power source): the fix is in the log.
        more = len(model.probe_warnings) - 1
        first = clean(model.probe_warnings[0].split("; fix: ")[0])
        chips.append((f"⚠ {first}{f' (+{more} more)' if more else ''}, fix in log", LOUD))
    rate = sample_rate(model)
    channels = len(model.channels)
    chips.append((f"{rate:.1f} Hz × {channels} ch" if rate else f"— Hz × {channels} ch", ""))
    if model.missed_ticks:
        chips.append((f"{plural(model.missed_ticks, 'tick')} missed", WARN))
    playback = view.playback
    replay = playback.replay
    if replay is not None:
        if replay.paused:
            chips.append(("replay PAUSED (space)", WARN))
        else:
            chips.append((f"replay {speed_name(replay.speed)}", MUTED))
    elif playback.display_paused:
        chips.append(("DISPLAY PAUSED (space)", LOUD))
    if view.recording_error:
        chips.append(("RECORDING FAILED: " + clean(view.recording_error), LOUD))
    elif view.recording is not None:
        if view.recording_paused:
            chips.append((f"REC PAUSED {clean(view.recording.name)}", WARN))
        else:
            chips.append((f"● rec {clean(view.recording.name)}", "bold $error"))
    elif replay is None:
        chips.append(("not recording", WARN))
    if view.session_error:
        chips.append((clean(view.session_error), LOUD))
    end = model.end
    if end is not None and end.reason != "completed" and end.detail:
        # Last, so it takes the room the line has left; the device log holds it whole.
        chips.append((clean(end.detail), WARN))
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
    """Two lines across the top: who and what, then where the run is.

    Between display refreshes a clock tick redraws the status line, so a link
    that went quiet is called stale even though no event says so.
    """

    ALLOW_MAXIMIZE = False
    TICK_S = 1.0
    DEFAULT_CSS = """
    HeaderPane {
        height: 2;
        border: none;
        padding: 0;
        background: $panel;
    }
    HeaderPane > Static { height: 1; }
    """

    def __init__(self, silence: Callable[[], float | None], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._silence = silence

    def compose(self) -> ComposeResult:
        yield Static(id="identity")
        yield Static(id="status")

    def on_mount(self) -> None:
        self.set_interval(self.TICK_S, self._tick)

    def on_resize(self) -> None:
        if self.view is not None:
            self.draw(self.view)

    def _tick(self) -> None:
        if self.view is not None and not self.view.playback.is_replay:
            self._draw_status(self.view)

    def draw(self, view: View) -> None:
        width = self.size.width or 160
        self.put("#identity", chips_line(identity_chips(view), width))
        self._draw_status(view)

    def _draw_status(self, view: View) -> None:
        width = self.size.width or 160
        self.put("#status", chips_line(status_chips(view, self._silence()), width))

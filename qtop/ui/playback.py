"""What the front end may ask of its source, found by looking at the source once.

A replay can pause, step, change speed and seek; a live source may stop the
run on the device; either way the session may be recording. The panes and the
key bindings ask this object rather than testing types themselves. Marks to
seek to are the recording's (phase changes, markers, link events), the markers
saved next to it, and the ones the analysis found (throttling onsets). No
Textual here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from qtop.events import Marker
from qtop.record.reader import Mark
from qtop.record.replay import ReplaySource
from qtop.session import Session
from qtop.textsafe import clean
from qtop.ui.format import clock, offset

SEEKABLE_KINDS = ("phase", "marker", "link", "onset")
# Pressing "previous" right after landing on a mark must go to the one before it.
PREVIOUS_SLACK_S = 0.5
LANDING_SLACK_S = 1.0
SPEED_NAMES = {math.inf: "max"}


@dataclass(frozen=True, slots=True)
class Landing:
    """Where a jump to a mark went: the mark and its offset from the start."""

    mark: Mark
    offset_s: float | None

    def describe(self) -> str:
        return f"{mark_label(self.mark)} at {offset(self.offset_s)}"


def mark_label(mark: Mark) -> str:
    """A mark as a reader would name it (device text made plain)."""
    if mark.kind == "phase":
        phase, _, variant = mark.label.partition(" ")
        name = {"measure": "measuring", "warmup": "warm-up", "done": "run done"}.get(phase, phase)
        return clean(f"{name} {variant}".strip())
    if mark.kind == "link":
        return clean(f"link {mark.label}")
    if mark.kind == "onset":
        return clean(mark.label)
    return clean(f"marker: {mark.label}") if mark.label else "marker"


def marker_mark(marker: Marker) -> Mark:
    """A marker event as a seekable mark, named by its note."""
    assert marker.t is not None
    return Mark(t=marker.t, kind="marker", label=marker.note or marker.label, offset=-1)


def speed_name(speed: float) -> str:
    return SPEED_NAMES.get(speed, f"{speed:g}x")


class Playback:
    """The source's abilities and the playback requests the key bindings make."""

    def __init__(self, session: Session, *, run_outlives_qtop: bool = True) -> None:
        self.session = session
        self.source = session.source
        self.replay = self.source if isinstance(self.source, ReplaySource) else None
        self.is_replay = self.replay is not None
        self.can_stop_run = hasattr(self.source, "stop_run") and self.replay is None
        self.can_leave_run = self.can_stop_run and run_outlives_qtop
        self.display_paused = False
        self.onsets: list[Mark] = []
        self.saved: list[Mark] = []
        self._landed: Mark | None = None

    @property
    def can_record(self) -> bool:
        recorder = self.session.recorder
        return recorder is not None and not recorder.closed

    @property
    def paused(self) -> bool:
        """The replay is paused, or a live display is frozen."""
        replay = self.replay
        return replay.paused if replay is not None else self.display_paused

    def toggle_pause(self) -> bool:
        replay = self.replay
        if replay is not None:
            replay.toggle_pause()
        else:
            self.display_paused = not self.display_paused
        return self.paused

    # --- replay requests (each returns what to tell the user, if anything) ----

    def step(self) -> str:
        replay = self.replay
        if replay is not None:
            replay.set_paused(True)
            replay.step()
        return ""

    def faster(self) -> str:
        replay = self.replay
        return f"speed {speed_name(replay.faster())}" if replay is not None else ""

    def slower(self) -> str:
        replay = self.replay
        return f"speed {speed_name(replay.slower())}" if replay is not None else ""

    def toggle_max_speed(self) -> str:
        """As fast as possible; from there, back to 1x."""
        replay = self.replay
        if replay is None:
            return ""
        replay.set_speed(1.0 if math.isinf(replay.speed) else math.inf)
        return f"speed {speed_name(replay.speed)}"

    def seek_by(self, delta_s: float) -> str:
        replay = self.replay
        if replay is not None:
            replay.seek_by(delta_s)
        return ""

    def seek_to_edge(self, end: bool) -> str:
        replay = self.replay
        target = None if replay is None else (replay.t_end if end else replay.t_start)
        if replay is not None and target is not None:
            replay.seek(target)
        return ""

    # --- marks -----------------------------------------------------------

    def marks(self) -> list[Mark]:
        """Every mark worth seeking to, in time order."""
        replay = self.replay
        found = list(replay.marks) if replay is not None else []
        found.extend(self.saved)
        found.extend(self.onsets)
        return sorted((m for m in found if m.kind in SEEKABLE_KINDS), key=lambda m: m.t)

    def _here(self, default: float) -> float:
        """The replay's position, or the mark it last jumped to when it landed just before it.

        A mark computed by the UI (an onset) falls between events, so a seek to it stops
        at the last event before it; without this, "next" would find the same mark again.
        """
        replay = self.replay
        assert replay is not None
        here = replay.position_t if replay.position_t is not None else default
        landed = self._landed
        if landed is not None and here <= landed.t < here + LANDING_SLACK_S:
            return landed.t
        return here

    def next_mark(self) -> Landing | None:
        if self.replay is None:
            return None
        here = self._here(-math.inf)
        mark = next((m for m in self.marks() if m.t > here + 1e-9), None)
        return self._land(mark)

    def previous_mark(self) -> Landing | None:
        if self.replay is None:
            return None
        here = self._here(math.inf)
        mark = next((m for m in reversed(self.marks()) if m.t < here - PREVIOUS_SLACK_S), None)
        return self._land(mark)

    def _land(self, mark: Mark | None) -> Landing | None:
        replay = self.replay
        if mark is None or replay is None:
            return None
        replay.seek(mark.t)
        self._landed = mark
        start = replay.t_start
        return Landing(mark, mark.t - start if start is not None else None)

    # --- the replay's position -------------------------------------------

    def elapsed_total(self) -> tuple[float | None, float | None]:
        replay = self.replay
        if replay is None:
            return None, None
        start, end = replay.t_start, replay.t_end
        if start is None or end is None:
            return None, None
        position = replay.position_t if replay.position_t is not None else start
        return position - start, end - start

    def status(self) -> str:
        replay = self.replay
        if replay is None:
            return "live"
        if replay.finished and not replay.follow:
            return "■ end"
        if replay.paused:
            return "‖ paused"
        following = " following" if replay.follow and replay.finished else ""
        return f"▶ {speed_name(replay.speed)}{following}"

    def upcoming(self) -> str:
        """The next mark ahead, for the progress line."""
        replay = self.replay
        if replay is None or replay.position_t is None or replay.t_start is None:
            return ""
        ahead = next((m for m in self.marks() if m.t > replay.position_t + 1e-9), None)
        if ahead is None:
            return ""
        return f"next: {mark_label(ahead)} in {clock(ahead.t - replay.position_t)}"

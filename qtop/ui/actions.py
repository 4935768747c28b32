"""Every app-wide action of the UI, once: its keys, its name, its help, and when it applies.

The app's key bindings, the ``?`` help screen and the command palette are all
built from this table, so none of them can forget an action the others have.
Actions of one pane (sorting the ops, following the log) are that pane's own
``BINDINGS``; the help screen and the palette list those too.
"""

from __future__ import annotations

from dataclasses import dataclass

# What an action needs from the session; the app answers these (see QtopApp.can).
ALWAYS = ""
REPLAY = "replay"
LIVE = "live"
RECORDER = "recorder"
STOPPABLE = "stoppable"


@dataclass(frozen=True, slots=True)
class ActionSpec:
    """One action: Textual action name, keys, footer label, one-line help, group, needs."""

    action: str
    keys: str
    label: str
    help: str
    group: str
    needs: str = ALWAYS
    footer: bool = False
    priority: bool = False
    key_display: str | None = None


ACTIONS: tuple[ActionSpec, ...] = (
    # session
    ActionSpec("help", "question_mark", "Help", "show every key and what it does", "session",
               footer=True, key_display="?"),
    ActionSpec("toggle_pause", "space", "Pause", "pause or resume: the replay, or (live) the "
               "display while recording goes on", "session", footer=True),
    ActionSpec("add_marker", "m", "Marker", "add a marker with a note at the current time",
               "session", footer=True),
    ActionSpec("toggle_recording", "r", "Recording", "pause or resume writing the recording",
               "session", needs=RECORDER),
    ActionSpec("stop_run", "s", "Stop run", "stop the run on the device (asks first)", "session",
               needs=STOPPABLE),
    ActionSpec("next_variant", "v", "Variant", "show the next variant (then back to following "
               "the current one)", "session"),
    ActionSpec("quit", "q", "Quit", "quit qtop", "session", footer=True),
    # replay
    ActionSpec("step", "full_stop", "Step", "pause, then let one more event through",
               "replay", needs=REPLAY, key_display="."),
    ActionSpec("faster", "plus,equals_sign", "Faster", "replay faster (0.5x ... 16x, then as "
               "fast as possible)", "replay", needs=REPLAY, footer=True, key_display="+"),
    ActionSpec("slower", "minus", "Slower", "replay slower", "replay", needs=REPLAY, footer=True,
               key_display="-"),
    ActionSpec("max_speed", "asterisk", "Max speed", "replay as fast as possible (again: back to "
               "1x)", "replay", needs=REPLAY, key_display="*"),
    ActionSpec("seek(-5)", "left", "Back 5 s", "seek back 5 seconds", "replay", needs=REPLAY,
               priority=True),
    ActionSpec("seek(5)", "right", "Ahead 5 s", "seek ahead 5 seconds", "replay", needs=REPLAY,
               priority=True),
    ActionSpec("seek(-60)", "shift+left", "Back 1 min", "seek back one minute", "replay",
               needs=REPLAY, priority=True),
    ActionSpec("seek(60)", "shift+right", "Ahead 1 min", "seek ahead one minute", "replay",
               needs=REPLAY, priority=True),
    ActionSpec("seek_start", "home", "Start", "seek to the start", "replay", needs=REPLAY),
    ActionSpec("seek_end", "end", "End", "seek to the end", "replay", needs=REPLAY),
    ActionSpec("previous_mark", "left_square_bracket", "Prev mark", "seek to the previous mark "
               "(phase, marker, reconnect, throttling onset)", "replay", needs=REPLAY,
               footer=True, key_display="["),
    ActionSpec("next_mark", "right_square_bracket", "Next mark", "seek to the next mark",
               "replay", needs=REPLAY, footer=True, key_display="]"),
    # view
    ActionSpec("focus_pane('latency')", "1", "Latency", "focus the latency pane", "view"),
    ActionSpec("focus_pane('thermal')", "2", "Thermal", "show and focus the thermal pane", "view"),
    ActionSpec("focus_pane('decay')", "3", "Decay", "show and focus the thermal decay pane",
               "view"),
    ActionSpec("focus_pane('power')", "4", "Power", "show and focus the power pane", "view"),
    ActionSpec("focus_pane('ops')", "5", "Ops", "show and focus the ops pane", "view"),
    ActionSpec("focus_pane('log')", "6", "Log", "show and focus the device log", "view"),
    ActionSpec("zoom", "z", "Zoom", "fill the screen with the focused pane (again: back)",
               "view", footer=True),
)  # fmt: skip

GROUP_TITLES = {
    "session": "Session",
    "replay": "Replay",
    "view": "View",
}


KEY_NAMES = {"space": "space", "left": "←", "right": "→", "shift+left": "shift+←",
             "shift+right": "shift+→"}  # fmt: skip


def keys_text(keys: str, key_display: str | None = None) -> str:
    """Keys as the help screen prints them."""
    if key_display:
        return key_display
    return " ".join(KEY_NAMES.get(key, key) for key in keys.split(","))


def key_text(spec: ActionSpec) -> str:
    """The keys of an action as the help screen prints them."""
    return keys_text(spec.keys, spec.key_display)

"""`qtop replay` in a real terminal (tmux): what it drew, and what it did to the terminal."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from qtop.events import End, Log
from qtop.record.writer import RecordingWriter
from tests.ui.hostile import hostile_events

TMUX = shutil.which("tmux")
PANE_TITLES = ("latency", "thermal", "thermal decay", "power", "ops", "device log")
# Only a guard against a hang: each wait ends as soon as the screen shows what it waits for.
HANG_GUARD_S = 60.0
pytestmark = pytest.mark.skipif(TMUX is None, reason="needs tmux (apt-get install tmux)")


class Terminal:
    """A tmux pane of a given size running one command, with OSC 52 and titles honoured."""

    def __init__(self, socket: str) -> None:
        self.socket = socket

    def tmux(self, *args: str) -> str:
        result = subprocess.run(
            [TMUX, "-S", self.socket, *args], capture_output=True, text=True, check=False
        )
        return result.stdout

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "qtop")

    def wait_for(self, *texts: str) -> str:
        deadline = time.monotonic() + HANG_GUARD_S
        screen = self.screen()
        while not all(text in screen for text in texts) and time.monotonic() < deadline:
            time.sleep(0.1)
            screen = self.screen()
        return screen


@contextmanager
def terminal(tmp_path: Path, command: str, size: tuple[int, int] = (160, 48)) -> Iterator[Terminal]:
    term = Terminal(str(tmp_path / "tmux.sock"))
    width, height = size
    term.tmux("-f", "/dev/null", "new-session", "-d", "-s", "qtop", "-x", str(width), "-y",
              str(height), "cat")  # fmt: skip
    try:
        # A terminal that acts on OSC 52 (clipboard) and OSC 0/2 (title), set before qtop runs.
        term.tmux("resize-window", "-t", "qtop", "-x", str(width), "-y", str(height))
        term.tmux("set-option", "-g", "set-clipboard", "on")
        term.tmux("select-pane", "-t", "qtop", "-T", "before")
        # COLUMNS and LINES, if the test run has them, would override the pane's real size.
        term.tmux("respawn-pane", "-k", "-t", "qtop", f"env -u COLUMNS -u LINES {command}")
        yield term
    finally:
        term.tmux("kill-server")


def test_a_replay_with_hostile_text_and_a_flood_of_lines_in_a_real_terminal(tmp_path):
    events = hostile_events()
    writer = RecordingWriter(tmp_path / "hostile.jsonl", events[0])
    for event in events[1:-1]:
        writer.write(event)
    # Then more lines than the log keeps, as fast as the replay goes: it follows to the last.
    t0 = events[-1].t or 0.0
    for n in range(5000):
        writer.write(Log(t=t0 + n / 300, seq=1000 + n, stream="agent", text=f"flood line {n}"))
    writer.close(End(t=t0 + 5000 / 300, reason="completed"))
    command = f"{sys.executable} -m qtop replay {writer.path} --speed max"
    with terminal(tmp_path, command) as term:
        # Until the whole layout is there: the first frame may come before the terminal's size.
        screen = term.wait_for("■ end", "flood line 4999", *(f"─ {t} ─" for t in PANE_TITLES))
        lines = screen.splitlines()
        assert len(lines) == 48 and all(len(line) <= 160 for line in lines)
        for title in PANE_TITLES:
            assert f"─ {title} ─" in screen, title
        assert "cpu[/]" in screen and "[red]cdsp[/red]" in screen, screen
        assert "flood line 4999" in screen and "following" in screen
        # Nothing set the clipboard or the title, though the device's text asked for both.
        assert term.tmux("list-buffers") == ""
        assert term.tmux("display", "-p", "-t", "qtop", "#{pane_title}").strip() == "before"
        term.tmux("send-keys", "-t", "qtop", "q")
        deadline = time.monotonic() + HANG_GUARD_S
        while "─ latency ─" in term.screen() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert "─ latency ─" not in term.screen()

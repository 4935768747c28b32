"""`qtop replay` in a real terminal: tmux at 160x48, read back what it drew."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time

import pytest

from qtop.report.summary import summarize_recording
from qtop.report.table import fmt
from tests.ui.helpers import SIMPLE

TMUX = shutil.which("tmux")
PANE_TITLES = ("latency", "thermal", "thermal decay", "power", "ops", "device log")


def capture(socket: str) -> str:
    result = subprocess.run(
        [TMUX, "-S", socket, "capture-pane", "-p", "-t", "qtop"],
        capture_output=True,
        text=True,
        check=False,
    )
    return result.stdout


@pytest.mark.skipif(TMUX is None, reason="needs tmux (apt-get install tmux)")
def test_replay_draws_its_panes_and_the_p95_in_tmux(tmp_path):
    p95 = fmt(summarize_recording(SIMPLE)[0].variants[0].measured.p95_ms, 3)
    socket = str(tmp_path / "tmux.sock")
    command = f"{sys.executable} -m qtop replay {SIMPLE} --speed max"
    subprocess.run(
        [TMUX, "-S", socket, "new-session", "-d", "-s", "qtop", "-x", "160", "-y", "48", command],
        check=True,
    )
    try:
        deadline = time.monotonic() + 20
        screen = ""
        while time.monotonic() < deadline:
            screen = capture(socket)
            if f"P95 {p95}" in screen and "■ end" in screen:
                break
            time.sleep(0.2)
        lines = screen.splitlines()
        assert f"P95 {p95}" in screen, screen
        for title in PANE_TITLES:
            assert f"─ {title} ─" in screen, title
        assert len(lines) == 48 and all(len(line) <= 160 for line in lines)
        subprocess.run([TMUX, "-S", socket, "send-keys", "-t", "qtop", "q"], check=True)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and "qtop" in capture(socket):
            time.sleep(0.2)
        assert "─ latency ─" not in capture(socket)
    finally:
        subprocess.run([TMUX, "-S", socket, "kill-server"], check=False, capture_output=True)

"""Helpers for the simulated-board tests."""

from __future__ import annotations

import subprocess
from dataclasses import replace

from qtop.sim import SimBoard, default_config
from qtop.sim.config import LatencyConfig, SimConfig


def fixed_config(variant: str = "evk", **latency: object) -> SimConfig:
    """A variant whose latencies are exactly each model's median (no jitter, no warm-up)."""
    base = default_config(variant)
    settings = {"distribution": "fixed", "warmup_extra_us": (), "init_ms": 5.0, "deinit_ms": 1.0}
    settings.update(latency)
    return replace(base, latency=replace(LatencyConfig(), **settings))


class BoardShell:
    """Runs shell commands the way a session on the board would (its env, its home)."""

    def __init__(self, board: SimBoard) -> None:
        self.board = board

    def env(self) -> dict[str, str]:
        return {**self.board.session_env(), "HOME": str(self.board.home)}

    def run(self, command: str, timeout: float = 20.0) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["/bin/sh", "-c", command],
            env=self.env(),
            cwd=self.board.home,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )

    def popen(self, command: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            ["/bin/sh", "-c", command],
            env=self.env(),
            cwd=self.board.home,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )

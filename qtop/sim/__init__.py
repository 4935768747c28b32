"""The simulated board: physics, sysfs, simulated QNN/Genie tools, and an SSH front.

``start_sim`` runs a board behind its asyncssh server (tests, ``qtop demo``);
``SimBoard`` is the board alone, for running behind OpenSSH's sshd. See
docs/simulator.md.
"""

from __future__ import annotations

from qtop.sim.board import SimBoard
from qtop.sim.config import SimConfig, default_config
from qtop.sim.ground_truth import read_ground_truth
from qtop.sim.launcher import RunningSim, default_state_dir, start_sim
from qtop.sim.ssh_server import check_bind_host

__all__ = [
    "RunningSim",
    "SimBoard",
    "SimConfig",
    "check_bind_host",
    "default_config",
    "default_state_dir",
    "read_ground_truth",
    "start_sim",
]

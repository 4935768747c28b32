"""The simulated QNN and Genie tools: bash front ends plus their work in the tool service."""

from __future__ import annotations

from qtop.sim.tools.genie import run_genie
from qtop.sim.tools.netrun import run_netrun
from qtop.sim.tools.service import Handler
from qtop.sim.tools.viewer import run_viewer

HANDLERS: dict[str, Handler] = {
    "qnn-net-run": run_netrun,
    "qnn-profile-viewer": run_viewer,
    "genie-t2t-run": run_genie,
}

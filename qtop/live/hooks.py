"""The hook for profiler-driven latency sources (``execute_stats``, ``genie``).

With ``latency_source: wall`` every run of the command is one iteration (a
hook, when a ``profiler`` is set, only adds its reports). With a profiler
source the device runner keeps starting the command (run mode ``open``) and
writes an I line each time a process exits; ``LiveSource`` then awaits the
hook with a ``ProcessExit`` and a ``DeviceAccess``. The hook fetches the
profiler output (running ``qnn-profile-viewer`` on the device if needed),
parses it, and returns the events to insert into the stream: one
``Iteration`` per inference (warm-up for the leading ones of each process)
or per Genie query, and ``ProfileReport`` events. Returning
``advance=True`` tells the runner to move on to the next variant (or to
finish) once enough measured iterations have been seen; the runner checks
between processes, so one more process may already have started. The hooks
themselves, and which latency source gets which, are in
``qtop/live/profiler_hooks.py`` (``profiler_hook_for``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from qtop.device import control
from qtop.events import Event
from qtop.live.translate import ProcessExit
from qtop.transport.base import CommandResult, Transport
from qtop.transport.command import join

__all__ = [
    "DeviceAccess",
    "HookResult",
    "ProcessExit",
    "ProcessHook",
]


@dataclass(frozen=True, slots=True)
class HookResult:
    events: Sequence[Event] = ()
    advance: bool = False


class DeviceAccess:
    """What a hook may do on the device: run a command (argv, quoted for it), read a file."""

    def __init__(self, transport: Transport, run_dir: str) -> None:
        self._transport = transport
        self.run_dir = run_dir

    async def run(
        self, argv: Sequence[str], timeout: float = control.CONTROL_TIMEOUT_S
    ) -> CommandResult:
        return await self._transport.run(join(argv), timeout=timeout)


class ProcessHook(Protocol):
    async def __call__(self, exit: ProcessExit, device: DeviceAccess) -> HookResult: ...

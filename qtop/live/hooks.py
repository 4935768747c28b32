"""The hook for profiler-driven latency sources (``execute_stats``, ``genie``).

With ``latency_source: wall`` every run of the command is one iteration and
no hook is involved. With a profiler source the device runner keeps starting
the command (run mode ``open``) and writes an I line each time a process
exits; ``LiveSource`` then awaits the hook with a ``ProcessExit`` and a
``DeviceAccess``. The hook fetches the profiler output (running
``qnn-profile-viewer`` on the device if needed), parses it, and returns the
events to insert into the stream: typically one ``Iteration`` per execute
(warm-up for the leading executes of each process) and a ``ProfileReport``.
Returning ``advance=True`` tells the runner to move on to the next variant
(or to finish) once enough measured iterations have been seen; the runner
checks between processes, so one more process may already have started.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from qtop.device import control
from qtop.events import Event
from qtop.live.translate import ProcessExit
from qtop.profiles import Profile
from qtop.transport.base import CommandResult, Transport
from qtop.transport.command import join

__all__ = [
    "DeviceAccess",
    "HookResult",
    "ProcessExit",
    "ProcessHook",
    "profiler_hook_for",
    "register_hook_factory",
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

    async def read_file(self, path: str, timeout: float = control.CONTROL_TIMEOUT_S) -> bytes:
        result = await self._transport.run(join(["cat", "--", path]), timeout=timeout)
        return result.stdout if result.exit_status == 0 else b""


class ProcessHook(Protocol):
    async def __call__(self, exit: ProcessExit, device: DeviceAccess) -> HookResult: ...


HookFactory = Callable[[Profile], ProcessHook]
_FACTORIES: dict[str, HookFactory] = {}


def register_hook_factory(latency_source: str, factory: HookFactory) -> None:
    """Use ``factory(profile)`` as the hook for ``latency_source`` (the profiler side's call)."""
    _FACTORIES[latency_source] = factory


def profiler_hook_for(profile: Profile) -> ProcessHook | None:
    """The hook for the latency source: ``None`` for ``wall``, or while none is registered."""
    factory = _FACTORIES.get(profile.run.latency_source)
    return factory(profile) if factory else None

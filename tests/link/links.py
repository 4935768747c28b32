"""The simulated board over either transport, with the same faults: for the live tests.

``sim_link(state_dir, "ssh" | "adb")`` starts the board (for adb: behind the
simulated adb server, reached by the real adb client). ``drop`` is the link
going away and coming back: every SSH connection aborted, or the device
unplugged and plugged in again. ``restart_server`` is sshd, or the adb
server, dying and starting again; ``go_silent`` stops every byte without
closing anything (a proxy that stops forwarding, a frozen adb link).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from adb_support import no_adb_server_started

from qtop.profiles import Profile
from qtop.sim import RunningSim, start_sim

from .proxy import SilentDropProxy

# How long an unplugged device stays away: qtop meets a device that is not there.
AWAY_S = 0.3


class SimLink:
    def __init__(self, kind: str, sim: RunningSim) -> None:
        self.kind = kind
        self.sim = sim
        self._tasks: set[asyncio.Task[None]] = set()
        self._proxy: SilentDropProxy | None = None

    def __getattr__(self, name: str) -> Any:
        # Everything else is the running simulator's (sim_root, ground_truth_path, ...).
        return getattr(self.sim, name)

    def device_overrides(self) -> dict[str, Any]:
        if self.kind == "adb":
            assert self.sim.adb is not None
            return self.sim.adb.device_overrides()
        return self.sim.device_overrides()

    def device_yaml(self) -> str:
        """How to reach the board, as YAML lines under ``device:`` (sysfs_root left out)."""
        lines = []
        for key, value in self.device_overrides().items():
            if value is not None and key != "sysfs_root":
                lines.append(f"  {key}: {value if isinstance(value, int) else repr(str(value))}")
        return "\n".join(lines) + "\n"

    async def drop(self) -> None:
        """The link goes and comes back (the device returns after AWAY_S, in the background)."""
        if self.kind == "ssh":
            await self.sim.drop_connections()
            return
        front = self.sim.adb
        assert front is not None
        front.server.unplug(front.serial)

        async def replug() -> None:
            await asyncio.sleep(AWAY_S)
            front.server.replug(front.serial)

        self._spawn(replug())

    async def restart_server(self) -> None:
        if self.kind == "ssh":
            await self.sim.restart_ssh()
            return
        front = self.sim.adb
        assert front is not None
        await front.server.kill()

        async def start() -> None:
            await asyncio.sleep(AWAY_S)
            await front.server.start()

        self._spawn(start())

    async def silent_profile(self, profile: Profile, state_dir: Path) -> Profile:
        """``profile`` reaching the board through something that can go silent."""
        if self.kind == "adb":
            return profile
        self._proxy = SilentDropProxy(self.sim.host, self.sim.port)
        port = await self._proxy.start()
        # The proxy's port is not the sim's: trust the sim's key there too.
        known = self.sim.known_hosts_path.read_text().replace(f"]:{self.sim.port}", f"]:{port}")
        (state_dir / "known_hosts").write_text(known)
        return profile.replace_device(port=port, known_hosts=str(state_dir / "known_hosts"))

    def go_silent(self) -> None:
        if self.kind == "adb":
            assert self.sim.adb is not None
            self.sim.adb.server.freeze(self.sim.adb.serial)
        else:
            assert self._proxy is not None
            self._proxy.go_silent()

    def noticed(self) -> None:
        """qtop saw the link die: the network comes back (over SSH new connections work already)."""
        if self.kind == "adb":
            assert self.sim.adb is not None
            self.sim.adb.server.thaw(self.sim.adb.serial)

    def _spawn(self, work: Any) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._proxy is not None:
            await self._proxy.close()


@contextlib.asynccontextmanager
async def sim_link(state_dir: Path, kind: str, **options: Any) -> AsyncIterator[SimLink]:
    guard = no_adb_server_started() if kind == "adb" else contextlib.nullcontext()
    with guard:
        async with start_sim(state_dir, adb=kind == "adb", **options) as sim:
            link = SimLink(kind, sim)
            try:
                yield link
            finally:
                await link.close()

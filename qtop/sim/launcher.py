"""``start_sim``: a SimBoard behind its SSH server, for tests, ``qtop demo`` and ``qtop sim``."""

from __future__ import annotations

import asyncio
import os
import shlex
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from qtop.sim.adb_front import AdbFront
from qtop.sim.board import SimBoard
from qtop.sim.config import SimConfig
from qtop.sim.keys import KNOWN_HOSTS_FILE, ensure_keys, write_known_hosts
from qtop.sim.ssh_server import SimSSHServer, check_bind_host

# What the simulated INA2xx's hwmon files hold (hwmon units).
METER_FILES = (
    ("power1_input", "power", "uW"),
    ("curr1_input", "current", "mA"),
    ("in1_input", "voltage", "mV"),
)


class RunningSim:
    """A started simulator: where it listens, how to reach it, and fault-injection hooks."""

    def __init__(self, board: SimBoard, server: SimSSHServer, adb: AdbFront | None = None) -> None:
        self.board = board
        self.server = server
        # The board behind a simulated adb server too (start_sim(adb=True)); else None.
        self.adb = adb
        self.state_dir = board.state_dir
        self.client_key_path = server.keys.client_key_path
        self.host_key_path = server.keys.host_key_path
        self.known_hosts_path = board.state_dir / KNOWN_HOSTS_FILE
        self.sysfs_root = board.sysfs_root
        self.sim_root = board.sim_root
        self.spool_dir = board.spool_dir
        self.ground_truth_path = board.ground_truth_path

    @property
    def host(self) -> str:
        return self.server.host

    @property
    def port(self) -> int:
        return self.server.port

    @property
    def username(self) -> str:
        return self.server.username

    def session_env(self) -> dict[str, str]:
        return self.board.session_env()

    def ssh_command(self, command: str | None = None) -> str:
        """A command line for the plain OpenSSH client (optionally running ``command``)."""
        parts = [
            "ssh",
            "-i",
            str(self.client_key_path),
            "-o",
            "IdentitiesOnly=yes",
            "-o",
            f"UserKnownHostsFile={self.known_hosts_path}",
            "-o",
            "StrictHostKeyChecking=yes",
            "-p",
            str(self.port),
            f"{self.username}@{self.host}",
        ]
        if command is not None:
            parts.append(command)
        return shlex.join(parts)

    def device_overrides(self) -> dict[str, Any]:
        """Device-profile keys that point a profile at this simulator."""
        return {
            "host": self.host,
            "port": self.port,
            "user": self.username,
            "identity_file": str(self.client_key_path),
            "known_hosts": str(self.known_hosts_path),
            "sysfs_root": str(self.sysfs_root),
            "spool_dir": str(self.spool_dir),
        }

    def profile_snippet(self) -> str:
        """The ``device:`` block of a profile for this simulator, as YAML."""
        overrides = self.device_overrides()
        lines = ["device:"]
        for key in ("host", "port", "user", "identity_file", "known_hosts"):
            lines.append(f"  {key}: {overrides[key]}")
        lines.append("  sysfs_root: $QTOP_SIM_SYSFS")
        meter = self.board.config.meter
        if meter is not None:
            # The EVK has no battery: its power comes from the meter, a path under /sys.
            lines.append("  power_supply: none")
            lines.append("  power_meter:")
            hwmon = f"/sys/class/hwmon/{meter.hwmon}"
            for file, quantity, unit in METER_FILES:
                lines.append(
                    f"    - {{path: {hwmon}/{file}, quantity: {quantity}, unit: {unit}, "
                    f"label: {meter.name}}}"
                )
        return "\n".join(lines) + "\n"

    async def drop_connections(self) -> None:
        await self.server.drop_connections()

    async def stop_ssh(self, drop_connections: bool = True) -> None:
        """Stop the SSH server; the board and its processes keep running."""
        await self.server.stop(drop_connections=drop_connections)

    async def start_ssh(self) -> None:
        """Start the SSH server again on the same port."""
        await self.server.start()

    async def restart_ssh(self) -> None:
        await self.stop_ssh()
        await self.start_ssh()

    def stats(self) -> dict[str, Any]:
        return self.board.stats()


@asynccontextmanager
async def start_sim(
    state_dir: str | os.PathLike[str],
    variant: str | None = None,
    port: int = 0,
    time_scale: float = 1.0,
    seed: int = 0,
    config: SimConfig | None = None,
    host: str = "127.0.0.1",
    adb: bool = False,
    adb_port: int = 0,
) -> AsyncIterator[RunningSim]:
    """Run a simulated board and its SSH server until the block exits.

    With ``adb`` the board is also a device behind a simulated adb server
    (``sim.adb``) on ``adb_port``, for the real ``adb`` client.

    On exit the server stops, every process started on the board is killed
    and the session tasks finish, so a test leaves nothing behind.
    """
    bind_host = check_bind_host(host)
    board = SimBoard(state_dir, variant=variant, time_scale=time_scale, seed=seed, config=config)
    await asyncio.to_thread(board.start)
    server: SimSSHServer | None = None
    front: AdbFront | None = None
    try:
        keys = await asyncio.to_thread(ensure_keys, board.state_dir)
        server = SimSSHServer(board, keys, bind_host, port)
        await server.start()
        write_known_hosts(board.state_dir / KNOWN_HOSTS_FILE, keys.host_key, bind_host, server.port)
        if adb:
            front = await AdbFront.start(board, bind_host, adb_port)
        yield RunningSim(board, server, front)
    finally:
        if front is not None:
            await front.server.kill()
        if server is not None:
            await server.stop()
        await asyncio.to_thread(board.close)
        if front is not None:
            await front.close()
        if server is not None:
            await server.close()


def default_state_dir() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or os.path.expanduser("~/.local/state")
    return Path(base) / "qtop" / "sim"

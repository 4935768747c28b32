"""The simulated board as an adb device: what its sessions see, and how a profile reaches it.

A session gets what adbd gives its shells: the board's environment (PATH
and the ``QTOP_SIM_*`` variables, as over SSH) plus adbd's own ``HOME``,
``HOSTNAME``, ``LOGNAME``, ``USER``, ``SHELL=/system/bin/sh`` and
``TMPDIR``, and runs under mksh, Android's ``/system/bin/sh``. What ``sh``
and the other tools on its PATH are is the board's choice (the glasses
offer no bash).
"""

from __future__ import annotations

import getpass
import shutil
from typing import Any

from qtop.sim.adb_server import SimAdbDevice, SimAdbServer
from qtop.sim.board import SimBoard

DEFAULT_SERIAL = "QTOPSIM0001"
# Android's /system/bin/sh; this machine's /bin/sh stands in where mksh is missing.
DEVICE_SHELL = shutil.which("mksh") or "/bin/sh"


def device_settings(board: SimBoard) -> dict[str, Any]:
    """The ``SimAdbServer.add_device`` settings that put ``board`` behind the server."""
    user = getpass.getuser()
    env = {
        **board.session_env(),
        "HOME": str(board.home),
        "HOSTNAME": "qtopsim",
        "LOGNAME": user,
        "USER": user,
        "SHELL": "/system/bin/sh",
        # adbd points TMPDIR at /data/local/tmp; the board's copy of it.
        "TMPDIR": str(board.sim_root / "data" / "local" / "tmp"),
    }
    return {
        "env": env,
        "cwd": str(board.home),
        "shell": DEVICE_SHELL,
        "model": f"qtop_sim_{board.variant}",
    }


class AdbFront:
    """A SimAdbServer serving one board as ``serial`` (and more names for it, e.g. over TCP)."""

    def __init__(self, board: SimBoard, server: SimAdbServer, serial: str) -> None:
        self.board = board
        self.server = server
        self.serial = serial

    @classmethod
    async def start(
        cls,
        board: SimBoard,
        host: str = "127.0.0.1",
        port: int = 0,
        serial: str = DEFAULT_SERIAL,
    ) -> AdbFront:
        server = SimAdbServer(host, port)
        server.add_device(serial, **device_settings(board))
        await server.start()
        return cls(board, server, serial)

    @property
    def host(self) -> str:
        return self.server.host

    @property
    def port(self) -> int:
        return self.server.port

    @property
    def address(self) -> str:
        return f"{self.server.host}:{self.server.port}"

    def add_tcp_device(self, serial: str = "127.0.0.1:5555") -> SimAdbDevice:
        """The same board reachable as a device over TCP (``adb connect HOST:PORT``)."""
        device = self.server.add_device(serial, over_tcp=True, **device_settings(self.board))
        return device

    def device_overrides(self, serial: str | None = None) -> dict[str, Any]:
        """Device-profile keys that point a profile at this board over adb (SSH keys cleared)."""
        return {
            **dict.fromkeys(("host", "port", "user", "identity_file", "known_hosts", "jump_host")),
            "transport": "adb",
            "serial": serial or self.serial,
            "adb_server": self.address,
            "sysfs_root": str(self.board.sysfs_root),
            "spool_dir": str(self.board.spool_dir),
        }

    def profile_snippet(self) -> str:
        return (
            "device:\n"
            "  transport: adb\n"
            f"  serial: {self.serial}\n"
            f"  adb_server: {self.address}\n"
            "  sysfs_root: $QTOP_SIM_SYSFS\n"
        )

    def adb_command(self, *args: str) -> list[str]:
        """An argv for the real adb client against this server (never one that starts a server)."""
        return ["adb", "-H", self.server.host, "-P", str(self.server.port), *args]

    async def close(self) -> None:
        await self.server.close()

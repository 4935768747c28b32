"""For the tests that drive the real adb client against the simulated adb server.

Every command names the server with ``-H 127.0.0.1 -P PORT``, under which
the client never starts a server of its own; ``no_adb_server_started``
checks that after each test anyway, and kills any it finds, so a test
cannot leave one behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import subprocess
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import psutil
import pytest

from qtop.sim import RunningSim, start_sim

ADB = shutil.which("adb")
needs_adb = pytest.mark.skipif(ADB is None, reason="needs the adb client (apt-get install adb)")


def adb_servers() -> set[int]:
    """Pids of adb server processes of this user (``adb ... fork-server server``)."""
    found = set()
    me = os.getuid()
    for process in psutil.process_iter(["name", "cmdline", "uids"]):
        info = process.info
        cmdline = info.get("cmdline") or []
        uids = info.get("uids")
        if uids is None or uids.real != me or not cmdline:
            continue
        if os.path.basename(cmdline[0]) == "adb" and "server" in cmdline:
            found.add(process.pid)
    return found


@contextlib.contextmanager
def no_adb_server_started() -> Iterator[None]:
    before = adb_servers()
    yield
    leaked = adb_servers() - before
    for pid in leaked:
        with contextlib.suppress(psutil.Error):
            psutil.Process(pid).kill()
    assert not leaked, f"an adb server was started (pids {sorted(leaked)}) and has been killed"


@contextlib.asynccontextmanager
async def adb_sim(state_dir: Path, **options: object) -> AsyncIterator[RunningSim]:
    """``start_sim`` with its board behind the simulated adb server."""
    with no_adb_server_started():
        async with start_sim(state_dir, adb=True, **options) as sim:  # type: ignore[arg-type]
            yield sim


async def adb(sim: RunningSim, *args: str, stdin: bytes | None = None, timeout: float = 30.0):
    """Run the real adb client against ``sim``'s server: CompletedProcess with bytes."""
    assert sim.adb is not None
    argv = sim.adb.adb_command(*args)
    return await asyncio.to_thread(
        subprocess.run,
        argv,
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True,
        timeout=timeout,
    )

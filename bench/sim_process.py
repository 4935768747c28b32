"""The simulated board in a process of its own (``qtop sim --adb``), for the benches that
compare transports: whatever this process spends is qtop's host side, whatever the
board's processes spend is the device side, and the simulator's own servers are apart.
"""

from __future__ import annotations

import contextlib
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

# Every session on a board carries its state directory (SimBoard.session_env); other
# simulators may be running on this machine.
STATE_ENV = "QTOP_SIM_STATE"


@dataclass
class SimProcess:
    process: subprocess.Popen[str]
    state_dir: Path
    ssh_port: int
    adb_port: int
    serial: str

    def device(self, transport: str) -> dict[str, Any]:
        """Device-profile keys that reach the board over ``transport``."""
        common = {
            "sysfs_root": "$QTOP_SIM_SYSFS",
            "spool_dir": str(self.state_dir / "spool"),
        }
        if transport == "adb":
            return {
                "transport": "adb",
                "serial": self.serial,
                "adb_server": f"127.0.0.1:{self.adb_port}",
                **common,
            }
        return {
            "host": "127.0.0.1",
            "port": self.ssh_port,
            "identity_file": str(self.state_dir / "client_ed25519"),
            "known_hosts": str(self.state_dir / "known_hosts"),
            **common,
        }

    def board_processes(self) -> list[psutil.Process]:
        """Every process a session started on this board."""
        found = []
        state = str(self.state_dir.resolve())
        for process in psutil.process_iter():
            with contextlib.suppress(psutil.Error):
                if process.environ().get(STATE_ENV) == state and process.pid != self.process.pid:
                    found.append(process)
        return found


@contextlib.contextmanager
def sim_process(
    state_dir: Path, variant: str = "glasses", time_scale: float = 1.0
) -> Iterator[SimProcess]:
    command = [
        sys.executable, "-m", "qtop", "sim", "--adb", "--adb-port", "0", "--port", "0",
        "--variant", variant, "--time-scale", str(time_scale), "--state-dir", str(state_dir),
    ]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        text = ""
        for line in process.stdout:
            text += line
            if line.startswith("Ctrl-C stops"):
                break
        ssh = re.search(r"listening on 127\.0\.0\.1:(\d+)", text)
        adb = re.search(r"simulated adb server on 127\.0\.0\.1:(\d+), device (\S+)", text)
        if ssh is None or adb is None:
            raise RuntimeError(f"qtop sim did not start:\n{text}")
        yield SimProcess(process, state_dir, int(ssh.group(1)), int(adb.group(1)), adb.group(2))
    finally:
        process.send_signal(signal.SIGINT)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.communicate(timeout=30)
        if process.poll() is None:
            process.kill()
            process.wait()

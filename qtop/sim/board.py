"""SimBoard: the simulated device without its SSH front.

It owns the physics loop and sysfs tree, the model tree, the simulated
tools and their service, and the ground-truth log. Any SSH server can put
it on the network: the asyncssh one in ``ssh_server.py``, or OpenSSH sshd
with ``SetEnv`` set from :meth:`SimBoard.session_env`. Every process a
session starts carries ``QTOP_SIM_BOARD`` in its environment, which is how
:meth:`SimBoard.close` finds and kills them all, detached ones included.
"""

from __future__ import annotations

import contextlib
import os
import random
import secrets
import shutil
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import Any

import psutil

from qtop.errors import UsageError
from qtop.sim.config import SimConfig, resolve_config
from qtop.sim.ground_truth import GroundTruthLog
from qtop.sim.model_tree import build_model_tree
from qtop.sim.npu import NpuArbiter
from qtop.sim.sensors import SensorLoop, SensorThread, Snapshot
from qtop.sim.stale import claim, remove_stale
from qtop.sim.tools import HANDLERS
from qtop.sim.tools.client import install_tools
from qtop.sim.tools.service import ToolService

BASE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
BOARD_ENV = "QTOP_SIM_BOARD"
_TMPFS = "/dev/shm"
# What an Android device's /system/bin (toybox) offers a session: the usual
# tools, and neither bash nor python3.
ANDROID_TOOLS = (
    "awk", "basename", "cat", "chmod", "cmp", "cp", "cut", "date", "dd", "df", "diff",
    "dirname", "du", "echo", "env", "expr", "false", "find", "free", "getconf", "grep",
    "head", "hostname", "id", "kill", "ln", "ls", "md5sum", "mkdir", "mkfifo", "mktemp",
    "mv", "nice", "nohup", "nproc", "od", "pgrep", "pidof", "printf", "ps", "readlink",
    "realpath", "renice", "rm", "rmdir", "sed", "seq", "setsid", "sha1sum", "sha256sum",
    "sleep", "sort", "stat", "sync", "tail", "tee", "test", "timeout", "top", "touch", "tr",
    "true", "uname", "uniq", "uptime", "wc", "which", "xargs",
)  # fmt: skip


class SimBoard:
    """One simulated board rooted in ``state_dir``; ``start()`` then ``close()`` (or ``with``)."""

    def __init__(
        self,
        state_dir: str | os.PathLike[str],
        variant: str | None = None,
        time_scale: float = 1.0,
        seed: int = 0,
        config: SimConfig | None = None,
    ) -> None:
        if not time_scale > 0:
            raise UsageError(f"time_scale must be > 0, got {time_scale}", "use e.g. 1.0 or 60")
        self.config = resolve_config(variant, config)
        self.variant = self.config.variant
        self.time_scale = float(time_scale)
        self.seed = seed
        self.state_dir = Path(state_dir).expanduser().resolve()
        # Replaced in start() by a tmpfs directory when there is one (see _live_sysfs_root).
        self.sysfs_root = self.state_dir / "sysfs"
        self._tmpfs_dir: Path | None = None
        self.sim_root = self.state_dir / "root"
        self.bin_dir = self.state_dir / "bin"
        self.system_bin_dir = self.state_dir / "system-bin"
        self.home = self.state_dir / "home"
        self.spool_dir = self.state_dir / "spool"
        self.ground_truth_path = self.state_dir / "ground_truth.jsonl"
        self.token_path = self.state_dir / "tool-token"
        self.board_id = secrets.token_hex(8)
        self.npu = NpuArbiter(time.monotonic)
        self._sensors: SensorLoop | None = None
        self._thread: SensorThread | None = None
        self._service: ToolService | None = None
        self._ground_truth: GroundTruthLog | None = None
        self.started = False

    # --- lifecycle ----------------------------------------------------------

    def start(self) -> SimBoard:
        if self.started:
            return self
        try:
            self.state_dir.mkdir(parents=True, exist_ok=True)
            self.state_dir.chmod(0o700)
        except OSError as exc:
            raise UsageError(
                f"cannot use {self.state_dir} as the simulator's state directory: {exc.strerror}",
                "pass --state-dir with a directory you can write",
            ) from None
        for directory in (self.home, self.spool_dir):
            directory.mkdir(exist_ok=True)
        if not self.config.bash_on_path:
            install_android_tools(self.system_bin_dir)
        build_model_tree(self.sim_root)
        (self.sim_root / "tmp").mkdir(parents=True, exist_ok=True)
        self.sysfs_root = self._live_sysfs_root()
        token = secrets.token_hex(16)
        fd = os.open(self.token_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(token + "\n")
        self.ground_truth_path.unlink(missing_ok=True)
        self._ground_truth = GroundTruthLog(self.ground_truth_path)
        self._sensors = SensorLoop(
            self.config, self.sysfs_root, self.npu, self.seed, self.time_scale, time.monotonic()
        )
        self._thread = SensorThread(self._sensors)
        self._thread.start()
        self._service = ToolService(self, token, HANDLERS)
        port = self._service.start()
        install_tools(self.bin_dir, port, self.token_path)
        # A state directory may have served another variant: no systemd, no timedatectl.
        (self.bin_dir / "timedatectl").unlink(missing_ok=True)
        if self.config.ntp_synchronized is not None:
            install_timedatectl(self.bin_dir, self.config.ntp_synchronized)
        self._service.calibrate(self.bin_dir / "qnn-net-run")
        self.started = True
        return self

    def close(self) -> None:
        """Stop the tools and physics, then kill every process started on this board."""
        if self._service is not None:
            self._service.stop()
        if self._thread is not None:
            self._thread.stop()
        self.kill_processes()
        if self._ground_truth is not None:
            self._ground_truth.close()
        if self._tmpfs_dir is not None:
            shutil.rmtree(self._tmpfs_dir, ignore_errors=True)
            self._tmpfs_dir = None
        self.started = False

    def _live_sysfs_root(self) -> Path:
        """Where the sysfs tree lives: on tmpfs, like the real one, when possible.

        A rename on ext4 costs about 200 µs (journal) against about 18 µs on tmpfs,
        and the physics loop renames ~160 files a second; ``<state_dir>/sysfs``
        is a symlink to the tmpfs tree so it is still found in the state dir.
        """
        link = self.state_dir / "sysfs"
        if link.is_symlink() or link.is_file():
            link.unlink()
        elif link.is_dir():
            shutil.rmtree(link)
        if os.access(_TMPFS, os.W_OK):
            remove_stale(Path(_TMPFS), "qtop-sim-")
            self._tmpfs_dir = Path(tempfile.mkdtemp(prefix="qtop-sim-", dir=_TMPFS))
            claim(self._tmpfs_dir)
            live = self._tmpfs_dir / "sysfs"
            link.symlink_to(live)
            return live
        return link

    def __enter__(self) -> SimBoard:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    # --- what sessions and tools use ----------------------------------------

    def session_env(self) -> dict[str, str]:
        """Variables every session on this board gets (for sshd: one ``SetEnv`` each)."""
        system = BASE_PATH if self.config.bash_on_path else str(self.system_bin_dir)
        return {
            "QTOP_SIM_SYSFS": str(self.sysfs_root),
            "QTOP_SIM_STATE": str(self.state_dir),
            "QTOP_SIM_ROOT": str(self.sim_root),
            # The board's own /tmp: the default spool (${TMPDIR:-/tmp}/qtop-UID) and anything a
            # run leaves there stay on the board and go with it, as on a real one.
            "TMPDIR": str(self.sim_root / "tmp"),
            BOARD_ENV: self.board_id,
            "PATH": f"{self.bin_dir}:{system}",
        }

    @property
    def sensors(self) -> SensorLoop:
        if self._sensors is None:
            raise RuntimeError("the simulated board is not started")
        return self._sensors

    @property
    def ground_truth(self) -> GroundTruthLog:
        if self._ground_truth is None:
            raise RuntimeError("the simulated board is not started")
        return self._ground_truth

    def snapshot(self) -> Snapshot:
        return self.sensors.snapshot()

    def invocation_rng(self, invocation: int) -> random.Random:
        return random.Random(f"{self.seed}:{invocation}")

    def stats(self) -> dict[str, Any]:
        """The physics loop's own cost, for benchmarks and the report."""
        thread = self._thread
        return {
            "physics_cpu_percent": thread.cpu_percent if thread else 0.0,
            "physics_ticks": thread.ticks if thread else 0,
            "physics_cpu_seconds": thread.cpu_seconds if thread else 0.0,
            "sysfs_writes": self._sensors.writes if self._sensors else 0,
        }

    # --- processes ----------------------------------------------------------

    def processes(self) -> list[psutil.Process]:
        """Live processes started on this board (found by their ``QTOP_SIM_BOARD`` tag)."""
        found = []
        me = os.getpid()
        for process in psutil.process_iter():
            if process.pid == me:
                continue
            try:
                if process.status() == psutil.STATUS_ZOMBIE:
                    continue
                if process.environ().get(BOARD_ENV) == self.board_id:
                    found.append(process)
            except (psutil.Error, OSError):
                continue
        return found

    def kill_processes(self) -> int:
        """Kill every process of this board; how many were killed.

        One scan of /proc is not a snapshot: a process may fork between being listed
        and being killed (a runner starting its next command), so the board is scanned
        again until a scan finds nothing alive.
        """
        killed: set[int] = set()
        deadline = time.monotonic() + 5.0
        while time.monotonic() < deadline:
            processes = self.processes()
            if not processes:
                break
            for process in processes:
                with contextlib.suppress(psutil.Error):
                    process.kill()
                killed.add(process.pid)
            settle = time.monotonic() + 1.0
            while time.monotonic() < settle and any(_alive(p) for p in processes):
                time.sleep(0.01)
        return len(killed)


def install_timedatectl(directory: Path, synchronized: bool) -> None:
    """systemd's timedatectl, as far as the probe uses it: whether NTP has set the clock."""
    answer = "yes" if synchronized else "no"
    script = directory / "timedatectl"
    script.write_text(
        "#!/bin/sh\n"
        "# timedatectl on the qtop simulated board: the one query qtop's probe makes.\n"
        "if [ \"$*\" = 'show -p NTPSynchronized --value' ]; then\n"
        f"\techo {answer}\n\texit 0\nfi\n"
        "echo 'timedatectl on the simulated board answers only: "
        "show -p NTPSynchronized --value' >&2\n"
        "exit 1\n"
    )
    script.chmod(0o755)


def install_android_tools(directory: Path) -> None:
    """A directory of links to this machine's tools, as Android's /system/bin offers them.

    bash and python3 are left out, so the device agent and the run launcher
    take the paths they take on Android. ``sh`` is mksh, as Android's is, where
    this machine has it (32-bit arithmetic, `print`, job control), else ``/bin/sh``.
    """
    directory.mkdir(parents=True, exist_ok=True)
    wanted = {name: shutil.which(name, path=BASE_PATH) for name in ANDROID_TOOLS}
    mksh = shutil.which("mksh", path=BASE_PATH)
    wanted["sh"] = mksh or "/bin/sh"
    wanted["mksh"] = mksh
    for name, target in wanted.items():
        link = directory / name
        if link.is_symlink() or link.exists():
            link.unlink()
        if target is not None:
            link.symlink_to(target)


def _alive(process: psutil.Process) -> bool:
    """Running and not a zombie (an orphan's zombie waits for an init that may never reap it)."""
    try:
        return process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False

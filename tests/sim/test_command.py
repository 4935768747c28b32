"""`qtop sim` in the foreground, and the sim profiles against the board."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from qtop.cli import main
from qtop.commands.sim import DEFAULT_PORT
from qtop.profiles import builtin_profile_dir, load_profile
from qtop.sim import SimBoard, default_state_dir

from .helpers import BoardShell, fixed_config


def test_qtop_sim_refuses_a_non_loopback_address(tmp_path: Path, capsys) -> None:
    code = main(["sim", "--host", "0.0.0.0", "--state-dir", str(tmp_path / "s")])
    assert code == 2
    assert "only listens on loopback, not on '0.0.0.0'" in capsys.readouterr().err
    assert not (tmp_path / "s").exists()


def test_qtop_sim_prints_a_working_ssh_command_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "qtop", "sim", "--port", "0", "--state-dir", str(tmp_path / "s")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        lines = []
        for line in process.stdout:
            lines.append(line.rstrip("\n"))
            if line.startswith("Ctrl-C"):
                break
        command = lines[lines.index("connect with:") + 1]
        assert command.startswith("ssh -i ") and "@127.0.0.1" in command
        assert "  sysfs_root: $QTOP_SIM_SYSFS" in lines
        if shutil.which("ssh"):
            reached = subprocess.run(
                command.replace("ssh ", "ssh -o BatchMode=yes ", 1) + " 'echo $QTOP_SIM_BOARD'",
                shell=True,
                capture_output=True,
                text=True,
                timeout=20,
                stdin=subprocess.DEVNULL,
            )
            assert reached.returncode == 0, reached.stderr
            assert len(reached.stdout.strip()) == 16
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=10) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.mark.parametrize("name", ["sim-evk", "sim-glasses"])
def test_the_sim_profiles_point_at_a_default_qtop_sim(name: str) -> None:
    profile = load_profile(builtin_profile_dir() / f"{name}.yaml")
    device = profile.device
    state = Path("~/.local/state/qtop/sim")
    assert (device.host, device.port) == ("127.0.0.1", DEFAULT_PORT)
    assert device.identity_file == str(state / "client_ed25519")
    assert device.known_hosts == str(state / "known_hosts")
    assert device.sysfs_root == "$QTOP_SIM_SYSFS"
    if "XDG_STATE_HOME" not in os.environ:
        assert default_state_dir() == state.expanduser()


@pytest.mark.parametrize(
    ("name", "variant", "log"),
    [
        ("sim-evk", "evk", "qnn-profiling-data-qwen_decode_0.log"),
        ("sim-glasses", "glasses", "qnn-profiling-data_0.log"),
    ],
)
def test_the_sim_profile_commands_run_on_the_board(
    tmp_path: Path, name: str, variant: str, log: str
) -> None:
    profile = load_profile(builtin_profile_dir() / f"{name}.yaml")
    with SimBoard(tmp_path / "state", config=fixed_config(variant)) as board:
        shell = BoardShell(board)
        for variant_spec in profile.run.variants or (None,):
            env = "".join(
                f"{k}={v} " for k, v in (variant_spec.env if variant_spec else {}).items()
            )
            command = profile.run.command.replace("--num_inferences 50", "--num_inferences 3")
            result = shell.run(f"export {env or 'QTOP_X=1'}; {command}")
            assert result.returncode == 0, result.stderr
            profiler_dir = shell.run(f'echo "{profile.run.profiler.path}"').stdout.strip()
            assert (Path(profiler_dir) / log).exists()

"""The SSH front: real /bin/sh sessions over asyncssh and over the OpenSSH client."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import asyncssh
import psutil
import pytest

from qtop.errors import UsageError
from qtop.sim import RunningSim, start_sim

from .helpers import fixed_config


def connect(sim: RunningSim, **options: object) -> asyncssh.connect:
    settings: dict[str, object] = {
        "port": sim.port,
        "username": sim.username,
        "client_keys": [str(sim.client_key_path)],
        "known_hosts": str(sim.known_hosts_path),
    }
    settings.update(options)
    return asyncssh.connect(sim.host, **settings)


async def board_processes(sim: RunningSim, done: Callable[[list[str]], bool]) -> list[str]:
    """The names of the board's processes once ``done`` holds for them (30 s: a hang guard).

    A command backgrounded by a shell that has already exited may not have run (or exec'd)
    yet on a busy machine, so the test waits for it rather than sampling once.
    """
    deadline = asyncio.get_running_loop().time() + 30.0
    while True:
        names = sorted(p.name() for p in sim.board.processes())
        if done(names) or asyncio.get_running_loop().time() > deadline:
            return names
        await asyncio.sleep(0.05)


@pytest.fixture
async def sim(tmp_path: Path):
    async with start_sim(tmp_path / "state", config=fixed_config("evk")) as running:
        yield running


async def test_exec_behaves_like_openssh(sim: RunningSim) -> None:
    async with connect(sim) as conn:
        result = await conn.run("echo out; echo err >&2; pwd; exit 3")
        assert (result.stdout, result.stderr, result.exit_status) == (
            f"out\n{sim.board.home}\n",
            "err\n",
            3,
        )
        assert (await conn.run("read a; echo got $a", input="hello\n")).stdout == "got hello\n"
        script = "echo $QTOP_SIM_SYSFS $QTOP_SIM_ROOT; command -v qnn-net-run\n"
        result = await conn.run("sh -s", input=script)
        assert result.stdout == (
            f"{sim.sysfs_root} {sim.sim_root}\n{sim.board.bin_dir}/qnn-net-run\n"
        )
        killed = await conn.run("kill -TERM $$")
        assert killed.exit_signal is not None and killed.exit_signal[0] == "TERM"


async def test_a_session_reads_the_simulated_sysfs(sim: RunningSim) -> None:
    async with connect(sim) as conn:
        result = await conn.run(
            'for z in "$QTOP_SIM_SYSFS"/class/thermal/thermal_zone*; do '
            'read t < "$z/type"; read v < "$z/temp"; echo "$t $v"; done'
        )
    readings = dict(line.split() for line in result.stdout.splitlines())
    assert len(readings) == 18
    assert 40000 < int(readings["nsp-0-0-0-thermal"]) < 46000


async def test_only_the_local_user_with_the_client_key_gets_in(sim: RunningSim) -> None:
    with pytest.raises(asyncssh.PermissionDenied):
        async with connect(sim, username="someone-else"):
            pass
    other_key = asyncssh.generate_private_key("ssh-ed25519")
    with pytest.raises(asyncssh.PermissionDenied):
        async with connect(sim, client_keys=[other_key]):
            pass


async def test_a_process_outlives_its_channel(sim: RunningSim) -> None:
    marker = sim.board.home / "still-running"
    go = sim.board.home / "go"
    async with connect(sim) as conn:
        process = await conn.create_process(
            f"while [ ! -e {go} ]; do sleep 0.05; done; echo alive > {marker}"
        )
        process.close()
        await process.wait_closed()
    assert not marker.exists()
    go.touch()
    # Told to go on after its channel closed, it does (30 s: a hang guard).
    deadline = asyncio.get_running_loop().time() + 30
    while not marker.exists() or not marker.read_text():
        assert asyncio.get_running_loop().time() < deadline
        await asyncio.sleep(0.05)
    assert marker.read_text() == "alive\n"


async def test_dropped_connections_leave_the_board_running(sim: RunningSim) -> None:
    async with connect(sim) as conn:
        await conn.run("setsid sleep 30 </dev/null >/dev/null 2>&1 &")
        waiting = asyncio.ensure_future(conn.run("sleep 30"))
        names = await board_processes(sim, lambda names: names.count("sleep") == 2)
        assert names.count("sleep") == 2
        await sim.drop_connections()
        # asyncssh ends a channel cut by a dropped link without any exit status.
        cut_short = await asyncio.wait_for(waiting, 5)
        assert (cut_short.exit_status, cut_short.exit_signal) == (None, None)
        assert conn.is_closed()
    assert [p.name() for p in sim.board.processes()].count("sleep") == 2
    async with connect(sim) as conn:
        assert (await conn.run("echo back")).stdout == "back\n"


async def test_the_ssh_server_restarts_on_the_same_port(sim: RunningSim) -> None:
    port = sim.port
    async with connect(sim) as conn:
        await conn.run("setsid sleep 30 </dev/null >/dev/null 2>&1 &")
    await sim.stop_ssh()
    with pytest.raises(OSError):
        async with connect(sim):
            pass
    await sim.start_ssh()
    assert sim.port == port
    async with connect(sim) as conn:
        assert (await conn.run("echo again")).stdout == "again\n"
    assert await board_processes(sim, lambda names: names == ["sleep"]) == ["sleep"]


async def test_closing_the_simulator_kills_everything_it_started(tmp_path: Path) -> None:
    async with start_sim(tmp_path / "state", config=fixed_config()) as running:
        async with connect(running) as conn:
            result = await conn.run("setsid sleep 60 </dev/null >/dev/null 2>&1 & echo $!")
            pid = int(result.stdout)
        assert psutil.pid_exists(pid)
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.10", "::", "example.com"])
async def test_the_simulator_refuses_to_bind_outside_loopback(tmp_path: Path, host: str) -> None:
    with pytest.raises(UsageError, match="only listens on loopback"):
        async with start_sim(tmp_path / "state", host=host):
            pass
    assert not (tmp_path / "state").exists()


async def test_everything_the_simulator_listens_on_is_loopback(sim: RunningSim) -> None:
    listening = [
        c.laddr
        for c in psutil.Process().net_connections(kind="inet")
        if c.status == psutil.CONN_LISTEN
    ]
    assert sim.port in [address.port for address in listening]
    assert {address.ip for address in listening} <= {"127.0.0.1", "::1"}


async def test_device_overrides_and_the_profile_snippet_point_at_the_simulator(
    sim: RunningSim,
) -> None:
    overrides = sim.device_overrides()
    assert overrides == {
        "host": "127.0.0.1",
        "port": sim.port,
        "user": sim.username,
        "identity_file": str(sim.client_key_path),
        "known_hosts": str(sim.known_hosts_path),
        "sysfs_root": str(sim.sysfs_root),
        "spool_dir": str(sim.spool_dir),
    }
    assert f"  port: {sim.port}\n" in sim.profile_snippet()
    line = sim.known_hosts_path.read_text()
    assert line.startswith(f"[127.0.0.1]:{sim.port},[localhost]:{sim.port} ssh-ed25519 ")


@pytest.mark.skipif(shutil.which("ssh") is None, reason="needs the OpenSSH client")
async def test_the_printed_command_works_with_the_openssh_client(sim: RunningSim) -> None:
    command = sim.ssh_command().replace("ssh ", "ssh -o BatchMode=yes ", 1) + " sh -s"
    process = await asyncio.create_subprocess_shell(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    script = b"echo via openssh; read v < $QTOP_SIM_SYSFS/class/thermal/cooling_device2/type\n"
    script += b"echo $v; qnn-net-run --version | tail -1; exit 7\n"
    stdout, stderr = await asyncio.wait_for(process.communicate(script), 20)
    assert process.returncode == 7, stderr
    assert stdout.decode() == "via openssh\ncdsp\nQNN SDK v2.45.0.260326154327\n"


async def test_a_shell_with_a_terminal_gets_a_real_pty(sim: RunningSim) -> None:
    async with connect(sim) as conn:
        result = await conn.run("stty size; tty", term_type="xterm", term_size=(100, 30))
    size, tty = result.stdout.split("\r\n")[:2]
    assert (size, result.exit_status) == ("30 100", 0)
    assert tty.startswith("/dev/pts/")

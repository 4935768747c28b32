"""The simulated adb server, driven by the real adb client (adb -H 127.0.0.1 -P PORT)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import psutil
import pytest
from adb_support import adb, adb_sim, needs_adb

from qtop.errors import UsageError
from qtop.sim.adb_server import SimAdbServer

from .helpers import fixed_config

pytestmark = needs_adb


@pytest.fixture
async def sim(tmp_path: Path):
    async with adb_sim(tmp_path / "state", config=fixed_config("glasses")) as running:
        yield running


def text(result) -> str:
    return result.stdout.decode()


async def test_the_client_lists_the_device_and_its_state(sim) -> None:
    serial = sim.adb.serial
    listed = await adb(sim, "devices", "-l")
    assert listed.returncode == 0
    line = text(listed).splitlines()[1]
    assert line.split()[:2] == [serial, "device"]
    assert "model:qtop_sim_glasses" in line and "transport_id:1" in line
    assert text(await adb(sim, "-s", serial, "get-state")) == "device\n"
    assert text(await adb(sim, "-s", serial, "get-serialno")) == f"{serial}\n"
    features = text(await adb(sim, "-s", serial, "features")).split()
    assert "shell_v2" in features
    # The device is there: wait-for-device returns (20 s: a hang guard).
    waited = await asyncio.wait_for(adb(sim, "-s", serial, "wait-for-device"), 20)
    assert waited.returncode == 0
    # What the client asked the server, in adb's protocol.
    assert "host:version" in sim.adb.server.requests
    assert f"host-serial:{serial}:wait-for-any-device" in sim.adb.server.requests


async def test_shell_v2_separates_the_streams_and_carries_the_exit_status(sim) -> None:
    result = await adb(sim, "shell", "-T", "echo out; echo err >&2; exit 7")
    assert (result.returncode, result.stdout, result.stderr) == (7, b"out\n", b"err\n")
    # A shell killed by a signal: adbd reports 128 + the signal, as a shell would.
    assert (await adb(sim, "shell", "-T", "kill -TERM $$")).returncode == 128 + 15
    shell_requests = [r for r in sim.adb.server.requests if r.startswith("shell")]
    assert shell_requests[0].startswith("shell,v2,") and ",raw:" in shell_requests[0]


async def test_stdin_reaches_the_command_and_its_end_closes_it(sim) -> None:
    data = bytes(range(256)) * 400
    result = await adb(sim, "shell", "-T", "cat; echo end", stdin=data)
    assert result.returncode == 0
    assert result.stdout == data + b"end\n"
    script = b"echo from the script $1\nexit 4\n"
    result = await adb(sim, "shell", "-T", "sh -s -- arg", stdin=script)
    assert (result.returncode, result.stdout) == (4, b"from the script arg\n")


async def test_a_session_is_an_android_shell_with_adbds_environment(sim) -> None:
    result = await adb(sim, "shell", "-T", 'echo "$KSH_VERSION|$SHELL|$TMPDIR|$QTOP_SIM_SYSFS"')
    ksh, shell, tmpdir, sysfs = text(result).strip().split("|")
    assert "MIRBSD KSH" in ksh
    assert shell == "/system/bin/sh"
    assert tmpdir == str(sim.sim_root / "data" / "local" / "tmp") and Path(tmpdir).is_dir()
    assert sysfs == str(sim.sysfs_root)
    # Its own session, as adbd's setsid gives it.
    result = await adb(sim, "shell", "-T", "ps -o sid= -p $$; echo $$")
    sid, pid = text(result).split()
    assert sid == pid


async def test_push_and_pull_go_through_the_sync_service(sim, tmp_path: Path) -> None:
    serial = sim.adb.serial
    payload = tmp_path / "payload"
    (payload / "sub").mkdir(parents=True)
    (payload / "model.bin").write_bytes(os.urandom(300_000))
    (payload / "sub" / "inputs.txt").write_text("a.raw\nb.raw\n")
    device_dir = tmp_path / "device" / "prismml"
    result = await adb(sim, "-s", serial, "push", str(payload), str(device_dir))
    assert result.returncode == 0, result.stderr
    assert (device_dir / "model.bin").read_bytes() == (payload / "model.bin").read_bytes()
    assert (device_dir / "sub" / "inputs.txt").read_text() == "a.raw\nb.raw\n"
    # Several files into an existing directory; then back again.
    one, two = payload / "model.bin", payload / "sub" / "inputs.txt"
    result = await adb(sim, "-s", serial, "push", str(one), str(two), str(device_dir) + "/")
    assert result.returncode == 0, result.stderr
    assert (device_dir / "inputs.txt").read_text() == "a.raw\nb.raw\n"
    result = await adb(sim, "-s", serial, "pull", str(device_dir / "model.bin"), str(tmp_path))
    assert result.returncode == 0
    assert (tmp_path / "model.bin").read_bytes() == one.read_bytes()
    # The sync service's answer to a push it cannot write is adbd's error.
    result = await adb(sim, "-s", serial, "push", str(one), "/proc/qtop-not-writable/x")
    assert result.returncode == 1
    assert b"remote couldn't create file" in result.stdout + result.stderr


async def test_which_device_errors_are_adbs_own(sim) -> None:
    result = await adb(sim, "-s", "NOSUCH", "shell", "true")
    assert result.returncode == 1 and b"device 'NOSUCH' not found" in result.stderr
    sim.adb.add_tcp_device("127.0.0.1:5555")
    result = await adb(sim, "shell", "true")
    assert result.returncode == 1 and b"more than one device/emulator" in result.stderr
    sim.adb.server.set_state(sim.adb.serial, "unauthorized")
    result = await adb(sim, "-s", sim.adb.serial, "shell", "true")
    assert b"device unauthorized" in result.stderr
    assert text(await adb(sim, "-s", sim.adb.serial, "get-state")) == "unauthorized\n"
    assert "unauthorized" in text(await adb(sim, "devices"))


async def test_unplugging_cuts_the_shell_hangs_up_on_it_and_spares_what_it_detached(
    sim, tmp_path: Path
) -> None:
    serial = sim.adb.serial
    marker = tmp_path / "detached.pid"
    command = (
        f"setsid sh -c 'echo $$ > {marker}; exec sleep 60' </dev/null >/dev/null 2>&1 & "
        "echo started; exec sleep 60"
    )
    running = asyncio.ensure_future(adb(sim, "-s", serial, "shell", "-T", command))
    for _ in range(200):
        if marker.exists() and marker.read_text().strip():
            break
        await asyncio.sleep(0.05)
    shells = [p for p in sim.board.processes() if p.name() == "sleep"]
    assert len(shells) == 2
    sim.adb.server.unplug(serial)
    result = await running
    # The client cannot tell a dropped link from a clean exit: status 0, no exit packet.
    assert (result.returncode, result.stdout) == (0, b"started\n")
    assert serial not in text(await adb(sim, "devices"))
    detached = int(marker.read_text())
    for _ in range(200):
        alive = [p.pid for p in sim.board.processes() if p.name() == "sleep"]
        if alive == [detached]:
            break
        await asyncio.sleep(0.05)
    assert alive == [detached], "adbd's SIGHUP reaches the shell only, not what it detached"
    assert psutil.Process(detached).is_running()
    sim.adb.server.replug(serial)
    assert text(await adb(sim, "-s", serial, "shell", "echo back")) == "back\n"
    assert "transport_id:2" in text(await adb(sim, "devices", "-l"))


async def test_a_killed_server_is_gone_and_no_client_starts_another(sim) -> None:
    result = await adb(sim, "kill-server")
    assert result.returncode == 0
    assert not sim.adb.server.running
    result = await adb(sim, "devices")
    assert result.returncode == 1
    assert b"cannot connect to daemon" in result.stderr
    # The fixture checks that no adb server process was started meanwhile.
    await sim.adb.server.start()
    assert (await adb(sim, "-s", sim.adb.serial, "get-state")).stdout == b"device\n"


async def test_a_device_over_tcp_comes_back_with_adb_connect(sim) -> None:
    tcp = sim.adb.add_tcp_device("127.0.0.1:5555")
    sim.adb.server.drop_network(tcp.serial)
    assert tcp.serial not in text(await adb(sim, "devices"))
    assert "failed to connect" in text(await adb(sim, "connect", tcp.serial))
    sim.adb.server.restore_network(tcp.serial)
    assert text(await adb(sim, "connect", tcp.serial)).strip() == f"connected to {tcp.serial}"
    assert text(await adb(sim, "-s", tcp.serial, "shell", "echo over tcp")) == "over tcp\n"
    result = await adb(sim, "disconnect", tcp.serial)
    assert text(result).strip() == f"disconnected {tcp.serial}"


async def test_the_server_listens_on_loopback_only() -> None:
    with pytest.raises(UsageError, match="loopback"):
        SimAdbServer("0.0.0.0")

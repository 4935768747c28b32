"""AdbTransport, the real adb client, against the simulated adb server and board."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from adb_support import adb_sim, needs_adb

from qtop.errors import RunFailed, UsageError
from qtop.transport.adb import AdbTarget, AdbTransport
from qtop.transport.base import LinkDown

pytestmark = needs_adb


@pytest.fixture
async def sim(tmp_path: Path, monkeypatch):
    monkeypatch.delenv("ANDROID_SERIAL", raising=False)
    async with adb_sim(tmp_path / "state", variant="glasses") as running:
        yield running


def transport_for(sim, serial: str | None = None, **target: object) -> AdbTransport:
    front = sim.adb
    settings = {"connect_timeout_s": 3.0, "keepalive_interval_s": 0.3, "keepalive_count_max": 2}
    settings.update(target)
    return AdbTransport(
        AdbTarget(serial=serial, server_host=front.host, server_port=front.port, **settings)
    )


async def test_run_gives_stdout_stderr_and_the_exit_status(sim) -> None:
    transport = transport_for(sim)
    await transport.connect()
    assert transport.serial == sim.adb.serial and transport.description == "adb QTOPSIM0001"
    result = await transport.run("echo out; echo err >&2; exit 5")
    assert (result.exit_status, result.stdout, result.stderr) == (5, b"out\n", b"err\n")
    # A script on stdin (how the device agent is sent), with its arguments; stdin is
    # binary-clean and its end reaches the command.
    result = await transport.run("sh -s -- 'a b' c", stdin=b'printf "%s|" "$@"\n')
    assert (result.exit_status, result.stdout) == (0, b"a b|c|")
    data = bytes(range(256)) * 64
    assert (await transport.run("cat; echo end", stdin=data)).stdout == data + b"end\n"
    # A command that exits from the middle still reports its status.
    assert (await transport.run("exit 9")).exit_status == 9
    await transport.close()


async def test_a_link_that_drops_mid_command_is_link_down_not_status_0(sim) -> None:
    transport = transport_for(sim)
    await transport.connect()
    running = asyncio.ensure_future(transport.run("echo started; sleep 30"))
    for _ in range(200):
        if any(p.name() == "sleep" for p in sim.board.processes()):
            break
        await asyncio.sleep(0.05)
    sim.adb.server.unplug(sim.adb.serial)
    with pytest.raises(LinkDown):
        await running
    await transport.close()


async def test_a_stream_reads_as_it_comes_and_ends_with_the_device(sim) -> None:
    transport = transport_for(sim)
    await transport.connect()
    stream = await transport.open_stream("while :; do echo tick; sleep 0.05; done")
    seen = b""
    while seen.count(b"tick") < 3:
        seen += await stream.read()
    sim.adb.server.unplug(sim.adb.serial)
    with pytest.raises(LinkDown):
        while await stream.read():
            pass
        raise LinkDown("the stream ended")
    await stream.close()
    await transport.close()


async def test_connect_waits_for_a_device_that_comes_back(sim) -> None:
    transport = transport_for(sim, connect_timeout_s=20.0)
    await transport.connect()
    sim.adb.server.unplug(sim.adb.serial)
    connecting = asyncio.ensure_future(transport.connect())
    await asyncio.sleep(0.3)
    assert not connecting.done()
    sim.adb.server.replug(sim.adb.serial)
    await connecting
    assert (await transport.run("echo back")).stdout == b"back\n"
    await transport.close()


async def test_a_device_that_does_not_come_back_says_what_adb_lists(sim) -> None:
    transport = transport_for(sim, connect_timeout_s=1.0)
    await transport.connect()
    sim.adb.server.unplug(sim.adb.serial)
    with pytest.raises(LinkDown, match=r"waiting for device QTOPSIM0001: not attached after 1 s"):
        await transport.connect()
    await transport.close()


async def test_the_first_connect_explains_a_missing_or_ambiguous_device(sim, monkeypatch) -> None:
    with pytest.raises(RunFailed) as missing:
        await transport_for(sim, serial="NOSUCH", connect_timeout_s=1.0).connect()
    assert "NOSUCH" in missing.value.problem and "adb devices" in missing.value.fix
    sim.adb.add_tcp_device("127.0.0.1:5555")
    with pytest.raises(UsageError) as ambiguous:
        await transport_for(sim).connect()
    assert ambiguous.value.problem.startswith("2 devices are attached (QTOPSIM0001 (device")
    assert "device.serial" in ambiguous.value.fix
    monkeypatch.setenv("ANDROID_SERIAL", "127.0.0.1:5555")
    transport = transport_for(sim)
    await transport.connect()
    assert transport.serial == "127.0.0.1:5555"
    await transport.close()
    sim.adb.server.unplug(sim.adb.serial)
    sim.adb.server.drop_network("127.0.0.1:5555")
    monkeypatch.delenv("ANDROID_SERIAL")
    with pytest.raises(RunFailed, match="no device is attached"):
        await transport_for(sim).connect()


async def test_an_unauthorized_device_says_to_accept_the_prompt(sim) -> None:
    sim.adb.server.set_state(sim.adb.serial, "unauthorized")
    with pytest.raises(RunFailed, match=r"it is 'unauthorized'.*Allow USB debugging"):
        await transport_for(sim, connect_timeout_s=1.0).connect()


async def test_a_device_without_shell_v2_is_refused_with_the_reason(sim) -> None:
    sim.adb.server.devices[sim.adb.serial].features = ("cmd",)
    with pytest.raises(RunFailed) as refused:
        await transport_for(sim).connect()
    assert "no shell protocol v2" in refused.value.problem
    assert "Android 7" in refused.value.fix


async def test_a_silent_drop_is_noticed_by_the_round_trip_and_ends_every_process(sim) -> None:
    transport = transport_for(sim)
    await transport.connect()
    stream = await transport.open_stream("while :; do echo tick; sleep 0.05; done")
    assert b"tick" in await stream.read()
    sim.adb.server.freeze(sim.adb.serial)
    with pytest.raises(LinkDown, match="the link is down"):
        while await asyncio.wait_for(stream.read(), 30):
            pass
    await stream.close()
    with pytest.raises(LinkDown):
        await transport.connect()
    sim.adb.server.thaw(sim.adb.serial)
    await transport.connect()
    assert (await transport.run("echo back")).stdout == b"back\n"
    await transport.close()


async def test_a_device_over_tcp_is_connected_again_after_a_drop(sim) -> None:
    tcp = sim.adb.add_tcp_device("127.0.0.1:5555")
    transport = transport_for(sim, serial=tcp.serial)
    await transport.connect()
    sim.adb.server.drop_network(tcp.serial)
    with pytest.raises(LinkDown, match=r"adb connect 127\.0\.0\.1:5555: failed to connect"):
        await transport.connect()
    sim.adb.server.restore_network(tcp.serial)
    await transport.connect()
    assert "host:connect:127.0.0.1:5555" in sim.adb.server.requests
    assert (await transport.run("echo over tcp")).stdout == b"over tcp\n"
    await transport.close()


async def test_a_killed_server_is_waited_for(sim) -> None:
    transport = transport_for(sim)
    await transport.connect()
    await sim.adb.server.kill()
    with pytest.raises(LinkDown, match="does not answer"):
        await transport.connect()
    await sim.adb.server.start()
    await transport.connect()
    assert (await transport.run("echo back")).exit_status == 0
    await transport.close()


async def test_upload_pushes_files_into_their_directories(sim, tmp_path: Path) -> None:
    transport = transport_for(sim)
    await transport.connect()
    one, two = tmp_path / "model.bin", tmp_path / "in put.txt"
    one.write_bytes(b"\x00model" * 1000)
    two.write_text("x\n")
    target = tmp_path / "device"
    target.mkdir()
    await transport.upload([(one, f"{target}/model.bin"), (two, f"{target}/renamed.txt")])
    assert (target / "model.bin").read_bytes() == one.read_bytes()
    assert (target / "renamed.txt").read_text() == "x\n"
    with pytest.raises(RunFailed, match="adb push to /proc/qtop-nowhere/x failed"):
        await transport.upload([(one, "/proc/qtop-nowhere/x")])
    await transport.close()

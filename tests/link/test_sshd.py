"""The link against OpenSSH's sshd on loopback: a run, a drop, host keys (~/.ssh/config and
jump hosts: test_ssh_config.py)."""

import os

import asyncssh
import pytest

from qtop.device.plan import RunOptions
from qtop.events import Iteration
from qtop.live.backoff import Backoff
from qtop.live.source import LiveSource
from qtop.profiles import load_profile_text
from qtop.sim import SimBoard
from qtop.transport.base import HostKeyRefused
from qtop.transport.ssh import SSHTarget, SSHTransport
from qtop.transport.ssh_route import route_reads

from .helpers import SSHD, make_sysfs, start_sshd
from .recording import check_complete, of_kind, record

pytestmark = [
    pytest.mark.sshd,
    pytest.mark.skipif(not os.path.exists(SSHD), reason=f"{SSHD} is not installed"),
]


@pytest.fixture(scope="module")
def sshd(tmp_path_factory):
    server = start_sshd(tmp_path_factory.mktemp("sshd"))
    yield server
    server.stop()


def target(sshd, **changes):
    values = dict(
        host=sshd.host,
        port=sshd.port,
        user=sshd.user,
        identity_file=str(sshd.client_key),
        known_hosts=str(sshd.known_hosts),
        connect_timeout_s=5.0,
    )
    values.update(changes)
    return SSHTarget(**values)


async def test_a_run_against_sshd_survives_an_aborted_connection(sshd, tmp_path):
    sysfs = make_sysfs(tmp_path / "sys")
    profile = load_profile_text(
        f"name: sshdlink\n"
        f"device: {{sysfs_root: '{sysfs}', spool_dir: '{tmp_path / 'spool'}', "
        "sample_interval: 50ms}\n"
        "run: {command: 'echo out; sleep 0.03', warmup: 1, iterations: 25}\n"
    )
    transport = SSHTransport(target(sshd))
    source = LiveSource(
        profile, transport, run_options=RunOptions(calibrations=5), backoff=Backoff(0.1, 0.5)
    )
    aborted = []

    def abort_once(batch):
        if not aborted and any(isinstance(e, Iteration) for e in batch):
            aborted.append(True)
            transport.abort()

    events = await record(source, tmp_path / "run.jsonl", abort_once)
    check_complete(events, processes=26, faults=1)
    assert events[0]["source"] == "ssh"
    assert [e["text"] for e in of_kind(events, "log") if e["stream"] == "stdout"] == ["out"] * 26


@pytest.mark.slow
async def test_the_simulated_board_behind_sshd(tmp_path):
    board = SimBoard(tmp_path / "board", variant="glasses", time_scale=20, seed=1).start()
    try:
        server = start_sshd(tmp_path / "sshd", set_env=board.session_env())
        try:
            profile = load_profile_text(
                "name: sshdsim\n"
                "device: {sysfs_root: $QTOP_SIM_SYSFS, sample_interval: 50ms, "
                f"spool_dir: '{tmp_path / 'spool'}'}}\n"
                "run: {command: 'qnn-net-run --backend libQnnHtp.so --retrieve_context "
                '"$QTOP_SIM_ROOT/data/local/tmp/prismml/prismml_w8a8_seq64.bin" '
                '--input_list "$QTOP_SIM_ROOT/data/local/tmp/prismml/inputs.txt" '
                "--num_inferences 2', warmup: 1, iterations: 10}\n"
            )
            source = LiveSource(
                profile, SSHTransport(target(server)), run_options=RunOptions(calibrations=5)
            )
            events = await record(source, tmp_path / "run.jsonl")
        finally:
            server.stop()
    finally:
        board.close()
    check_complete(events, processes=11, faults=0)
    assert all(i["exit_status"] == 0 for i in of_kind(events, "iteration"))
    values = of_kind(events, "sample")[-1]["values"]
    assert values["thermal/nsphvx-0"] is not None
    assert values["power/battery/voltage"] > 3


async def test_an_unknown_host_key_is_refused_with_its_fingerprint(sshd, tmp_path):
    empty = tmp_path / "known_hosts"
    transport = SSHTransport(target(sshd, known_hosts=str(empty)))
    with pytest.raises(HostKeyRefused) as refused:
        await transport.connect()
    message = str(refused.value)
    assert "unknown host key ssh-ed25519 SHA256:" in message
    assert f"echo '{sshd.host_key_line}' >> {empty}" in message
    assert "--accept-new-host-key" in message
    assert not empty.exists()


async def test_accept_new_host_key_trusts_an_unknown_key_once(sshd, tmp_path):
    known = tmp_path / "known_hosts"
    transport = SSHTransport(target(sshd, known_hosts=str(known), accept_new_host_key=True))
    await transport.connect()
    result = await transport.run("echo ok", timeout=10)
    await transport.close()
    assert result.text == "ok\n"
    assert known.read_text() == sshd.host_key_line + "\n"
    assert oct(known.stat().st_mode & 0o777) == "0o600"


async def test_a_changed_host_key_is_refused_even_with_accept_new(sshd, tmp_path):
    old_key = asyncssh.generate_private_key("ssh-ed25519").export_public_key().decode()
    known = tmp_path / "known_hosts"
    stale = f"[{sshd.host}]:{sshd.port} " + " ".join(old_key.split()[:2])
    known.write_text(stale + "\n")
    transport = SSHTransport(target(sshd, known_hosts=str(known), accept_new_host_key=True))
    with pytest.raises(HostKeyRefused, match="the host key CHANGED"):
        await transport.connect()
    assert known.read_text() == stale + "\n"


async def test_known_hosts_none_in_the_profile_is_refused(sshd):
    transport = SSHTransport(target(sshd, known_hosts="none"))
    with pytest.raises(HostKeyRefused, match="would turn host-key checking off"):
        await transport.connect()


def test_keepalives_and_connect_timeout_are_on_by_default():
    from qtop.profiles import DeviceProfile

    default = SSHTarget.from_profile(DeviceProfile(host="evk"))
    assert default.connect_timeout_s == 10.0
    assert default.keepalive_interval_s * default.keepalive_count_max == 6.0


# Thirty lines 10 ms apart, then quiet with the stream still open.
TRICKLE = "i=0; while [ $i -lt 30 ]; do echo line$i; sleep 0.01; i=$((i+1)); done; sleep 1"


async def read_trickle_asking_meanwhile(transport):
    """The trickle's lines, and the answers to three commands run while its stream is open."""
    stream = await transport.open_stream(TRICKLE)
    received, answers = b"", []
    while len(answers) < 3 or received.count(b"\n") < 30:
        if len(answers) < 3:
            answers.append((await transport.run("echo ok", timeout=20)).text)
        if received.count(b"\n") < 30:
            chunk = await stream.read()
            assert chunk, f"the stream ended after {received!r}"
            received += chunk
    await stream.close()
    return received.decode().split(), answers


async def test_a_trickle_is_read_in_bursts_with_every_byte_and_every_answer(sshd):
    transport = SSHTransport(target(sshd))
    await transport.connect()
    try:
        connection = transport._connection
        (reads,) = route_reads(connection)
        assert connection.get_extra_info("recv_cipher") == "aes128-gcm@openssh.com"
        lines, answers = await read_trickle_asking_meanwhile(transport)
        assert lines == [f"line{i}" for i in range(30)]
        assert answers == ["ok\n"] * 3
        assert reads.holds > 0
        # With no stream open, every read is an answer: none is held.
        holds = reads.holds
        assert (await transport.run("seq 3", timeout=20)).text == "1\n2\n3\n"
        assert reads.holds == holds and not reads.holding
    finally:
        await transport.close()

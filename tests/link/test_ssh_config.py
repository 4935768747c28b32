"""~/.ssh/config as a user has it, against real OpenSSH sshd on loopback: aliases, jump
hosts, ProxyCommand, and the known_hosts files the config names. No test passes an
explicit config list: qtop reads ``$HOME/.ssh/config`` of a private HOME."""

import asyncio
import os
import subprocess

import psutil
import pytest

from qtop.errors import RunFailed, UsageError
from qtop.live.source import LiveSource
from qtop.profiles import DeviceProfile, load_profile_text
from qtop.transport.base import HostKeyRefused, LinkDown
from qtop.transport.ssh import SSHTarget, SSHTransport
from qtop.transport.ssh_route import route_reads

from .helpers import (
    SSH,
    SSHD,
    config_line,
    free_port,
    home_ssh_dir,
    make_sysfs,
    start_sshd,
    write_ssh_config,
)

pytestmark = [
    pytest.mark.sshd,
    pytest.mark.skipif(not os.path.exists(SSHD), reason=f"{SSHD} is not installed"),
]

# Read by ssh (and by the `ssh -W` it starts for a jump), ignored by qtop: ssh must
# never wait for a prompt in a test.
BATCH = "Host *\n  BatchMode yes\n  StrictHostKeyChecking yes\n"


@pytest.fixture(scope="module")
def device(tmp_path_factory):
    server = start_sshd(tmp_path_factory.mktemp("device"))
    yield server
    server.stop()


@pytest.fixture(scope="module")
def jump(tmp_path_factory):
    server = start_sshd(tmp_path_factory.mktemp("jump"), log_level="DEBUG1")
    yield server
    server.stop()


def entry(alias, server, *extra):
    lines = [
        f"Host {alias}",
        f"  HostName {server.host}",
        f"  Port {server.port}",
        f"  User {server.user}",
        f"  IdentityFile {server.client_key}",
        *(f"  {line}" for line in extra),
    ]
    return "\n".join(lines) + "\n"


def trust(*servers, name="known_hosts"):
    path = home_ssh_dir() / name
    path.write_text("".join(server.host_key_line + "\n" for server in servers))
    return path


async def run_on(target, command="echo ok"):
    transport = SSHTransport(target)
    await transport.connect()
    try:
        return (await transport.run(command, timeout=20)).text
    finally:
        await transport.close()


def ssh(alias, command="echo ok"):
    """OpenSSH's client on the same ~/.ssh/config (its own home is not $HOME: -F)."""
    return subprocess.run(
        [SSH, "-F", str(home_ssh_dir() / "config"), alias, command],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )


async def test_an_alias_from_home_ssh_config_connects_with_no_profile_values(device):
    write_ssh_config(entry("board", device))
    trust(device)
    assert await run_on(SSHTarget.from_profile(DeviceProfile(host="board"))) == "ok\n"


async def test_profile_values_win_over_the_config(device, tmp_path):
    write_ssh_config(
        f"Host board\n  HostName {device.host}\n  Port {free_port()}\n  User nobody-here\n"
        "  IdentityFile ~/.ssh/no_such_key\n  UserKnownHostsFile ~/.ssh/empty_hosts\n"
        f"  ProxyJump gw\nHost gw\n  HostName {device.host}\n  Port {free_port()}\n"
    )
    target = SSHTarget(
        host="board",
        port=device.port,
        user=device.user,
        identity_file=str(device.client_key),
        known_hosts=str(device.known_hosts),
        jump_host="none",
    )
    assert await run_on(target) == "ok\n"


async def test_through_a_live_jump_host_as_ssh_goes(device, jump):
    write_ssh_config(
        BATCH
        + entry("board", device, "ProxyJump gw", f"UserKnownHostsFile {trust(device)}")
        + entry("gw", jump, f"UserKnownHostsFile {trust(jump, name='gw_hosts')}")
    )
    forwarded = f"target 127.0.0.1 port {device.port}"
    before = (jump.directory / "sshd.log").read_text().count(forwarded)
    assert await run_on(SSHTarget(host="board")) == "ok\n"
    # The jump host really forwarded the connection: qtop did not go to the device directly.
    assert (jump.directory / "sshd.log").read_text().count(forwarded) == before + 1
    openssh = ssh("board")
    assert (openssh.returncode, openssh.stdout) == (0, "ok\n"), openssh.stderr


async def test_through_two_jump_hosts_each_its_own_alias(device, jump):
    # bastion and labgw are two entries for the same sshd: the route is
    # bastion -> labgw -> board, so the jump sshd forwards to itself, then to the device.
    write_ssh_config(
        entry("board", device, "ProxyJump bastion,labgw")
        + entry("bastion", jump)
        + entry("labgw", jump, f"UserKnownHostsFile {trust(jump, name='lab_hosts')}")
    )
    trust(device, jump)
    log = jump.directory / "sshd.log"
    to_jump, to_device = (
        f"target 127.0.0.1 port {jump.port}",
        f"target 127.0.0.1 port {device.port}",
    )
    before = (log.read_text().count(to_jump), log.read_text().count(to_device))
    assert await run_on(SSHTarget(host="board")) == "ok\n"
    assert (log.read_text().count(to_jump), log.read_text().count(to_device)) == (
        before[0] + 1,
        before[1] + 1,
    )


async def test_proxy_jump_to_a_dead_port_fails_as_ssh_fails(device):
    dead = free_port()
    config = write_ssh_config(
        BATCH
        + entry("board", device, "ProxyJump gw", f"UserKnownHostsFile {trust(device)}")
        + f"Host gw\n  HostName 127.0.0.1\n  Port {dead}\n"
    )
    with pytest.raises(LinkDown) as failed:
        await SSHTransport(SSHTarget(host="board")).connect()
    assert str(failed.value) == f"jump host gw: cannot connect to 127.0.0.1 port {dead}: " + (
        "connection refused"
    )
    assert "'ssh gw true'" in failed.value.fix
    assert f"the ProxyJump at {config_line(config, 'ProxyJump gw')}" in failed.value.fix
    openssh = ssh("board")
    assert openssh.returncode == 255
    assert f"connect to host 127.0.0.1 port {dead}: Connection refused" in openssh.stderr


async def test_a_dead_jump_host_stops_a_run_with_its_fix(device, tmp_path):
    dead = free_port()
    write_ssh_config(
        entry("board", device, "ProxyJump gw") + f"Host gw\n  HostName 127.0.0.1\n  Port {dead}\n"
    )
    trust(device)
    profile = load_profile_text(
        f"name: jumped\ndevice: {{host: board, sysfs_root: '{make_sysfs(tmp_path / 'sys')}'}}\n"
        "run: {command: 'true', iterations: 1}\n"
    )
    source = LiveSource(profile, SSHTransport(SSHTarget.from_profile(profile.device)))
    with pytest.raises(RunFailed) as failed:
        await source.open()
    assert failed.value.problem == f"jump host gw: cannot connect to 127.0.0.1 port {dead}: " + (
        "connection refused"
    )
    assert failed.value.fix.startswith("check that jump host gw is up and reachable")


async def test_each_jump_host_is_checked_with_the_same_host_key_policy(device, jump):
    gw_hosts = home_ssh_dir() / "gw_hosts"
    write_ssh_config(
        entry("board", device, "ProxyJump gw") + entry("gw", jump, f"UserKnownHostsFile {gw_hosts}")
    )
    trust(device)
    with pytest.raises(HostKeyRefused) as refused:
        await SSHTransport(SSHTarget(host="board")).connect()
    assert str(refused.value).startswith("jump host gw: unknown host key ssh-ed25519 SHA256:")
    assert f"echo '{jump.host_key_line}' >> ~/.ssh/gw_hosts" in refused.value.fix
    assert not gw_hosts.exists()
    # --accept-new-host-key trusts the jump host's key in the jump host's own file.
    assert await run_on(SSHTarget(host="board", accept_new_host_key=True)) == "ok\n"
    assert gw_hosts.read_text() == jump.host_key_line + "\n"


async def test_proxy_jump_none_connects_directly(device):
    write_ssh_config(
        entry("board", device, "ProxyJump none") + f"Host *\n  ProxyJump 127.0.0.1:{free_port()}\n"
    )
    trust(device)
    assert await run_on(SSHTarget(host="board")) == "ok\n"


async def test_the_profile_jump_host_replaces_the_configs(device, jump):
    write_ssh_config(
        entry("board", device, f"ProxyJump 127.0.0.1:{free_port()}")
        + entry("gw", jump, f"UserKnownHostsFile {trust(jump, name='gw_hosts')}")
    )
    trust(device)
    assert await run_on(SSHTarget(host="board", jump_host="gw")) == "ok\n"


async def test_user_known_hosts_file_from_the_config_is_used(device):
    config = write_ssh_config(entry("board", device, "UserKnownHostsFile ~/.ssh/lab_hosts"))
    # Only in the file the config names: accepted.
    trust(device, name="lab_hosts")
    assert await run_on(SSHTarget(host="board")) == "ok\n"
    # Only in the default file, which the config replaced: unknown, and the fix names the
    # config's file and line.
    (home_ssh_dir() / "lab_hosts").unlink()
    trust(device)
    with pytest.raises(HostKeyRefused) as refused:
        await SSHTransport(SSHTarget(host="board")).connect()
    message = refused.value.problem
    assert message.startswith("board: unknown host key ssh-ed25519")
    where = config_line(config, "UserKnownHostsFile")
    assert message.endswith(f"(checked ~/.ssh/lab_hosts: from {where})")
    assert f"echo '{device.host_key_line}' >> ~/.ssh/lab_hosts" in refused.value.fix


async def test_a_malformed_known_hosts_file_is_named(device):
    write_ssh_config(entry("board", device, "UserKnownHostsFile ~/.ssh/lab_hosts"))
    (home_ssh_dir() / "lab_hosts").write_text("[127.0.0.1]:22\n")
    with pytest.raises(UsageError) as refused:
        await SSHTransport(SSHTarget(host="board")).connect()
    assert refused.value.problem.startswith(
        "board: the known_hosts file ~/.ssh/lab_hosts is malformed: Invalid known hosts entry"
    )


async def test_accept_new_host_key_writes_to_the_configs_known_hosts_file(device):
    write_ssh_config(entry("board", device, "UserKnownHostsFile ~/.ssh/lab_hosts ~/.ssh/more"))
    assert await run_on(SSHTarget(host="board", accept_new_host_key=True)) == "ok\n"
    assert (home_ssh_dir() / "lab_hosts").read_text() == device.host_key_line + "\n"
    assert not (home_ssh_dir() / "known_hosts").exists()


async def test_user_known_hosts_file_none_is_refused_with_its_own_message(device):
    config = write_ssh_config(entry("board", device, "UserKnownHostsFile none"))
    trust(device)
    with pytest.raises(HostKeyRefused) as refused:
        await SSHTransport(SSHTarget(host="board")).connect()
    where = config_line(config, "UserKnownHostsFile none")
    assert refused.value.problem == (
        f"board: 'UserKnownHostsFile none' ({where}) would turn host-key checking off for "
        "this host; qtop always checks host keys"
    )
    assert "unknown host key" not in str(refused.value)
    assert refused.value.fix.startswith("remove that line, or give board its own")
    assert refused.value.fix.endswith("or set device.known_hosts in the profile")


async def test_user_known_hosts_file_none_on_a_jump_host_is_refused_before_connecting(device, jump):
    config = write_ssh_config(
        entry("board", device, "ProxyJump gw") + entry("gw", jump, "UserKnownHostsFile none")
    )
    trust(device, jump)
    log = jump.directory / "sshd.log"
    before = log.read_text().count("Accepted publickey")
    with pytest.raises(HostKeyRefused) as refused:
        await SSHTransport(SSHTarget(host="board")).connect()
    assert str(refused.value).startswith(
        f"jump host gw: 'UserKnownHostsFile none' ({config_line(config, 'none')})"
    )
    assert "device.known_hosts" not in refused.value.fix
    assert log.read_text().count("Accepted publickey") == before


async def test_a_proxy_command_is_run_through_the_shell_and_stopped_with_the_link(device):
    pid_file = home_ssh_dir() / "proxy.pid"
    write_ssh_config(
        entry("board", device, f"ProxyCommand sh -c 'echo $$ > {pid_file}; exec busybox nc %h %p'")
    )
    trust(device)
    assert await run_on(SSHTarget(host="board")) == "ok\n"
    assert not psutil.pid_exists(int(pid_file.read_text()))


async def test_a_failing_proxy_command_shows_what_it_said(device):
    config = write_ssh_config(
        entry("board", device, "ProxyCommand sh -c 'echo no route to %h >&2; exit 3'")
    )
    trust(device)
    with pytest.raises(LinkDown) as failed:
        await SSHTransport(SSHTarget(host="board")).connect()
    message = str(failed.value)
    assert message.startswith(f"board: the ProxyCommand ({config_line(config, 'Proxy')}) failed")
    assert message.endswith("it said: no route to 127.0.0.1")
    assert failed.value.fix == (
        "run it by hand to see why: sh -c 'echo no route to 127.0.0.1 >&2; exit 3'"
    )


async def test_a_jump_host_that_refuses_forwarding_says_so(device, tmp_path):
    closed = start_sshd(tmp_path / "closed", tcp_forwarding=False)
    try:
        write_ssh_config(entry("board", device, "ProxyJump gw") + entry("gw", closed))
        trust(device, closed)
        with pytest.raises(LinkDown) as failed:
            await SSHTransport(SSHTarget(host="board")).connect()
    finally:
        closed.stop()
    assert str(failed.value).startswith(
        f"board: jump host gw cannot reach 127.0.0.1 port {device.port}:"
    )
    assert "AllowTcpForwarding yes" in failed.value.fix


async def test_closing_the_device_connection_closes_the_jump_hosts(device, jump):
    write_ssh_config(entry("board", device, "ProxyJump gw") + entry("gw", jump))
    trust(device, jump)

    def to_jump():
        return [
            c
            for c in psutil.Process().net_connections("tcp")
            if c.raddr and c.raddr.port == jump.port and c.status == psutil.CONN_ESTABLISHED
        ]

    transport = SSHTransport(SSHTarget(host="board"))
    await transport.connect()
    assert len(to_jump()) == 1
    await transport.close()
    for _ in range(200):  # hang guard only: the close is already under way
        if not to_jump():
            break
        await asyncio.sleep(0.05)
    assert to_jump() == []


async def test_a_missing_identity_file_in_the_config_is_passed_over_as_ssh_does(device):
    write_ssh_config(entry("board", device, "IdentityFile ~/.ssh/gone"))
    trust(device)
    assert await run_on(SSHTarget(host="board")) == "ok\n"


async def test_a_missing_identity_file_in_the_profile_is_a_usage_error(device, tmp_path):
    write_ssh_config(entry("board", device))
    trust(device)
    with pytest.raises(UsageError, match=r"device\.identity_file .*/nope does not exist"):
        await SSHTransport(SSHTarget(host="board", identity_file=str(tmp_path / "nope"))).connect()


async def test_a_host_key_alias_is_filed_under_the_alias(device):
    write_ssh_config(entry("board", device, "HostKeyAlias board-key"))
    assert await run_on(SSHTarget(host="board", accept_new_host_key=True)) == "ok\n"
    line = (home_ssh_dir() / "known_hosts").read_text()
    assert line == "board-key " + " ".join(device.host_key_line.split()[1:]) + "\n"
    assert await run_on(SSHTarget(host="board")) == "ok\n"


async def test_the_config_cannot_forward_the_agent_or_ask_for_a_terminal(
    device, tmp_path, monkeypatch
):
    socket_path = tmp_path / "agent.sock"
    agent = subprocess.Popen(["ssh-agent", "-D", "-a", str(socket_path)], stdout=subprocess.DEVNULL)
    try:
        for _ in range(200):  # hang guard: the agent creates its socket at once
            if socket_path.exists():
                break
            await asyncio.sleep(0.05)
        monkeypatch.setenv("SSH_AUTH_SOCK", str(socket_path))
        write_ssh_config(entry("board", device, "ForwardAgent yes", "RequestTTY force"))
        trust(device)
        said = await run_on(SSHTarget(host="board"), 'echo "${SSH_AUTH_SOCK:-no agent}"; tty')
    finally:
        agent.terminate()
        agent.wait()
    assert said == "no agent\nnot a tty\n"


async def test_a_ciphers_line_is_left_to_choose_the_cipher(device):
    write_ssh_config(
        entry("board", device, "Ciphers chacha20-poly1305@openssh.com") + entry("plain", device)
    )
    trust(device)
    chosen = {}
    for alias in ("board", "plain"):
        transport = SSHTransport(SSHTarget.from_profile(DeviceProfile(host=alias)))
        await transport.connect()
        try:
            chosen[alias] = transport._connection.get_extra_info("send_cipher")
        finally:
            await transport.close()
    assert chosen == {"board": "chacha20-poly1305@openssh.com", "plain": "aes128-gcm@openssh.com"}


async def test_through_a_jump_host_the_first_hops_socket_is_read_in_bursts(device, jump):
    write_ssh_config(
        BATCH
        + entry("board", device, "ProxyJump gw", f"UserKnownHostsFile {trust(device)}")
        + entry("gw", jump, f"UserKnownHostsFile {trust(jump, name='gw_hosts')}")
    )
    transport = SSHTransport(SSHTarget(host="board"))
    await transport.connect()
    try:
        # The device's own connection reads from an SSH channel of the jump host's: only
        # the jump host's connection has a socket to leave unread.
        (reads,) = route_reads(transport._connection)
        stream = await transport.open_stream("for i in 1 2 3; do echo $i; sleep 0.02; done")
        received = b""
        while chunk := await stream.read():
            received += chunk
        assert received == b"1\n2\n3\n"
        assert reads.holds > 0
    finally:
        await transport.close()

"""An alias resolves as OpenSSH resolves it: qtop's answer against ``ssh -G`` for the same
``~/.ssh/config`` in a private HOME, and the errors a bad config gets."""

import os
from pathlib import Path

import pytest

from qtop.errors import UsageError
from qtop.transport.ssh import SSHTarget, resolve_target
from qtop.transport.ssh_config import Hop, HostRequest, parse_jumps, resolve

from .helpers import SSH, config_line, home_ssh_dir, ssh_dash_g, write_ssh_config

needs_ssh = pytest.mark.skipif(not os.path.exists(SSH), reason=f"{SSH} is not installed")

CONFIG = """\
Host board
  HostName %h.lab.example
  Port 2222
  User alice
  IdentityFile ~/.ssh/board_key
  IdentityFile ~/.ssh/second_key
  UserKnownHostsFile ~/.ssh/known_hosts.d/%k %d/.ssh/lab_%h_%p_%r_%n
  ProxyJump gw
Host gw
  HostName 10.1.2.3
  User gwuser
  Port 2200
  UserKnownHostsFile ~/.ssh/gw_hosts
Host chain
  HostName chain.lab.example
  ProxyJump ssh://bob@gw:2201,gw2
Host cmd-first
  ProxyCommand nc lab.example 22
  ProxyJump gw
Host jump-first
  ProxyJump gw
  ProxyCommand nc lab.example 22
Host jump-none-then-cmd
  ProxyJump none
  ProxyCommand nc lab.example 22
Host cmd-none-then-jump
  ProxyCommand none
  ProxyJump gw
Host jump-none-then-jump
  ProxyJump none
  ProxyJump gw
Host no-check
  UserKnownHostsFile none
Host aliased
  HostKeyAlias board-key
  UserKnownHostsFile ~/.ssh/%k_hosts
Match originalhost matched
  User matcher
  Port 2022
Host *.wild
  User wild
Match all
Include {home}/.ssh/conf.d/*.conf
Host *
  IdentitiesOnly yes
  GlobalKnownHostsFile ~/.ssh/global_hosts
"""

INCLUDED = "Host included\n  HostName inc.lab.example\n  Port 2023\n"


@pytest.fixture
def lab_config():
    write_ssh_config(INCLUDED, "conf.d/lab.conf")
    return write_ssh_config(CONFIG.format(home=os.environ["HOME"]))


def as_ssh_prints(request: HostRequest) -> dict[str, str]:
    """qtop's resolution, keyed and spelled as ``ssh -G`` prints it."""
    host = resolve(request)
    values = {
        "hostname": host.hostname,
        "port": str(host.port),
        "user": host.user,
        "userknownhostsfile": " ".join(host.known_hosts) or "none",
        "globalknownhostsfile": " ".join(host.global_known_hosts),
    }
    if host.identity_files:
        values["identityfile"] = " ".join(host.identity_files)
    if host.host_key_alias:
        values["hostkeyalias"] = host.host_key_alias
    if host.proxy_command:
        values["proxycommand"] = host.proxy_command
    return values


def ssh_resolves(alias: str, *args: str) -> dict[str, str]:
    printed = ssh_dash_g(alias, *args)
    wanted = ["hostname", "port", "user", "userknownhostsfile", "globalknownhostsfile"]
    wanted += ["hostkeyalias", "proxycommand"]
    if not printed["identityfile"].startswith(f"{os.environ['HOME']}/.ssh/id_rsa"):
        wanted.append("identityfile")  # not ssh's list of default keys
    return {key: printed[key] for key in wanted if key in printed}


@needs_ssh
@pytest.mark.parametrize(
    ("alias", "ssh_args", "overrides"),
    [
        ("board", (), {}),
        ("board", ("-l", "carol", "-p", "2999"), {"user": "carol", "port": 2999}),
        ("gw", (), {}),
        ("gw", ("-l", "bob", "-p", "2201"), {"user": "bob", "port": 2201}),
        ("chain", (), {}),
        ("aliased", (), {}),
        ("no-check", (), {}),
        ("matched", (), {}),
        ("x.wild", (), {}),
        ("included", (), {}),
        ("cmd-first", (), {}),
        ("jump-none-then-cmd", (), {}),
        ("unlisted.example", (), {}),
    ],
)
def test_an_alias_resolves_as_ssh_dash_g_says(lab_config, alias, ssh_args, overrides):
    assert as_ssh_prints(HostRequest(alias, **overrides)) == ssh_resolves(alias, *ssh_args)


@needs_ssh
@pytest.mark.parametrize(
    "alias",
    [
        "board",
        "chain",
        "cmd-first",
        "jump-first",
        "jump-none-then-cmd",
        "cmd-none-then-jump",
        "jump-none-then-jump",
    ],
)
def test_proxy_jump_and_proxy_command_exclude_each_other_as_in_ssh(lab_config, alias):
    printed = ssh_dash_g(alias)
    host = resolve(HostRequest(alias))
    assert host.jump_hosts == parse_jumps(printed.get("proxyjump", "none"), "ssh -G")
    assert host.proxy_command == printed.get("proxycommand")


@needs_ssh
def test_each_jump_host_is_an_alias_resolved_as_ssh_dash_j_would(lab_config):
    chain = resolve(HostRequest("chain"))
    # 'ProxyJump ssh://bob@gw:2201,gw2': gw2 is reached through bob@gw:2201 (ssh -J),
    # and bob@gw:2201 is gw's own entry with the user and port of the hop.
    assert [host.alias for host in chain.route()] == ["gw", "gw2", "chain"]
    last_hop, first_hop = chain.via, chain.via.via
    assert last_hop.jump_hosts == (Hop("gw", "bob", 2201),)
    assert as_ssh_prints(last_hop.request) == ssh_resolves("gw2", "-J", "bob@gw:2201")
    assert as_ssh_prints(first_hop.request) == ssh_resolves("gw", "-l", "bob", "-p", "2201")
    assert first_hop.known_hosts == (f"{home_ssh_dir()}/gw_hosts",)


def test_an_alias_resolves_from_home_ssh_config_with_no_profile_values(lab_config):
    device = resolve_target(SSHTarget(host="board"))
    home = os.environ["HOME"]
    assert (device.hostname, device.port, device.user) == ("board.lab.example", 2222, "alice")
    assert device.identity_files == (f"{home}/.ssh/board_key", f"{home}/.ssh/second_key")
    assert device.known_hosts == (
        f"{home}/.ssh/known_hosts.d/board",
        f"{home}/.ssh/lab_board.lab.example_2222_alice_board",
    )
    assert device.known_hosts_origin == config_line(lab_config, "UserKnownHostsFile ~/.ssh/known")
    assert device.via.alias == "gw"
    assert (device.via.hostname, device.via.port, device.via.user) == ("10.1.2.3", 2200, "gwuser")
    assert device.route_origin == config_line(lab_config, "ProxyJump gw")


def test_profile_values_win_over_the_config(lab_config, tmp_path):
    target = SSHTarget(
        host="board",
        port=2999,
        user="carol",
        identity_file=str(tmp_path / "key"),
        known_hosts=str(tmp_path / "known"),
        jump_host="none",
    )
    device = resolve_target(target)
    assert (device.hostname, device.port, device.user) == ("board.lab.example", 2999, "carol")
    assert device.identity_files == (str(tmp_path / "key"),)
    assert device.known_hosts == (str(tmp_path / "known"),)
    assert device.via is None and device.proxy_command is None
    through = resolve_target(SSHTarget(host="board", jump_host="carol@included:2024"))
    assert through.via.request == HostRequest(
        "included", user="carol", port=2024, jumps_origin="device.jump_host in the profile"
    )
    assert (through.via.hostname, through.via.port) == ("inc.lab.example", 2024)


def test_the_system_wide_config_is_read_after_the_users(monkeypatch, tmp_path):
    system = tmp_path / "ssh_config"
    system.write_text(
        "Host board\n  User from-system\n  Port 2300\nHost *\n  HostName sys.example\n"
    )
    monkeypatch.setattr("qtop.transport.ssh_config.SYSTEM_CONFIG", str(system))
    write_ssh_config("Host board\n  Port 2222\n")
    device = resolve(HostRequest("board"))
    assert (device.hostname, device.port, device.user) == ("sys.example", 2222, "from-system")


def test_an_include_relative_to_home_ssh_is_followed():
    write_ssh_config("Host board\n  HostName included.example\n", "lab/boards")
    write_ssh_config("Include lab/*\n")
    assert resolve(HostRequest("board")).hostname == "included.example"


def test_a_jump_host_that_jumps_through_itself_is_refused(lab_config):
    config = write_ssh_config("Host board\n  HostName 10.0.0.2\nHost *\n  ProxyJump gw\n")
    with pytest.raises(UsageError) as refused:
        resolve(HostRequest("board"))
    assert "the jump hosts of board loop (board -> gw -> gw)" in str(refused.value)
    assert config_line(config, "ProxyJump gw") in str(refused.value)
    assert "Host * !gw" in refused.value.fix


def test_the_same_jump_host_twice_in_one_proxy_jump_is_not_a_loop():
    write_ssh_config("Host board\n  ProxyJump gw,gw\nHost gw\n  HostName 10.0.0.1\n")
    route = resolve(HostRequest("board")).route()
    assert [(host.alias, host.hostname) for host in route] == [
        ("gw", "10.0.0.1"),
        ("gw", "10.0.0.1"),
        ("board", "board"),
    ]


@pytest.mark.parametrize(
    ("text", "hops"),
    [
        ("gw", (Hop("gw"),)),
        ("bob@gw:2201,gw2", (Hop("gw", "bob", 2201), Hop("gw2"))),
        ("ssh://bob@gw:2201/", (Hop("gw", "bob", 2201),)),
        ("[fe80::1]:2222,me@[::1]", (Hop("fe80::1", None, 2222), Hop("::1", "me"))),
        ("fe80::1", (Hop("fe80::1"),)),
        ("a@b@gw", (Hop("gw", "a@b"),)),
        ("None", ()),
    ],
)
def test_proxy_jump_values_parse_as_openssh_writes_them(text, hops):
    assert parse_jumps(text, "here") == hops


@pytest.mark.parametrize("text", ["bob@", "gw:port", "gw:0", "gw,,gw2", "[::1", "gw:99999"])
def test_a_bad_proxy_jump_names_its_line(text):
    config = write_ssh_config(f"Host board\n  ProxyJump {text}\n")
    with pytest.raises(UsageError) as refused:
        resolve(HostRequest("board"))
    assert f"{config_line(config, 'ProxyJump')}: ProxyJump {text}:" in str(refused.value)
    assert "[user@]host[:port]" in refused.value.fix


def test_a_bad_profile_jump_host_names_the_profile_key():
    with pytest.raises(UsageError) as refused:
        resolve_target(SSHTarget(host="board", jump_host="gw:x"))
    assert refused.value.problem == (
        "device.jump_host in the profile: ProxyJump gw:x: 'gw:x' is not [user@]host[:port]"
    )


def test_a_config_asyncssh_cannot_parse_names_its_line():
    write_ssh_config("Host board\n  Port twenty-two\n")
    with pytest.raises(UsageError, match=r"~/\.ssh/config line 2: Invalid Port integer value"):
        resolve(HostRequest("board"))


def test_an_unknown_token_in_user_known_hosts_file_names_its_line():
    config = write_ssh_config("Host board\n  UserKnownHostsFile ~/.ssh/%z\n")
    with pytest.raises(UsageError) as refused:
        resolve(HostRequest("board"))
    assert f"{config_line(config, '%z')}: UserKnownHostsFile ~/.ssh/%z: unknown token %z" in str(
        refused.value
    )


def test_an_explicit_config_list_replaces_home_ssh_config(tmp_path):
    write_ssh_config("Host board\n  HostName from-home.example\n")
    other = tmp_path / "other_config"
    other.write_text("Host board\n  HostName from-other.example\n")
    assert resolve(HostRequest("board"), [str(other)]).hostname == "from-other.example"
    assert resolve(HostRequest("board"), []).hostname == "board"
    assert Path(resolve(HostRequest("board")).config_files[0]) == home_ssh_dir() / "config"

"""device.transport, serial, adb_server and --adb [SERIAL]: how a profile picks its transport."""

from __future__ import annotations

import pytest

from qtop.cli import build_parser, main
from qtop.errors import UsageError
from qtop.live.overrides import apply_overrides
from qtop.profiles import ProfileError, check_profile_text, load_profile_text
from qtop.transport.adb import AdbTarget, AdbTransport, parse_devices, parse_server
from qtop.transport.factory import make_transport
from qtop.transport.local import LocalTransport
from qtop.transport.ssh import SSHTransport

PROFILE = """\
name: glasses
device: {host: glasses, port: 2222, serial: 1a2b3c4d}
run: {command: ./bench, iterations: 40}
"""


def overridden(*options: str, text: str = PROFILE, warnings: list | None = None):
    args = build_parser().parse_args(["run", "glasses.yaml", *options])
    on_warning = warnings.append if warnings is not None else None
    return apply_overrides(load_profile_text(text, "glasses.yaml"), args, on_warning)


def test_ssh_is_the_default_and_the_adb_keys_wait_for_adb():
    checked = check_profile_text(PROFILE, "glasses.yaml")
    # serial in an SSH profile is not a mistake: --adb uses it.
    assert checked.issues == ()
    assert checked.profile.device.transport == "ssh"
    assert isinstance(make_transport(checked.profile), SSHTransport)


def test_ssh_keys_in_an_adb_profile_are_a_warning_naming_each():
    text = PROFILE.replace("serial: 1a2b3c4d", "transport: adb")
    checked = check_profile_text(text, "glasses.yaml")
    assert checked.profile is not None
    assert [(issue.key, issue.severity) for issue in checked.issues] == [
        ("device.host", "warning"),
        ("device.port", "warning"),
    ]
    assert checked.issues[0].message.endswith("reaches the device over adb: it is ignored")


def test_adb_without_a_serial_takes_the_profiles_and_clears_the_ssh_keys():
    warnings: list = []
    profile = overridden("--adb", warnings=warnings)
    device = profile.device
    assert (device.transport, device.serial) == ("adb", "1a2b3c4d")
    assert (device.host, device.port) == (None, None)
    assert warnings == []
    transport = make_transport(profile)
    assert isinstance(transport, AdbTransport)
    assert transport.target.serial == "1a2b3c4d"
    assert transport.description == "adb 1a2b3c4d"


def test_adb_with_a_serial_is_checked_like_the_key():
    assert overridden("--adb", "192.168.1.20:5555").device.serial == "192.168.1.20:5555"
    with pytest.raises(ProfileError) as refused:
        overridden("--adb", "a b")
    issue = refused.value.issues[0]
    assert (issue.key, issue.message) == ("--adb", "'a b' is not an adb serial")


def test_an_adb_server_key_is_host_and_port_and_names_the_server():
    text = PROFILE.replace("serial: 1a2b3c4d", "transport: adb, adb_server: '127.0.0.1:15037'")
    text = text.replace("host: glasses, port: 2222, ", "")
    profile = load_profile_text(text, "glasses.yaml")
    target = AdbTarget.from_profile(profile.device)
    assert (target.server_host, target.server_port) == ("127.0.0.1", 15037)
    assert target.argv("shell", serial="S") == [
        "adb", "-H", "127.0.0.1", "-P", "15037", "-s", "S", "shell",
    ]  # fmt: skip
    assert AdbTarget().argv("devices") == ["adb", "devices"]
    assert parse_server("[::1]:5037") == ("::1", 5037)
    with pytest.raises(UsageError, match="is not host:port"):
        parse_server("5037")


def test_host_and_local_do_not_mix_with_adb(capsys):
    profile = overridden("--adb")
    with pytest.raises(UsageError, match="--host evk names an SSH host"):
        make_transport(profile, host="evk")
    assert isinstance(make_transport(profile, local=True), LocalTransport)
    assert main(["run", "glasses.yaml", "--adb", "--local", "--no-record"]) == 2
    assert "--local and --adb both" in capsys.readouterr().err


def test_the_device_list_is_read_as_adb_prints_it():
    text = (
        "* daemon not running; starting now at tcp:5037\n* daemon started successfully\n"
        "List of devices attached\n"
        "1a2b3c4d               device usb:1-1 product:x model:Glasses device:g transport_id:3\n"
        "192.168.1.20:5555      offline product:y model:Phone device:p transport_id:4\n"
        "emulator-5554\tunauthorized\n\n"
    )
    found = parse_devices(text)
    assert [(d.serial, d.state) for d in found] == [
        ("1a2b3c4d", "device"),
        ("192.168.1.20:5555", "offline"),
        ("emulator-5554", "unauthorized"),
    ]
    assert found[0].describe() == "1a2b3c4d (device, model:Glasses device:g)"


async def test_no_adb_client_is_a_usage_error_saying_how_to_get_one():
    transport = AdbTransport(AdbTarget(adb="qtop-no-such-adb"))
    with pytest.raises(UsageError) as refused:
        await transport.connect()
    assert refused.value.problem == "the adb client (qtop-no-such-adb) is not on PATH"
    assert "apt install adb" in refused.value.fix


def test_device_text_in_the_list_cannot_carry_control_characters():
    found = parse_devices("List of devices attached\nabc\x1b[31m device model:x\x07y\n")
    assert found[0].serial == "abc?[31m" and found[0].details == "model:x?y"

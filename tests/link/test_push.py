"""run.push over every transport: the first run copies, the next skips, a change is copied."""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from adb_support import adb_sim, needs_adb

from qtop.device.push import plan_push, profile_base, push
from qtop.errors import RunFailed, UsageError
from qtop.profiles import PushItem, load_profile, load_profile_text
from qtop.transport.adb import AdbTarget, AdbTransport
from qtop.transport.base import Transport
from qtop.transport.command import quote
from qtop.transport.local import LocalTransport
from qtop.transport.ssh import SSHTarget, SSHTransport

from .helpers import SSHD, start_sshd

KINDS = [
    "local",
    "ssh",
    pytest.param("sshd", marks=pytest.mark.skipif(not os.path.exists(SSHD), reason="no sshd")),
    pytest.param("adb", marks=needs_adb),
]


METHODS = {
    "local": "through the shell",
    "ssh": "SFTP",
    "sshd": "through the shell",
    "adb": "adb push",
}


@contextlib.asynccontextmanager
async def connected(kind: str, tmp_path: Path) -> AsyncIterator[Transport]:
    """A transport to this machine of each kind: SFTP (sim), cat (sshd, local), adb push."""
    if kind == "local":
        yield LocalTransport()
        return
    if kind == "sshd":
        server = start_sshd(tmp_path / "sshd")
        try:
            transport: Transport = SSHTransport(
                SSHTarget(
                    host=server.host,
                    port=server.port,
                    user=server.user,
                    identity_file=str(server.client_key),
                    known_hosts=str(server.known_hosts),
                    ssh_config=(),
                )
            )
            await transport.connect()
            yield transport
            await transport.close()
        finally:
            server.stop()
        return
    async with adb_sim(tmp_path / "sim", variant="glasses") as sim:
        if kind == "adb":
            transport = AdbTransport(AdbTarget(server_host=sim.adb.host, server_port=sim.adb.port))
        else:
            overrides = sim.device_overrides()
            transport = SSHTransport(
                SSHTarget(
                    host=overrides["host"],
                    port=overrides["port"],
                    user=overrides["user"],
                    identity_file=overrides["identity_file"],
                    known_hosts=overrides["known_hosts"],
                    ssh_config=(),
                )
            )
        await transport.connect()
        yield transport
        await transport.close()


def payload(root: Path) -> Path:
    (root / "ctx" / "libs").mkdir(parents=True)
    (root / "ctx" / "prismml_w8a8.bin").write_bytes(os.urandom(200_000))
    (root / "ctx" / "libs" / "libQnnHtp.so").write_bytes(os.urandom(50_000))
    (root / "ctx" / "it's a file.txt").write_text("quoted name\n")
    (root / "inputs.txt").write_text("in.raw\n")
    return root


def profile_pushing(tmp_path: Path, device: Path) -> object:
    text = (
        "name: pushes\n"
        "run:\n"
        "  command: echo run\n"
        "  iterations: 40\n"
        "  push:\n"
        f"    - {{from: ctx/, to: '{device}/prismml/'}}\n"
        f"    - {{from: inputs.txt, to: '{device}/prismml/'}}\n"
        f"    - {{from: inputs.txt, to: '{device}/other/renamed.txt'}}\n"
    )
    path = tmp_path / "pushes.yaml"
    path.write_text(text)
    return load_profile(path)


def names(files) -> list[str]:
    return sorted(Path(f.remote).name for f in files)


@pytest.mark.parametrize("kind", KINDS)
async def test_the_first_push_copies_the_next_skips_and_a_change_is_copied(tmp_path, kind):
    local = payload(tmp_path)
    device = tmp_path / "device"
    profile = profile_pushing(tmp_path, device)
    async with connected(kind, tmp_path) as transport:
        first = await push(transport, profile)
        assert names(first.copied) == [
            "inputs.txt", "it's a file.txt", "libQnnHtp.so", "prismml_w8a8.bin", "renamed.txt",
        ]  # fmt: skip
        assert first.skipped == [] and first.algorithm == "sha256sum"
        # The transport's own channel where there is one; sshd here offers no SFTP subsystem.
        assert first.method == METHODS[kind]
        for name in ("prismml_w8a8.bin", "it's a file.txt"):
            assert (device / "prismml" / name).read_bytes() == (local / "ctx" / name).read_bytes()
        assert (device / "prismml" / "libs" / "libQnnHtp.so").stat().st_size == 50_000
        assert (device / "other" / "renamed.txt").read_text() == "in.raw\n"

        second = await push(transport, profile)
        assert second.copied == [] and len(second.skipped) == 5
        assert second.summary().startswith("push: 0 file(s) copied (0 B), 5 already on the device")

        (local / "ctx" / "libs" / "libQnnHtp.so").write_bytes(os.urandom(50_000))  # same size
        (device / "prismml" / "prismml_w8a8.bin").write_bytes(b"cut short")  # a partial copy
        third = await push(transport, profile)
        assert names(third.copied) == ["libQnnHtp.so", "prismml_w8a8.bin"]
        assert len(third.skipped) == 3
        lib = device / "prismml" / "libs" / "libQnnHtp.so"
        assert lib.read_bytes() == (local / "ctx" / "libs" / "libQnnHtp.so").read_bytes()
        assert not list(device.rglob("*.qtop-part"))
        # Nothing on the device is ever deleted.
        (local / "inputs.txt").unlink()
        shutil.rmtree(local / "ctx" / "libs")
        (local / "inputs.txt").write_text("in.raw\n")
        assert (await push(transport, profile)).copied == []
        assert lib.exists()


class RestrictedPath(LocalTransport):
    """This machine with only some tools on PATH (a device without sha256sum, say)."""

    def __init__(self, bin_dir: Path) -> None:
        super().__init__()
        self.bin_dir = bin_dir

    async def run(self, command, stdin=None, timeout=None):
        prefix = f"PATH={quote(str(self.bin_dir))}; export PATH; "
        return await super().run(prefix + command, stdin, timeout)


def tools(directory: Path, *names: str) -> Path:
    directory.mkdir()
    for name in ("sh", "cat", "mv", "mkdir", "stat", "wc", *names):
        os.symlink(shutil.which(name), directory / name)
    return directory


async def test_a_device_with_only_md5sum_is_compared_by_md5(tmp_path):
    payload(tmp_path)
    profile = profile_pushing(tmp_path, tmp_path / "device")
    transport = RestrictedPath(tools(tmp_path / "bin", "md5sum"))
    assert (await push(transport, profile)).algorithm == "md5sum"
    again = await push(transport, profile)
    assert (again.algorithm, again.copied) == ("md5sum", [])
    assert "compared by size and md5" in again.summary()


async def test_a_device_with_no_hash_tool_gets_every_file_every_time(tmp_path):
    payload(tmp_path)
    profile = profile_pushing(tmp_path, tmp_path / "device")
    transport = RestrictedPath(tools(tmp_path / "bin"))
    await push(transport, profile)
    again = await push(transport, profile)
    assert len(again.copied) == 5
    assert "neither sha256sum nor md5sum: every file was copied" in again.summary()


async def test_a_directory_where_a_file_should_go_is_an_error_naming_it(tmp_path):
    payload(tmp_path)
    device = tmp_path / "device"
    (device / "other" / "renamed.txt").mkdir(parents=True)
    with pytest.raises(RunFailed, match=r"renamed\.txt exists on the device and is not a file"):
        await push(LocalTransport(), profile_pushing(tmp_path, device))


def test_plans_refuse_what_no_device_could_hold(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "bad\nname").write_text("x")
    with pytest.raises(UsageError, match="control character"):
        plan_push([PushItem(source="a", to="/d/")], tmp_path)
    with pytest.raises(UsageError, match=r"'missing/': no such file or directory"):
        plan_push([PushItem(source="missing/", to="/d/")], tmp_path)
    (tmp_path / "one").write_text("1")
    (tmp_path / "two").write_text("2")
    with pytest.raises(UsageError, match="would both be copied to /d/x"):
        plan_push([PushItem(source="one", to="/d/x"), PushItem(source="two", to="/d/x")], tmp_path)


def test_a_relative_from_is_taken_from_the_profiles_directory(tmp_path):
    (tmp_path / "profiles").mkdir()
    path = tmp_path / "profiles" / "p.yaml"
    path.write_text("run: {command: x, iterations: 40, push: [{from: ../art, to: /d/}]}\n")
    assert profile_base(load_profile(path)) == tmp_path / "profiles"
    text = load_profile_text("run: {command: x, iterations: 40}\n", "<profile>")
    assert profile_base(text) == Path(".")

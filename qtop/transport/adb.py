"""The device over adb: the ``adb`` client binary, driven through asyncio subprocesses.

Each command is one ``adb -s SERIAL shell -T -- COMMAND``: shell protocol v2
(Android 7+) gives binary-clean stdin with an explicit close, separate
stdout and stderr, and the exit status. The client reports exit status 0
when the link drops before the exit packet, so ``run`` wraps the command to
print a per-call marker with the status on stderr: no marker, no result
(``LinkDown``). A stream is one such process read as it comes; it ends when
the device goes (the server closes its sockets) or the server dies.

Silent drops (adb over Wi-Fi) end nothing: while a command or a stream is
open and no stream has moved for ``keepalive_interval``, a round trip
(``shell true``) must answer within ``interval x count``, or the link counts
as lost and every process is ended. ``connect`` waits for the device
(``wait-for-device``, bounded by ``connect_timeout``), runs ``adb connect``
first for a serial that is ``host:port``, and checks the device answers.
Why the binary and not a Python client: see the README, "adb".
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import secrets
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from qtop.errors import RunFailed, UsageError
from qtop.profiles import DeviceProfile
from qtop.transport.base import CommandResult, LinkDown
from qtop.transport.local import reap_process, spawn_exec

ADB_SERIAL_ENV = "ANDROID_SERIAL"
TCP_SERIAL = re.compile(r"^[^\s:]+:\d{1,5}\Z")
READY = "device"
# Enough of the adb client's stderr to say why a stream ended.
_ERROR_TAIL = 2048


@dataclass(frozen=True, slots=True)
class AdbTarget:
    """Which device and which adb server; profile values, else adb's own defaults."""

    serial: str | None = None
    server_host: str | None = None
    server_port: int | None = None
    connect_timeout_s: float = 10.0
    keepalive_interval_s: float = 2.0
    keepalive_count_max: int = 3
    adb: str = "adb"

    @classmethod
    def from_profile(cls, device: DeviceProfile, serial: str | None = None) -> AdbTarget:
        host, port = parse_server(device.adb_server) if device.adb_server else (None, None)
        return cls(
            serial=serial or device.serial,
            server_host=host,
            server_port=port,
            connect_timeout_s=device.connect_timeout_s,
            keepalive_interval_s=device.keepalive_interval_s,
            keepalive_count_max=device.keepalive_count_max,
        )

    @property
    def server(self) -> str:
        if self.server_host is None:
            port = os.environ.get("ANDROID_ADB_SERVER_PORT", "5037")
            return f"the local adb server (port {port})"
        return f"the adb server at {self.server_host}:{self.server_port}"

    def argv(self, *args: str, serial: str | None = None) -> list[str]:
        """An adb command line. With an explicit server, ``-H`` keeps the client from
        starting one of its own: it starts servers only for the default local one."""
        argv = [self.adb]
        if self.server_host is not None:
            argv += ["-H", self.server_host, "-P", str(self.server_port)]
        if serial is not None:
            argv += ["-s", serial]
        return argv + list(args)


def parse_server(text: str) -> tuple[str, int]:
    """``host:port`` (or ``[v6]:port``) of an adb server."""
    host, colon, port = text.rpartition(":")
    if not colon or not port.isdigit() or not 0 < int(port) < 65536 or not host:
        raise UsageError(
            f"device.adb_server: {text!r} is not host:port",
            "write e.g. 127.0.0.1:5037 (the adb client's default server)",
        )
    return host.strip("[]"), int(port)


@dataclass(frozen=True, slots=True)
class Attached:
    serial: str
    state: str
    details: str

    def describe(self) -> str:
        return f"{self.serial} ({self.state}{', ' + self.details if self.details else ''})"


def parse_devices(text: str) -> list[Attached]:
    """The devices of ``adb devices -l`` (the header and daemon chatter skipped)."""
    found = []
    for line in text.splitlines():
        fields = line.split()
        if len(fields) < 2 or line.startswith(("List of devices", "*", "adb")):
            continue
        details = " ".join(f for f in fields[2:] if f.startswith(("model:", "device:")))
        found.append(Attached(_printable(fields[0]), _printable(fields[1]), _printable(details)))
    return found


def _printable(text: str) -> str:
    """Text from the device or the adb client, safe to show: no control characters."""
    return "".join(c if c.isprintable() else "?" for c in text)[:400]


def _listing(devices: Sequence[Attached]) -> str:
    return ", ".join(d.describe() for d in devices) or "none"


def _last_error(stderr: bytes) -> str:
    lines = [line.strip() for line in stderr.decode(errors="replace").splitlines() if line.strip()]
    return _printable(lines[-1]) if lines else ""


def _state_fix(state: str) -> str:
    if state == "unauthorized":
        return (
            "unlock the device and accept the 'Allow USB debugging?' prompt "
            "(adb devices must list it as 'device')"
        )
    return "replug the device, or run 'adb reconnect'; adb devices must list it as 'device'"


class AdbStream:
    """One ``adb shell`` process whose stdout is read as it comes."""

    def __init__(self, process: asyncio.subprocess.Process, transport: AdbTransport) -> None:
        self._process = process
        self._transport = transport
        self._errors = bytearray()
        self._stderr_task = asyncio.ensure_future(self._keep_stderr())

    async def _keep_stderr(self) -> None:
        assert self._process.stderr is not None
        while chunk := await self._process.stderr.read(4096):
            self._errors = (self._errors + chunk)[-_ERROR_TAIL:]

    async def read(self, size: int = 65536) -> bytes:
        assert self._process.stdout is not None
        data = await self._process.stdout.read(size)
        if data:
            self._transport.moved()
            return data
        if self._transport.lost_reason is not None:
            raise LinkDown(self._transport.lost_reason)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._stderr_task), 1.0)
        error = _last_error(bytes(self._errors))
        if error:
            raise LinkDown(f"{self._transport.target_name}: {error}")
        gone = await self._transport.why_gone()
        if gone is not None:
            raise LinkDown(gone)
        return b""

    async def close(self) -> None:
        self._transport.forget(self._process)
        await reap_process(self._process)
        self._stderr_task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._stderr_task


class AdbTransport:
    """The device over adb."""

    kind = "adb"

    def __init__(self, target: AdbTarget) -> None:
        self.target = target
        self.serial = target.serial
        self.description = f"adb {self.serial or '(the only device attached)'}"
        self.lost_reason: str | None = None
        self._connected = False
        self._ever_connected = False
        self._processes: set[asyncio.subprocess.Process] = set()
        self._watcher: asyncio.Task[None] | None = None
        self._moved = False
        self._binary: str | None = None

    @property
    def connected(self) -> bool:
        return self._connected and self.lost_reason is None

    @property
    def target_name(self) -> str:
        return f"adb device {self.serial}" if self.serial else "adb"

    # --- processes --------------------------------------------------------------

    def _adb(self) -> str:
        if self._binary is None:
            found = shutil.which(self.target.adb)
            if found is None:
                raise UsageError(
                    f"the adb client ({self.target.adb}) is not on PATH",
                    "install Android platform-tools (Debian/Ubuntu: apt install adb) and make "
                    "sure 'adb version' works",
                )
            self._binary = found
        return self._binary

    async def _spawn(self, argv: list[str], stdin: bool) -> asyncio.subprocess.Process:
        process = await spawn_exec(
            self._adb(),
            *argv[1:],
            stdin=asyncio.subprocess.PIPE if stdin else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            # A process group of its own: Ctrl-C in the terminal is qtop's to handle.
            start_new_session=True,
        )
        self._processes.add(process)
        return process

    def forget(self, process: asyncio.subprocess.Process) -> None:
        self._processes.discard(process)

    def moved(self) -> None:
        self._moved = True

    async def _call(
        self,
        argv: list[str],
        stdin: bytes | None = None,
        timeout: float | None = None,
    ) -> tuple[int, bytes, bytes]:
        """Run one adb client command to its end: (exit status, stdout, stderr)."""
        try:
            process = await self._spawn(argv, stdin is not None)
        except OSError as exc:
            raise LinkDown(f"cannot run {self.target.adb}: {exc.strerror}") from None
        try:
            stdout, stderr = await asyncio.wait_for(process.communicate(stdin), timeout)
        except TimeoutError:
            raise LinkDown(
                f"{self.target_name}: no answer within {timeout:g} s (is the link down?)"
            ) from None
        finally:
            self.forget(process)
            await reap_process(process)
        assert process.returncode is not None
        return process.returncode, stdout, stderr

    def _shell_argv(self, command: str) -> list[str]:
        return self.target.argv("shell", "-T", "--", command, serial=self.serial)

    # --- the Transport protocol -----------------------------------------------

    async def connect(self) -> None:
        await self._drop()
        self.lost_reason = None
        try:
            await self._attach()
        except LinkDown as exc:
            if self._ever_connected:
                raise
            raise RunFailed(
                str(exc),
                "check that adb devices lists the device as 'device' (USB debugging on, the "
                "prompt accepted), or set device.serial / --adb SERIAL",
            ) from None
        self._connected = True
        self._ever_connected = True
        self._watcher = asyncio.ensure_future(self._watch())

    async def _attach(self) -> None:
        devices = await self._devices()
        serial = self.serial or self._only_device(devices)
        self.serial = serial
        self.description = f"adb {serial}"
        listed = {device.serial: device for device in devices}
        if serial not in listed and TCP_SERIAL.match(serial):
            await self._tcp_connect(serial)
        state = listed.get(serial)
        if state is None or state.state != READY:
            await self._wait_for_device(serial, devices)
        await self._check_features(serial)
        try:
            await self._round_trip(self.target.connect_timeout_s)
        except LinkDown:
            if TCP_SERIAL.match(serial):
                # A TCP link that died silently stays listed until it is kicked;
                # the next attempt connects afresh.
                with contextlib.suppress(LinkDown):
                    await self._call(
                        self.target.argv("disconnect", serial),
                        timeout=self.target.connect_timeout_s,
                    )
            raise

    async def _devices(self) -> list[Attached]:
        status, out, err = await self._call(
            self.target.argv("devices", "-l"), timeout=self.target.connect_timeout_s
        )
        if status != 0:
            raise LinkDown(
                f"{self.target.server} does not answer: {_last_error(err) or f'status {status}'}"
            )
        return parse_devices(out.decode(errors="replace"))

    def _only_device(self, devices: list[Attached]) -> str:
        from_env = os.environ.get(ADB_SERIAL_ENV)
        if from_env:
            return from_env
        if len(devices) == 1:
            return devices[0].serial
        if not devices:
            raise RunFailed(
                f"no device is attached to {self.target.server} (adb devices lists none)",
                "plug the device in with USB debugging on, or 'adb connect HOST:PORT' for adb "
                "over Wi-Fi; or name it with device.serial / --adb SERIAL",
            )
        raise UsageError(
            f"{len(devices)} devices are attached ({_listing(devices)}) and the profile does "
            "not say which",
            f"set device.serial, pass --adb SERIAL, or set {ADB_SERIAL_ENV}",
        )

    async def _tcp_connect(self, serial: str) -> None:
        status, out, err = await self._call(
            self.target.argv("connect", serial), timeout=self.target.connect_timeout_s
        )
        said = _printable((out + err).decode(errors="replace").strip())
        if status != 0 or "connected to" not in said:
            raise LinkDown(f"adb connect {serial}: {said or f'status {status}'}")

    async def _wait_for_device(self, serial: str, devices: list[Attached]) -> None:
        timeout = self.target.connect_timeout_s
        argv = self.target.argv("wait-for-device", serial=serial)
        try:
            status, _, err = await self._call(argv, timeout=timeout)
        except LinkDown:
            now = await self._devices()
            found = next((d for d in now if d.serial == serial), None)
            if found is not None and found.state != READY:
                raise LinkDown(
                    f"waiting for {serial}: it is '{found.state}' ({_state_fix(found.state)})"
                ) from None
            raise LinkDown(
                f"waiting for device {serial}: not attached after {timeout:g} s "
                f"(adb devices lists: {_listing(now)})"
            ) from None
        if status != 0:
            raise LinkDown(f"waiting for device {serial}: {_last_error(err)}")

    async def _check_features(self, serial: str) -> None:
        status, out, err = await self._call(
            self.target.argv("features", serial=serial), timeout=self.target.connect_timeout_s
        )
        if status != 0:
            raise LinkDown(f"{serial}: {_last_error(err) or 'no feature list'}")
        features = set(re.split(r"[\s,]+", out.decode(errors="replace")))
        if "shell_v2" not in features:
            raise RunFailed(
                f"{serial}: its adbd has no shell protocol v2, so a command's exit status, its "
                "stderr and the end of its input cannot be told apart",
                "qtop needs Android 7 or later on the device (or an adbd with shell_v2)",
            )

    async def _round_trip(self, timeout: float) -> None:
        result = await self.run("echo qtop-ok", timeout=timeout)
        if result.exit_status != 0 or b"qtop-ok" not in result.stdout:
            raise LinkDown(f"{self.target_name}: the device's shell does not answer as expected")

    async def run(
        self, command: str, stdin: bytes | None = None, timeout: float | None = None
    ) -> CommandResult:
        if self.lost_reason is not None:
            raise LinkDown(self.lost_reason)
        marker = f"qtop-exit-{secrets.token_hex(8)}".encode()
        wrapped = f"( {command}\n); printf '%s %s\\n' {marker.decode()} \"$?\" >&2"
        _, stdout, stderr = await self._call(self._shell_argv(wrapped), stdin, timeout)
        self._moved = True
        at = stderr.rfind(marker)
        if at < 0:
            error = _last_error(stderr)
            if error:
                raise LinkDown(f"{self.target_name}: {error}")
            raise LinkDown(
                await self.why_gone() or f"{self.target_name}: the link dropped mid-command"
            )
        exit_text = stderr[at + len(marker) :].split(maxsplit=1)[:1]
        if not exit_text or not exit_text[0].isdigit():
            raise LinkDown(f"{self.target_name}: the command's end was cut off")
        return CommandResult(int(exit_text[0]), stdout, stderr[:at])

    async def open_stream(self, command: str) -> AdbStream:
        if self.lost_reason is not None:
            raise LinkDown(self.lost_reason)
        try:
            process = await self._spawn(self._shell_argv(command), stdin=False)
        except OSError as exc:
            raise LinkDown(f"cannot run {self.target.adb}: {exc.strerror}") from None
        return AdbStream(process, self)

    async def upload(self, pairs: Sequence[tuple[Path, str]]) -> None:
        """Copy local files to device paths with ``adb push`` (their directories must exist).

        Files going into one directory under their own names go in one push.
        """
        if self.lost_reason is not None:
            raise LinkDown(self.lost_reason)
        batches: dict[str, list[str]] = {}
        singles: list[tuple[Path, str]] = []
        for local, remote in pairs:
            directory, _, name = remote.rpartition("/")
            if name == local.name:
                batches.setdefault(directory or "/", []).append(str(local))
            else:
                singles.append((local, remote))
        commands = [[*files, directory + "/"] for directory, files in batches.items()]
        commands += [[str(local), remote] for local, remote in singles]
        for arguments in commands:
            status, out, err = await self._call(
                self.target.argv("push", *arguments, serial=self.serial)
            )
            if status != 0:
                said = _last_error(err) or _last_error(out) or f"status {status}"
                gone = await self.why_gone()
                if gone is not None:
                    raise LinkDown(f"adb push stopped ({said}): {gone}")
                raise RunFailed(
                    f"adb push to {arguments[-1]} failed: {said}",
                    "check that the directory on the device is writable by the shell user",
                )

    async def why_gone(self) -> str | None:
        """Why the device cannot be reached now, as the link events say it; None if it can."""
        if self.lost_reason is not None:
            return self.lost_reason
        try:
            devices = await self._devices()
        except LinkDown as exc:
            return f"{exc}; waiting for it to answer again"
        found = next((d for d in devices if d.serial == self.serial), None)
        if found is None:
            return (
                f"device {self.serial} is no longer attached (adb devices lists: "
                f"{_listing(devices)}); waiting for it to come back"
            )
        if found.state != READY:
            return f"device {self.serial} is '{found.state}'; waiting for it to be 'device' again"
        return None

    # --- liveness -------------------------------------------------------------

    async def _watch(self) -> None:
        interval = self.target.keepalive_interval_s
        limit = interval * self.target.keepalive_count_max
        while True:
            await asyncio.sleep(interval)
            if self._moved or not self._processes:
                self._moved = False
                continue
            try:
                await self._round_trip(limit)
            except LinkDown as exc:
                await self._lose(f"{exc} (no answer within {limit:g} s; the link is down)")
                return
            # The round trip is not the link's own traffic.
            self._moved = False

    async def _lose(self, reason: str) -> None:
        """The link is gone: every adb process ends, so every read and call says so."""
        self.lost_reason = reason
        self._connected = False
        processes, self._processes = list(self._processes), set()
        for process in processes:
            with contextlib.suppress(ProcessLookupError):
                process.kill()

    def abort(self) -> None:
        """Cut every adb process at once (fault injection, like SSHTransport.abort)."""
        self.lost_reason = "the link was cut"
        for process in list(self._processes):
            with contextlib.suppress(ProcessLookupError):
                process.kill()

    async def _drop(self) -> None:
        watcher, self._watcher = self._watcher, None
        if watcher is not None and watcher is not asyncio.current_task():
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher
        processes, self._processes = list(self._processes), set()
        for process in processes:
            await reap_process(process)
        self._connected = False

    async def close(self) -> None:
        await self._drop()

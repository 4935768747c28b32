"""A stand-in for the adb server, so the real ``adb`` client can reach the simulated board.

There is no adbd for a Linux host, so the simulator takes the other side of
the one interface qtop uses: the adb client's smart-socket protocol to the
adb server (``adb -H 127.0.0.1 -P PORT ...``). It answers the host requests
the client sends (``host:version``, ``host:devices[-l]``, ``features``,
``get-state``, ``wait-for-*``, ``host:tport:*``/``host:transport:*``,
``connect``/``disconnect``, ``host:kill``) and serves the device services
adbd would (``shell,v2,...:``, ``exec:``, ``sync:``) against the board,
under an Android-like shell.

Faults: ``unplug``/``replug`` (the device leaves ``adb devices`` and every
connection to it is cut), ``freeze``/``thaw`` (a silent drop: nothing moves,
nothing closes, the server still lists the device), ``drop_network``/
``restore_network`` for a device over TCP (it needs ``adb connect`` again),
and ``kill``/``start`` for the server itself. Loopback only.
"""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field

from qtop.errors import UsageError
from qtop.sim.adb_shell import ShellSession, parse_shell_service
from qtop.sim.adb_sync import SyncSession
from qtop.sim.adb_wire import ProtocolError, fail, okay, read_request
from qtop.sim.sessions import wait_exit
from qtop.sim.ssh_server import check_bind_host

# The adb client compares this with its own and restarts a server that differs;
# 41 (0x29) is what every client since platform-tools 29 expects.
ADB_SERVER_VERSION = 41
DEVICE_FEATURES = ("shell_v2", "cmd", "fixed_push_mkdir")
UNAUTHORIZED = (
    "device unauthorized.\nThis adb server's $ADB_VENDOR_KEYS is not set\n"
    "Try 'adb kill-server' if that seems wrong.\n"
    "Otherwise check for a confirmation dialog on your device."
)
_WAIT_STATES = ("device", "any", "disconnect", "recovery", "rescue", "sideload", "bootloader")


@dataclass(eq=False)
class SimAdbDevice:
    """A device the simulated server knows: what its sessions get, and its link's state."""

    serial: str
    env: Mapping[str, str]
    cwd: str
    shell: str
    features: tuple[str, ...] = DEVICE_FEATURES
    product: str = "qtop_sim"
    model: str = "qtop_simulated_device"
    device: str = "qtopsim"
    over_tcp: bool = False
    state: str = "device"
    attached: bool = True
    network_up: bool = True
    transport_id: int = 0
    connections: set[asyncio.StreamWriter] = field(default_factory=set)
    thawed: asyncio.Event = field(default_factory=asyncio.Event)

    def __post_init__(self) -> None:
        self.thawed.set()

    @property
    def kind(self) -> str:
        return "local" if self.over_tcp else "usb"

    async def reachable(self) -> None:
        """Return once the link moves data (at once unless the device is frozen)."""
        await self.thawed.wait()

    def cut(self) -> None:
        """Every connection to the device ends at once, as when its cable is pulled."""
        for writer in list(self.connections):
            writer.transport.abort()
        self.connections.clear()

    def listing(self, long: bool) -> str:
        if not long:
            return f"{self.serial}\t{self.state}\n"
        where = "" if self.over_tcp else "usb:1-1 "
        return (
            f"{self.serial:<22} {self.state} {where}product:{self.product} model:{self.model} "
            f"device:{self.device} transport_id:{self.transport_id}\n"
        )


class SimAdbServer:
    """The adb server side of the protocol, for simulated devices, on a loopback port."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self.host = check_bind_host(host)
        self.port = port
        self.version = ADB_SERVER_VERSION
        self.devices: dict[str, SimAdbDevice] = {}
        # Every request served, in order (tests count sessions and check what the client sent).
        self.requests: list[str] = []
        self._server: asyncio.AbstractServer | None = None
        self._connections: set[asyncio.StreamWriter] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._changed = asyncio.Event()
        self._next_transport_id = 1

    # --- lifecycle ------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self._server is not None

    async def start(self) -> int:
        """Listen (again, on the same port after the first start)."""
        if self._server is not None:
            return self.port
        try:
            self._server = await asyncio.start_server(
                self._serve, self.host, self.port, reuse_address=True
            )
        except OSError as exc:
            raise UsageError(
                f"the simulated adb server cannot listen on {self.host}:{self.port}: "
                f"{exc.strerror}",
                "pick another --adb-port (or stop whatever holds this one)",
            ) from None
        self.port = self._server.sockets[0].getsockname()[1]
        return self.port

    async def kill(self) -> None:
        """The server dies (``adb kill-server``, a crash): nothing listens, every link is cut."""
        if self._server is not None:
            self._server.close()
            self._server = None
        for writer in list(self._connections):
            writer.transport.abort()
        self._connections.clear()
        for device in self.devices.values():
            device.connections.clear()
        self._notify()
        await asyncio.sleep(0)

    async def close(self) -> None:
        await self.kill()
        if self._tasks:
            _, pending = await asyncio.wait(set(self._tasks), timeout=5)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)

    # --- devices and faults ---------------------------------------------------

    def add_device(self, serial: str, **settings: object) -> SimAdbDevice:
        if serial in self.devices or not serial or any(c.isspace() for c in serial):
            raise ValueError(f"bad or duplicate serial {serial!r}")
        device = SimAdbDevice(serial, **settings)  # type: ignore[arg-type]
        device.transport_id = self._new_transport_id()
        self.devices[serial] = device
        self._notify()
        return device

    def unplug(self, serial: str) -> None:
        device = self.devices[serial]
        device.attached = False
        device.cut()
        self._notify()

    def replug(self, serial: str) -> None:
        device = self.devices[serial]
        if not device.attached:
            device.attached = True
            device.transport_id = self._new_transport_id()
            self._notify()

    def freeze(self, serial: str) -> None:
        """A silent drop: connections stall without closing; the server still lists the device."""
        self.devices[serial].thawed.clear()

    def thaw(self, serial: str) -> None:
        """The link is back; what was open across the silent drop is dead, as a TCP reset says."""
        device = self.devices[serial]
        device.cut()
        device.thawed.set()
        self._notify()

    def drop_network(self, serial: str) -> None:
        """A device over TCP drops off the network: the server forgets it until ``adb connect``."""
        device = self.devices[serial]
        device.network_up = False
        device.attached = False
        device.cut()
        self._notify()

    def restore_network(self, serial: str) -> None:
        self.devices[serial].network_up = True

    def set_state(self, serial: str, state: str) -> None:
        """``device``, ``offline`` or ``unauthorized`` (the RSA key prompt not yet accepted)."""
        self.devices[serial].state = state
        self._notify()

    def listed(self) -> list[SimAdbDevice]:
        return [device for device in self.devices.values() if device.attached]

    def _new_transport_id(self) -> int:
        number, self._next_transport_id = self._next_transport_id, self._next_transport_id + 1
        return number

    def _notify(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    # --- one client connection ------------------------------------------------

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._track(asyncio.current_task())
        self._connections.add(writer)
        try:
            await self._requests(reader, writer)
        except (asyncio.IncompleteReadError, ConnectionError, ProtocolError):
            pass
        finally:
            self._connections.discard(writer)
            writer.close()

    async def _requests(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            request = await read_request(reader)
            self.requests.append(request)
            if not request.startswith("host"):
                writer.write(fail("no device selected: send host:transport:<serial> first"))
                return
            prefix, _, rest = request.partition(":")
            selector, command = self._selector(prefix, rest)
            if selector is None:
                writer.write(fail(f"unknown host service {request!r}"))
                return
            if command.startswith(("transport", "tport:")):
                device = await self._switch(writer, selector, command)
                if device is not None:
                    await self._device_service(reader, writer, device)
                return
            await self._host_service(reader, writer, selector, command)
            return

    def _selector(self, prefix: str, rest: str) -> tuple[tuple[str, str] | None, str]:
        """Which device a ``host[-...]:`` request is about, and the command."""
        if prefix == "host":
            return ("any", ""), rest
        if prefix == "host-usb":
            return ("usb", ""), rest
        if prefix == "host-local":
            return ("local", ""), rest
        if prefix in ("host-serial", "host-transport-id"):
            # A serial may hold colons (host:port); the command never does.
            value, _, command = rest.rpartition(":")
            return ("serial" if prefix == "host-serial" else "id", value), command
        return None, rest

    def _find(self, selector: tuple[str, str], need_ready: bool = True) -> SimAdbDevice | str:
        """The one device meant, or adb's message saying why there is none."""
        how, value = selector
        listed = self.listed()
        if how == "serial":
            found = [d for d in listed if d.serial == value]
            missing = f"device '{value}' not found"
        elif how == "id":
            found = [d for d in listed if str(d.transport_id) == value]
            missing = f"no device with transport id '{value}'"
        else:
            found = [d for d in listed if how == "any" or d.kind == how]
            missing = "no devices/emulators found"
            if len(found) > 1:
                return "more than one device/emulator"
        if not found:
            return missing
        device = found[0]
        if need_ready and device.state == "unauthorized":
            return UNAUTHORIZED
        if need_ready and device.state != "device":
            return "device offline"
        return device

    async def _switch(
        self, writer: asyncio.StreamWriter, selector: tuple[str, str], command: str
    ) -> SimAdbDevice | None:
        """``host:transport:S``/``host:tport:serial:S`` (and -any/-usb/-local/-id)."""
        tport = command.startswith("tport:")
        target = command.removeprefix("tport:") if tport else command.removeprefix("transport")
        target = target.lstrip("-:")
        if target.startswith("serial:"):
            selector = ("serial", target.removeprefix("serial:"))
        elif target.startswith("id:"):
            selector = ("id", target.removeprefix("id:"))
        elif target in ("any", "usb", "local"):
            selector = (target, "")
        elif target:
            selector = ("serial", target)
        found = self._find(selector)
        if isinstance(found, str):
            writer.write(fail(found))
            return None
        writer.write(b"OKAY" + (found.transport_id.to_bytes(8, "little") if tport else b""))
        await writer.drain()
        return found

    async def _host_service(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        selector: tuple[str, str],
        command: str,
    ) -> None:
        if command == "version":
            writer.write(okay(f"{self.version:04x}"))
        elif command in ("devices", "devices-l"):
            long = command == "devices-l"
            writer.write(okay("".join(d.listing(long) for d in self.listed())))
        elif command == "kill":
            writer.write(okay())
            await writer.drain()
            await self.kill()
        elif command.startswith("connect:"):
            writer.write(okay(self._connect(command.removeprefix("connect:"))))
        elif command.startswith("disconnect:"):
            writer.write(self._disconnect(command.removeprefix("disconnect:")))
        elif command.startswith("wait-for-"):
            await self._wait_for(reader, writer, selector, command.removeprefix("wait-for-"))
        elif command in ("features", "get-state", "get-serialno", "get-devpath"):
            found = self._find(selector, need_ready=command == "features")
            if isinstance(found, str):
                writer.write(fail(found))
            else:
                answer = {
                    "features": ",".join(found.features),
                    "get-state": found.state,
                    "get-serialno": found.serial,
                    "get-devpath": "usb:1-1" if not found.over_tcp else "unknown",
                }[command]
                writer.write(okay(answer))
        else:
            writer.write(fail("unknown host service"))
        await writer.drain()

    def _connect(self, address: str) -> str:
        device = self.devices.get(address)
        if device is None or not device.over_tcp:
            return f"failed to connect to '{address}': Connection refused"
        if not device.network_up:
            return f"failed to connect to '{address}': No route to host"
        if not device.thawed.is_set():
            return f"failed to connect to '{address}': Connection timed out"
        if device.attached:
            return f"already connected to {address}"
        device.attached = True
        device.transport_id = self._new_transport_id()
        self._notify()
        return f"connected to {address}"

    def _disconnect(self, address: str) -> bytes:
        device = self.devices.get(address)
        if device is None or not device.over_tcp or not device.attached:
            return fail(f"no such device '{address}'")
        device.attached = False
        device.cut()
        self._notify()
        return okay(f"disconnected {address}")

    async def _wait_for(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        selector: tuple[str, str],
        spec: str,
    ) -> None:
        """``wait-for-<usb|local|any>-<state>``: OKAY now, OKAY again once it holds."""
        transport, _, state = spec.partition("-")
        if transport not in ("usb", "local", "any") or state not in _WAIT_STATES:
            writer.write(fail(f"invalid wait-for service {spec!r}"))
            return
        if selector[0] == "any" and transport != "any":
            selector = (transport, "")
        writer.write(okay())
        await writer.drain()
        hangup = asyncio.ensure_future(reader.read(1))
        try:
            while True:
                found = self._find(selector, need_ready=False)
                if state == "disconnect":
                    if isinstance(found, str) and found != "more than one device/emulator":
                        break
                elif not isinstance(found, str) and (state == "any" or found.state == state):
                    break
                elif found == "more than one device/emulator":
                    writer.write(fail(found))
                    return
                changed = asyncio.ensure_future(self._changed.wait())
                await asyncio.wait({changed, hangup}, return_when=asyncio.FIRST_COMPLETED)
                changed.cancel()
                if hangup.done():
                    return
            writer.write(okay())
        finally:
            hangup.cancel()

    async def _device_service(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, device: SimAdbDevice
    ) -> None:
        request = await read_request(reader)
        self.requests.append(request)
        device.connections.add(writer)
        try:
            await device.reachable()
            shell = parse_shell_service(request)
            if shell is not None:
                writer.write(okay())
                await writer.drain()
                session = ShellSession(
                    shell,
                    reader,
                    writer,
                    shell=device.shell,
                    env=device.env,
                    cwd=device.cwd,
                    reachable=device.reachable,
                    on_orphan=self._orphan,
                )
                await session.run()
            elif request == "sync:":
                writer.write(okay())
                await writer.drain()
                await SyncSession(reader, writer, device.reachable).run()
            else:
                # adbd closes a service it does not know; the server reports it so.
                writer.write(fail("closed"))
        finally:
            device.connections.discard(writer)

    def _orphan(self, popen: subprocess.Popen[bytes]) -> None:
        async def reap() -> None:
            await wait_exit(popen)

        self._track(asyncio.ensure_future(reap()))

    def _track(self, task: asyncio.Task[None] | None) -> None:
        if task is not None:
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

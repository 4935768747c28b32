"""The asyncssh front of a SimBoard: loopback only, its own host key, key authentication.

Only the local user's name and the state directory's client key are
accepted; no passwords, no forwarding; SFTP as the same user. The server
can be stopped and started again on the same port while the board (and
every process on it) keeps running, and
:meth:`SimSSHServer.drop_connections` aborts every connection abruptly,
for the link's fault-injection tests.
"""

from __future__ import annotations

import asyncio
import contextlib
import getpass
import subprocess

import asyncssh

from qtop.errors import UsageError
from qtop.sim.board import SimBoard
from qtop.sim.keys import SimKeys
from qtop.sim.sessions import Session, wait_exit

LOOPBACK_NAMES = ("127.0.0.1", "::1", "localhost")
_ACCEPTED_ENV_PREFIXES = ("LANG", "LC_")


def check_bind_host(host: str) -> str:
    """The address to bind: loopback only, checked before anything listens."""
    if host == "localhost":
        return "127.0.0.1"
    if host in LOOPBACK_NAMES:
        return host
    raise UsageError(
        f"the simulator only listens on loopback, not on {host!r}",
        "use --host 127.0.0.1 (or ::1); the simulated board must never be reachable from outside",
    )


class _Connection(asyncssh.SSHServer):
    def __init__(self, front: SimSSHServer) -> None:
        self._front = front
        self._connection: asyncssh.SSHServerConnection | None = None
        self._user_ok = False

    def connection_made(self, conn: asyncssh.SSHServerConnection) -> None:
        self._connection = conn
        self._front.connections.add(conn)

    def connection_lost(self, exc: Exception | None) -> None:
        if self._connection is not None:
            self._front.connections.discard(self._connection)

    def begin_auth(self, username: str) -> bool:
        self._user_ok = username == self._front.username
        return True

    def password_auth_supported(self) -> bool:
        return False

    def public_key_auth_supported(self) -> bool:
        return True

    def validate_public_key(self, username: str, key: asyncssh.SSHKey) -> bool:
        expected = self._front.keys.client_key
        return self._user_ok and key.public_data == expected.public_data


class SimSSHServer:
    """Serves one SimBoard over SSH on host:port (port 0 picks a free one, kept on restart)."""

    def __init__(self, board: SimBoard, keys: SimKeys, host: str = "127.0.0.1", port: int = 0):
        self.board = board
        self.keys = keys
        self.host = check_bind_host(host)
        self.port = port
        self.username = getpass.getuser()
        self.connections: set[asyncssh.SSHServerConnection] = set()
        self._acceptor: asyncssh.SSHAcceptor | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def running(self) -> bool:
        return self._acceptor is not None

    async def start(self) -> int:
        if self._acceptor is not None:
            return self.port
        try:
            self._acceptor = await asyncssh.create_server(
                lambda: _Connection(self),
                self.host,
                self.port,
                server_host_keys=[self.keys.host_key],
                process_factory=self._session,
                encoding=None,
                line_editor=False,
                reuse_address=True,
                allow_scp=False,
                agent_forwarding=False,
                x11_forwarding=False,
                # SFTP as OpenSSH offers it (qtop pushes a run's payload with it).
                sftp_factory=True,
                server_version="OpenSSH_9.6 qtop-sim",
            )
        except OSError as exc:
            raise UsageError(
                f"cannot listen on {self.host}:{self.port}: {exc.strerror}",
                "pick another --port (or stop whatever holds this one)",
            ) from None
        self.port = self._acceptor.sockets[0].getsockname()[1]
        return self.port

    async def stop(self, drop_connections: bool = True) -> None:
        """Stop listening; by default also abort every open connection."""
        if self._acceptor is not None:
            self._acceptor.close()
            await self._acceptor.wait_closed()
            self._acceptor = None
        if drop_connections:
            await self.drop_connections()

    async def drop_connections(self) -> None:
        """Abort every SSH connection at once, as a dropped link would."""
        for connection in list(self.connections):
            connection.abort()
        self.connections.clear()
        # Let the sessions notice their channels are gone.
        await asyncio.sleep(0)

    async def close(self) -> None:
        """Stop serving, then wait for the session tasks (after the board killed them)."""
        await self.stop()
        if self._tasks:
            _, pending = await asyncio.wait(set(self._tasks), timeout=5)
            for task in pending:
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.gather(*pending, return_exceptions=True)

    def session_env(self, process: asyncssh.SSHServerProcess[bytes]) -> dict[str, str]:
        peer = process.get_extra_info("peername") or ("", 0)
        local = process.get_extra_info("sockname") or ("", 0)
        env = {
            "HOME": str(self.board.home),
            "USER": self.username,
            "LOGNAME": self.username,
            "SHELL": "/bin/sh",
            "SSH_CLIENT": f"{peer[0]} {peer[1]} {local[1]}",
            "SSH_CONNECTION": f"{peer[0]} {peer[1]} {local[0]} {local[1]}",
        }
        for name, value in (process.env or {}).items():
            key = name.decode() if isinstance(name, bytes) else str(name)
            if key.startswith(_ACCEPTED_ENV_PREFIXES):
                env[key] = value.decode() if isinstance(value, bytes) else str(value)
        env.update(self.board.session_env())
        return env

    def _session(self, process: asyncssh.SSHServerProcess[bytes]) -> None:
        session = Session(process, self.session_env(process), str(self.board.home), self._orphan)
        self._track(asyncio.ensure_future(session.run()))

    def _orphan(self, popen: subprocess.Popen[bytes]) -> None:
        async def reap() -> None:
            await wait_exit(popen)

        self._track(asyncio.ensure_future(reap()))

    def _track(self, task: asyncio.Task[None]) -> None:
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

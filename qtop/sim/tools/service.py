"""The tool service: where the simulated tools' work is done, inside the sim process.

Each simulated tool on ``PATH`` is a few lines of bash (see ``client.py``)
that connects here over loopback, authenticates with the board's token,
sends its argv, pid, cwd and start time (NUL-separated), then relays
framed lines back: ``o`` stdout line, ``p`` stdout without newline, ``e``
stderr line, ``x`` exit status, or ``R`` exit status followed by raw stdout up
to EOF (large final outputs; one ``cat`` copies them). The tool may send ``s<SIGNAL>`` lines (Genie
traps SIGINT/SIGTERM). A dropped connection means the tool was killed: the
handler is interrupted and must write none of its at-exit files.

One thread per connection keeps sleeps precise (``Event.wait`` on the
monotonic clock) and independent of any asyncio loop.

A native tool's process lives as long as its work; a bash script adds its own
start-up (exec, bash's initialisation, connecting here) and exit. The board
measures that when it starts (``ToolService.calibrate``) and every handler's
clock starts that much before the request arrives, so the process
lives for the simulated duration and the ground truth's ``wall_s`` is what
a device-side timer, calibrated against an empty command, should measure.
"""

from __future__ import annotations

import contextlib
import hmac
import random
import socket
import statistics
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from qtop.sim.config import SimConfig
from qtop.sim.ground_truth import GroundTruthLog
from qtop.sim.npu import NpuArbiter
from qtop.sim.sensors import Snapshot

PROTOCOL = b"qtop-sim-tool/1"
# protocol, token, tool, pid, start time, cwd, ADSP_LIBRARY_PATH, LD_LIBRARY_PATH, argc
_HEADER_FIELDS = 9
_HEADER_TIMEOUT_S = 10.0
_MAX_FIELD = 1 << 20
_RAW_OUTPUT_BYTES = 4096


class ToolAborted(Exception):
    """The tool's process went away (killed, or its connection dropped)."""


class ToolBoard(Protocol):
    """What the simulated tools use of the board."""

    config: SimConfig
    npu: NpuArbiter
    sim_root: Path

    @property
    def ground_truth(self) -> GroundTruthLog: ...

    def snapshot(self) -> Snapshot: ...

    def invocation_rng(self, invocation: int) -> random.Random: ...


class _Connection:
    """Buffered reads of NUL-separated fields, then newline-separated control lines."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buffer = b""

    def _until(self, separator: bytes) -> bytes | None:
        while separator not in self.buffer:
            if len(self.buffer) > _MAX_FIELD:
                raise ValueError("field too long")
            chunk = self.sock.recv(65536)
            if not chunk:
                return None
            self.buffer += chunk
        item, _, self.buffer = self.buffer.partition(separator)
        return item

    def field(self) -> str:
        item = self._until(b"\0")
        if item is None:
            raise ValueError("connection closed in the header")
        return item.decode("utf-8", errors="surrogateescape")

    def line(self) -> str | None:
        item = self._until(b"\n")
        return None if item is None else item.decode("utf-8", errors="replace")


@dataclass
class ToolContext:
    """One invocation of a simulated tool, as its handler sees it."""

    tool: str
    argv: list[str]
    cwd: Path
    pid: int
    env: dict[str, str]
    board: ToolBoard
    invocation: int
    start: float
    tool_started: float | None
    received_epoch: float = 0.0
    truth: dict[str, Any] = field(default_factory=dict)
    # Output produced all at once at exit (the viewer's render): sent after the status.
    final_stdout: str | None = None
    signal: str | None = None
    disconnected: bool = False
    _sock: socket.socket | None = None
    _rng: random.Random | None = None
    _interrupt: threading.Event = field(default_factory=threading.Event)
    _send_lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def rng(self) -> random.Random:
        """This invocation's random source, seeded from the board seed and its number."""
        if self._rng is None:
            self._rng = self.board.invocation_rng(self.invocation)
        return self._rng

    def path(self, value: str) -> Path:
        path = Path(value).expanduser()
        return path if path.is_absolute() else self.cwd / path

    def out(self, line: str = "") -> None:
        for part in line.split("\n"):
            self._send(b"o" + _clean(part) + b"\n")

    def partial(self, text: str) -> None:
        self._send(b"p" + _clean(text) + b"\n")

    def err(self, line: str) -> None:
        for part in line.split("\n"):
            self._send(b"e" + _clean(part) + b"\n")

    def _send(self, frame: bytes) -> None:
        if self.disconnected or self._sock is None:
            raise ToolAborted()
        try:
            with self._send_lock:
                self._sock.sendall(frame)
        except OSError:
            self.mark_disconnected()
            raise ToolAborted() from None

    def mark_disconnected(self) -> None:
        self.disconnected = True
        self._interrupt.set()

    def deliver_signal(self, name: str) -> None:
        self.signal = name
        self._interrupt.set()

    def sleep_until(self, deadline: float) -> bool:
        """Sleep until ``deadline`` (monotonic); False when a signal or a drop cut it short."""
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return not self._interrupt.is_set()
            if self._interrupt.wait(remaining):
                return False

    def check_alive(self) -> None:
        if self.disconnected:
            raise ToolAborted()


def _clean(text: str) -> bytes:
    return text.replace("\0", "").replace("\r\n", "\n").encode("utf-8", errors="replace")


Handler = Callable[[ToolContext], int]


class ToolService:
    """A loopback TCP server running one thread per tool invocation."""

    def __init__(self, board: ToolBoard, token: str, handlers: dict[str, Handler]) -> None:
        self.board = board
        self._token = token.encode()
        self._handlers = handlers
        self._listener: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._active: set[socket.socket] = set()
        self._invocations = 0
        self._closed = False
        self.port = 0
        # Measured by calibrate(): the script's own start-up and exit (seconds).
        self.overhead_s = 0.0
        self._observed: list[tuple[float, float]] | None = None

    def start(self) -> int:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)
        self._listener = listener
        self.port = listener.getsockname()[1]
        self._thread = threading.Thread(
            target=self._accept_loop, name="qtop-sim-tools", daemon=True
        )
        self._thread.start()
        return self.port

    def calibrate(self, tool_path: Path, runs: int = 15) -> float:
        """Measure what running the tool script through ``sh -c`` costs beyond its work.

        Like hyperfine, a command's cost is taken against an empty ``sh -c :``:
        the difference between the two, less the time the service spent, is
        the script's own start-up and exit, which a native tool would not have.
        """
        script = (
            f"for i in $(seq {runs}); do t0=$EPOCHREALTIME; sh -c :; t1=$EPOCHREALTIME; "
            'sh -c \'"$0" --version\' "$0" >/dev/null 2>&1; '
            'printf "%s %s %s\\n" "$t0" "$t1" "$EPOCHREALTIME"; done'
        )
        self._observed = []
        try:
            result = subprocess.run(
                ["bash", "-c", script, str(tool_path)],
                capture_output=True,
                text=True,
                timeout=30,
                check=False,
            )
            observed = self._observed
        finally:
            self._observed = None
        stamps = [[float(v) for v in line.split()] for line in result.stdout.splitlines()]
        runs_seen = list(zip(stamps, observed, strict=False))
        # The first runs warm the page cache; the median of the rest is what a run costs.
        usable = runs_seen[2:] if len(runs_seen) > 4 else runs_seen
        if usable:
            self.overhead_s = max(
                0.0,
                statistics.median(
                    (t2 - t1) - (t1 - t0) - (ended - received)
                    for (t0, t1, t2), (received, ended) in usable
                ),
            )
        return self.overhead_s

    def stop(self) -> None:
        with self._lock:
            self._closed = True
            active = list(self._active)
        if self._listener is not None:
            # shutdown() wakes the thread blocked in accept(); close() alone does not.
            with contextlib.suppress(OSError):
                self._listener.shutdown(socket.SHUT_RDWR)
            self._listener.close()
        for sock in active:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _accept_loop(self) -> None:
        assert self._listener is not None
        while True:
            try:
                sock, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                if self._closed:
                    sock.close()
                    return
                self._active.add(sock)
                self._invocations += 1
                invocation = self._invocations
            threading.Thread(
                target=self._serve, args=(sock, invocation), name="qtop-sim-tool", daemon=True
            ).start()

    def _serve(self, sock: socket.socket, invocation: int) -> None:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            context = self._handshake(sock, invocation)
            if context is not None:
                self._run(context)
        finally:
            with self._lock:
                self._active.discard(sock)
            sock.close()

    def _handshake(self, sock: socket.socket, invocation: int) -> ToolContext | None:
        connection = _Connection(sock)
        sock.settimeout(_HEADER_TIMEOUT_S)
        try:
            fields = [connection.field() for _ in range(_HEADER_FIELDS)]
            argv = [connection.field() for _ in range(int(fields[8]))]
        except (ValueError, OSError):
            return None
        # The wall clock first: a delay between the two reads can then only move the
        # tool's start later, never earlier than the script's first line really ran.
        received_epoch = time.time()
        received = time.monotonic()
        sock.settimeout(None)
        protocol, token, tool, pid, epoch, cwd, adsp, ld_path, _ = fields
        if protocol.encode() != PROTOCOL or not hmac.compare_digest(token.encode(), self._token):
            _send_quietly(sock, b"eqtop sim: the tool service refused this client\nx126\n")
            return None
        handler = self._handlers.get(tool)
        if handler is None:
            _send_quietly(sock, f"e{tool}: not simulated\nx127\n".encode())
            return None
        context = ToolContext(
            tool=tool,
            argv=argv,
            cwd=Path(cwd or "/"),
            pid=_int(pid),
            env={"ADSP_LIBRARY_PATH": adsp, "LD_LIBRARY_PATH": ld_path},
            board=self.board,
            invocation=invocation,
            start=received - self.overhead_s,
            tool_started=_monotonic_from_epoch(epoch, received, received_epoch),
            received_epoch=received_epoch,
            _sock=sock,
        )
        threading.Thread(
            target=_watch_controls, args=(connection, context), name="qtop-sim-ctl", daemon=True
        ).start()
        return context

    def _run(self, context: ToolContext) -> None:
        npu = self.board.npu
        npu.tool_started()
        status: int | None = None
        try:
            status = self._handlers[context.tool](context)
            context.check_alive()
        except ToolAborted:
            status = None
        finally:
            npu.release(context.invocation)
            npu.tool_finished()
        observed = self._observed
        if observed is not None:
            observed.append((context.received_epoch, time.time()))
        else:
            # The record is written before the exit status is sent, so it is there by
            # the time the tool's process has exited.
            self._record(context, status, time.monotonic())
        if status is not None:
            with contextlib.suppress(ToolAborted, OSError):
                self._finish(context, status)

    def _finish(self, context: ToolContext, status: int) -> None:
        """Send the exit status; a large final output goes raw, copied by one ``cat``.

        bash's ``read`` takes one system call per byte on a socket, which is fine
        for a few lines but takes seconds for the megabytes a long run's render has.
        """
        text = context.final_stdout
        if text is not None and len(text) >= _RAW_OUTPUT_BYTES:
            context._send(f"R{status}\n".encode() + text.encode("utf-8", errors="replace"))
            assert context._sock is not None
            context._sock.shutdown(socket.SHUT_WR)
            return
        if text:
            for line in text.rstrip("\n").split("\n"):
                context.out(line)
        context._send(f"x{status}\n".encode())

    def _record(self, context: ToolContext, status: int | None, end: float) -> None:
        if status is None:
            outcome = "killed"
        elif context.signal:
            outcome = "interrupted"
        else:
            outcome = "ok" if status == 0 else "error"
        started = context.tool_started
        record: dict[str, Any] = {
            "tool": context.tool,
            "pid": context.pid,
            "argv": context.argv,
            "cwd": str(context.cwd),
            "invocation": context.invocation,
            "tool_started": started,
            "start": context.start,
            "end": end,
            "wall_s": end - context.start,
            "process_wall_s": None if started is None else end - started,
            "exit_status": status,
            "outcome": outcome,
            "signal": context.signal,
        }
        record.update(context.truth)
        self.board.ground_truth.write(record)


def _watch_controls(connection: _Connection, context: ToolContext) -> None:
    """Signals forwarded by the tool, and the drop that means it was killed."""
    while True:
        try:
            line = connection.line()
        except (OSError, ValueError):
            line = None
        if line is None:
            context.mark_disconnected()
            return
        if line.startswith("s"):
            context.deliver_signal(line[1:].strip())


def _send_quietly(sock: socket.socket, data: bytes) -> None:
    with contextlib.suppress(OSError):
        sock.sendall(data)


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        return 0


def _monotonic_from_epoch(epoch: str, now_monotonic: float, now_epoch: float) -> float | None:
    """When the tool's script started running, moved from the wall clock to the monotonic one
    by a pair of readings of both clocks taken together."""
    try:
        started_wall = float(epoch)
    except ValueError:
        return None
    return now_monotonic - (now_epoch - started_wall)

"""The bytes of the adb client <-> server protocol, as the simulated adb server speaks them.

Requests are a 4-hex-digit length and that many bytes of text; replies start
with ``OKAY`` or ``FAIL`` (a failure carries a length-prefixed message). After
a ``shell,v2`` request every message is a shell-protocol packet: an id byte,
a little-endian 32-bit length, the data. After ``sync:`` every message is a
4-byte id and a little-endian 32-bit number. See docs/simulator.md, "adb".
"""

from __future__ import annotations

import asyncio
import struct

OKAY = b"OKAY"
FAIL = b"FAIL"
# The request length is 4 hex digits; adb's MAX_PAYLOAD is 1 MiB, but a host
# request never comes close to 64 KiB.
MAX_REQUEST = 0xFFFF

# Shell protocol v2 packet ids (adb's shell_protocol.h).
STDIN = 0
STDOUT = 1
STDERR = 2
EXIT = 3
CLOSE_STDIN = 4
WINDOW_SIZE = 5
PACKET_HEADER = struct.Struct("<BI")
# adbd's packets carry at most this much data (its buffer less the header).
PACKET_DATA_MAX = 256 * 1024 - PACKET_HEADER.size

SYNC_HEADER = struct.Struct("<4sI")
SYNC_DATA_MAX = 64 * 1024


class ProtocolError(Exception):
    """The client sent something the protocol does not allow."""


async def read_request(reader: asyncio.StreamReader) -> str:
    """One request: ``b'000Chost:version'`` -> ``'host:version'``."""
    length_text = await reader.readexactly(4)
    try:
        length = int(length_text, 16)
    except ValueError:
        raise ProtocolError(f"bad request length {length_text!r}") from None
    if length > MAX_REQUEST:
        raise ProtocolError(f"request of {length} bytes")
    return (await reader.readexactly(length)).decode("utf-8", errors="replace")


def length_prefixed(text: str | bytes) -> bytes:
    data = text.encode() if isinstance(text, str) else text
    return b"%04x" % len(data) + data


def okay(text: str | bytes | None = None) -> bytes:
    """``OKAY``, with a length-prefixed answer when there is one."""
    return OKAY if text is None else OKAY + length_prefixed(text)


def fail(message: str) -> bytes:
    return FAIL + length_prefixed(message)


def packet(kind: int, data: bytes = b"") -> bytes:
    return PACKET_HEADER.pack(kind, len(data)) + data


async def read_packet(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    kind, length = PACKET_HEADER.unpack(await reader.readexactly(PACKET_HEADER.size))
    if length > PACKET_DATA_MAX:
        raise ProtocolError(f"shell packet of {length} bytes")
    return kind, await reader.readexactly(length)


def sync_message(kind: bytes, number: int = 0, data: bytes = b"") -> bytes:
    return SYNC_HEADER.pack(kind, number) + data


async def read_sync_header(reader: asyncio.StreamReader) -> tuple[bytes, int]:
    kind, number = SYNC_HEADER.unpack(await reader.readexactly(SYNC_HEADER.size))
    return kind, number

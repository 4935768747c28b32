"""A TCP proxy on loopback that can stop forwarding without closing anything (a silent drop)."""

from __future__ import annotations

import asyncio
import contextlib


class SilentDropProxy:
    def __init__(self, target_host: str, target_port: int) -> None:
        self.target = (target_host, target_port)
        self.port = 0
        self._server: asyncio.AbstractServer | None = None
        self._pairs: list[dict[str, object]] = []

    async def start(self) -> int:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self.port

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.close()
            return
        pair: dict[str, object] = {"silent": False, "writers": (writer, upstream_writer)}
        self._pairs.append(pair)
        await asyncio.gather(
            self._pump(reader, upstream_writer, pair),
            self._pump(upstream_reader, writer, pair),
            return_exceptions=True,
        )

    @staticmethod
    async def _pump(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, pair: dict[str, object]
    ) -> None:
        try:
            while data := await reader.read(65536):
                if not pair["silent"]:
                    writer.write(data)
                    await writer.drain()
        finally:
            with contextlib.suppress(Exception):
                writer.close()

    def go_silent(self) -> None:
        """Every open connection stops carrying bytes, without a FIN or RST; new ones work."""
        for pair in self._pairs:
            pair["silent"] = True

    async def close(self) -> None:
        for pair in self._pairs:
            for writer in pair["writers"]:  # type: ignore[attr-defined]
                writer.close()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

"""A tiny HTTP peer in front of SeaweedFS: it answers some requests itself, or holds them.

It reads each request a client sends (head, then a body of ``Content-Length`` bytes) and either
answers it itself (503 SlowDown, 500), or waits until the test lets it go, or passes it to the
store on a connection of its own, piping the store's answers back as they come.
"""

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field

type Rule = Callable[[str], bytes | None]
"""Given a request's first line, the answer to give instead of the store's, or None."""

SLOW_DOWN = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/xml\r\n"
    b"Content-Length: 86\r\nConnection: close\r\n\r\n"
    b"<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>"
)
BROKEN = (
    b"HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/xml\r\n"
    b"Content-Length: 74\r\nConnection: close\r\n\r\n"
    b"<Error><Code>InternalError</Code><Message>We broke it.</Message></Error>\r\n\r\n"
)


@dataclass
class Proxy:
    """The peer: ``answer`` may answer a request itself; ``hold`` may hold one until ``go``."""

    upstream_port: int
    answer: Rule = lambda _: None
    hold: Callable[[str], bool] = lambda _: False
    answered: int = 0
    held: asyncio.Event = field(default_factory=asyncio.Event)
    go: asyncio.Event = field(default_factory=asyncio.Event)
    port: int = 0
    _server: asyncio.Server | None = None
    _clients: list[asyncio.StreamWriter] = field(default_factory=list[asyncio.StreamWriter])

    async def __aenter__(self) -> "Proxy":
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *_: object) -> None:
        assert self._server is not None
        self._server.close()
        for writer in self._clients:
            writer.close()
        await self._server.wait_closed()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._clients.append(writer)
        upstream: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
        piping: asyncio.Task[None] | None = None
        try:
            while head := await _head(reader):
                length = _content_length(head)
                body = await reader.readexactly(length) if length else b""
                line = head.split(b"\r\n", 1)[0].decode()
                reply = self.answer(line)
                if reply is not None:
                    self.answered += 1
                    writer.write(reply)
                    await writer.drain()
                    break
                if self.hold(line):
                    self.held.set()
                    await self.go.wait()
                if upstream is None:
                    upstream = await asyncio.open_connection("127.0.0.1", self.upstream_port)
                    piping = asyncio.create_task(_pipe(upstream[0], writer))
                upstream[1].write(head + body)
                await upstream[1].drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            if piping is not None:
                piping.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await piping
            if upstream is not None:
                upstream[1].close()
            writer.close()


async def _head(reader: asyncio.StreamReader) -> bytes:
    try:
        return await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return b""


def _content_length(head: bytes) -> int:
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value.strip())
    return 0


async def _pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    with contextlib.suppress(ConnectionError):
        while data := await source.read(1 << 16):
            sink.write(data)
            await sink.drain()

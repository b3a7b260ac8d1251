"""A minimal HTTP/1.1 server on anyio, enough for the Claude Code CLI's HTTP client.

It handles keep-alive, `Content-Length` and chunked request bodies, JSON replies, chunked streaming replies
and a connection reset on demand. It binds 127.0.0.1 only. It is not a general web server: it exists so
the scripted model needs no dependency beyond anyio.
"""

from __future__ import annotations

import json
import logging
import socket
import struct
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any

import anyio
from anyio.abc import SocketAttribute, SocketStream, TaskStatus
from anyio.streams.buffered import BufferedByteReceiveStream

__all__ = ["HttpRequest", "Responder", "serve"]

logger = logging.getLogger("flower.testing")

_MAX_HEADER = 64 * 1024
_READ_TIMEOUT = 30.0
_REASONS = {
    200: "OK",
    400: "Bad Request",
    404: "Not Found",
    413: "Payload Too Large",
    429: "Too Many Requests",
    500: "Internal Server Error",
    529: "Overloaded",
}


class _BadRequest(Exception):
    pass


@dataclass(frozen=True)
class HttpRequest:
    method: str
    target: str
    headers: dict[str, str]
    body: bytes

    @property
    def path(self) -> str:
        return self.target.split("?", 1)[0]


class Responder:
    """Writes one response on a connection; `keep_alive` is False once the connection must close."""

    def __init__(self, stream: SocketStream) -> None:
        self._stream = stream
        self.keep_alive = True
        self.started = False

    async def _head(self, status: int, headers: dict[str, str]) -> None:
        self.started = True
        lines = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}"]
        lines += [f"{k}: {v}" for k, v in headers.items()]
        await self._stream.send(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))

    async def send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        body = json.dumps(payload, ensure_ascii=False).encode()
        head = {"content-type": "application/json", "content-length": str(len(body)), **(headers or {})}
        await self._head(status, head)
        await self._stream.send(body)

    async def send_stream(
        self, chunks: Iterable[bytes], *, after_first: Callable[[], Awaitable[bool]] | None = None
    ) -> None:
        """Stream `chunks` as a chunked `text/event-stream` body.

        `after_first`, if given, runs after the first chunk; returning False stops the stream there and
        resets the connection (a drop in the middle of a reply).
        """
        head = {
            "content-type": "text/event-stream",
            "cache-control": "no-cache",
            "transfer-encoding": "chunked",
        }
        await self._head(200, head)
        for index, chunk in enumerate(chunks):
            await self._stream.send(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            if index == 0 and after_first is not None and not await after_first():
                await self.reset()
                return
        await self._stream.send(b"0\r\n\r\n")

    async def reset(self) -> None:
        """Close with a TCP RST, so the client sees ECONNRESET rather than a clean end."""
        self.keep_alive = False
        raw = self._stream.extra(SocketAttribute.raw_socket, None)
        if raw is not None:
            raw.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        await self._stream.aclose()


Handler = Callable[[HttpRequest, Responder], Awaitable[None]]


async def _read_request(reader: BufferedByteReceiveStream) -> HttpRequest | None:
    try:
        head = await reader.receive_until(b"\r\n\r\n", _MAX_HEADER)
    except (anyio.IncompleteRead, anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
        return None
    except anyio.DelimiterNotFound as exc:
        raise _BadRequest("header too large") from exc
    lines = head.decode("latin-1").split("\r\n")
    try:
        method, target, _version = lines[0].split(" ", 2)
    except ValueError as exc:
        raise _BadRequest(f"bad request line {lines[0]!r}") from exc
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if ":" in line:
            key, value = line.split(":", 1)
            headers[key.strip().lower()] = value.strip()
    with anyio.fail_after(_READ_TIMEOUT):
        if headers.get("transfer-encoding", "").lower() == "chunked":
            body = bytearray()
            while True:
                size_line = await reader.receive_until(b"\r\n", 1024)
                size = int(size_line.split(b";", 1)[0], 16)
                if size == 0:
                    await reader.receive_until(b"\r\n", _MAX_HEADER)
                    break
                body += await reader.receive_exactly(size)
                await reader.receive_exactly(2)
            data = bytes(body)
        else:
            length = int(headers.get("content-length", "0") or 0)
            data = await reader.receive_exactly(length) if length else b""
    return HttpRequest(method=method.upper(), target=target, headers=headers, body=data)


async def _connection(stream: SocketStream, handler: Handler) -> None:
    """Serve one connection; whatever happens on it never takes the server down."""
    try:
        await _serve_connection(stream, handler)
    except Exception:
        logger.exception("scripted model: connection failed")


async def _serve_connection(stream: SocketStream, handler: Handler) -> None:
    reader = BufferedByteReceiveStream(stream)
    async with stream:
        while True:
            try:
                request = await _read_request(reader)
            except (_BadRequest, ValueError, TimeoutError):
                return
            if request is None:
                return
            responder = Responder(stream)
            try:
                await handler(request, responder)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, ConnectionError):
                return
            if not responder.keep_alive or request.headers.get("connection", "").lower() == "close":
                return


async def serve(handler: Handler, *, task_status: TaskStatus[int] = anyio.TASK_STATUS_IGNORED) -> None:
    """Serve on 127.0.0.1 at a free port (reported through `task_status`) until cancelled."""
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    port = listener.extra(SocketAttribute.local_port)

    async def on_connection(stream: SocketStream) -> None:
        await _connection(stream, handler)

    async with listener:
        task_status.started(port)
        await listener.serve(on_connection)

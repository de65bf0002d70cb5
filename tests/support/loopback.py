"""A raw HTTP/1.1 server on 127.0.0.1 with canned replies, for transport-level tests.

It runs its own asyncio loop in a daemon thread, so the code under test can use
``asyncio.run`` (or a subprocess) as in production. ``respond(n, reused)`` gets the request's
sequence number and whether it came on a connection that already carried one, and says what
to send. Written against raw sockets so it can misbehave the way real servers do: say
``Connection: keep-alive`` and close anyway, close without answering, break the chunked
framing, or reset the connection right after the headers.
"""

from __future__ import annotations

import asyncio
import json
import socket
import struct
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

__all__ = ["Reply", "Server", "openai_answer", "serving"]

START_DEADLINE_S = 10.0


@dataclass(frozen=True, slots=True)
class Reply:
    """What the server does with one request."""

    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0  # before the status line
    close_after: bool = False  # close the socket after the body (despite keep-alive)
    linger_s: float = 0.0  # with close_after: wait this long before closing
    drop: bool = False  # close the socket without sending a byte
    reason: str | None = None  # the status line's reason phrase (default: a usual one)
    # Chunked transfer encoding instead of ``body``: each piece is one chunk, then the
    # terminating chunk unless ``unended``; ``tail`` is written raw after them (bad framing).
    chunks: tuple[bytes, ...] | None = None
    unended: bool = False
    tail: bytes = b""
    reset: bool = False  # after writing: a TCP reset (SO_LINGER 0), not an orderly close


def openai_answer(text: str = "ANSWER: 4") -> Reply:
    """A complete, successful OpenAI-format stream (content, usage, [DONE])."""
    chunks = [
        {"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": "stop"}]},
        {"choices": [], "usage": {"prompt_tokens": 150, "completion_tokens": 3}},
    ]
    body = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
    headers = {"content-type": "text/event-stream"}
    return Reply(body=body.encode(), headers=headers)


_REASONS = {200: "OK", 400: "Bad Request", 413: "Payload Too Large", 500: "Server Error"}


def _encode(reply: Reply) -> bytes:
    framing = (
        {"transfer-encoding": "chunked"}
        if reply.chunks is not None
        else {"content-length": str(len(reply.body))}
    )
    headers = {
        "content-type": "application/json",
        **framing,
        "connection": "keep-alive",
        **reply.headers,
    }
    reason = reply.reason if reply.reason is not None else _REASONS.get(reply.status, "Status")
    head = f"HTTP/1.1 {reply.status} {reason}\r\n"
    head += "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n"
    if reply.chunks is None:
        return head.encode() + reply.body
    body = b"".join(f"{len(c):x}\r\n".encode() + c + b"\r\n" for c in reply.chunks if c)
    end = b"" if reply.unended else b"0\r\n\r\n"
    return head.encode() + body + end + reply.tail


def _reset(writer: asyncio.StreamWriter) -> None:
    """Close with a TCP RST: the peer's next read fails with ECONNRESET."""
    sock = writer.get_extra_info("socket")
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


class Server:
    """Counts connections and requests; ``port`` is set once it listens."""

    def __init__(self, respond: Callable[[int, bool], Reply]) -> None:
        self.respond = respond
        self.port = 0
        self.connections = 0
        self.requests = 0
        self.bodies: list[bytes] = []
        self._open: set[asyncio.Task[None]] = set()

    async def _read_request(self, reader: asyncio.StreamReader) -> bool:
        """Read one request (head and body); False when the client closed instead."""
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, ConnectionError):
            return False
        length = 0
        for line in head.decode("latin-1").split("\r\n"):
            name, _, value = line.partition(":")
            if name.strip().lower() == "content-length":
                length = int(value)
        self.bodies.append(await reader.readexactly(length))
        return True

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        task = asyncio.current_task()
        assert task is not None
        self._open.add(task)
        task.add_done_callback(self._open.discard)
        served_here = 0
        try:
            while await self._read_request(reader):
                self.requests += 1
                reply = self.respond(self.requests, served_here > 0)
                served_here += 1
                if reply.drop:
                    return
                if reply.delay_s:
                    await asyncio.sleep(reply.delay_s)
                writer.write(_encode(reply))
                await writer.drain()
                if reply.reset:
                    _reset(writer)
                    return
                if reply.close_after:
                    await asyncio.sleep(reply.linger_s)
                    return
        except (ConnectionError, asyncio.CancelledError):
            return  # the client went away, or the server is shutting down
        finally:
            writer.close()


@contextmanager
def serving(respond: Callable[[int, bool], Reply]) -> Iterator[Server]:
    """Run a ``Server`` on a free loopback port until the block ends."""
    server = Server(respond)
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    stop: asyncio.Event | None = None

    async def main() -> None:
        nonlocal stop
        stop = asyncio.Event()
        listener = await asyncio.start_server(server._serve, "127.0.0.1", 0)
        server.port = listener.sockets[0].getsockname()[1]
        ready.set()
        async with listener:
            await stop.wait()
            for task in list(server._open):
                task.cancel()
            await asyncio.gather(*server._open, return_exceptions=True)

    thread = threading.Thread(target=loop.run_until_complete, args=(main(),), daemon=True)
    thread.start()
    if not ready.wait(START_DEADLINE_S):
        raise RuntimeError(f"loopback server did not start within {START_DEADLINE_S} s")
    try:
        yield server
    finally:
        assert stop is not None
        loop.call_soon_threadsafe(stop.set)
        thread.join(START_DEADLINE_S)
        loop.close()

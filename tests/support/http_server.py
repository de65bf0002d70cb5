"""A real HTTP server on a free 127.0.0.1 port, in a thread, around a handler class.

The standard library's ``ThreadingHTTPServer``: enough for a provider that misbehaves in
its answers (echoes a key, sends values no column holds) rather than in its transport,
which ``tests.support.loopback`` covers.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

__all__ = ["QuietHandler", "ThreadedServer"]

STOP_DEADLINE_S = 30.0


class QuietHandler(BaseHTTPRequestHandler):
    """A handler that keeps the test output clean (no access log lines)."""

    def log_message(self, format: str, *args: object) -> None:
        return


class ThreadedServer:
    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        """The OpenAI-style base URL of this server."""
        return f"http://127.0.0.1:{self.port}/v1"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(STOP_DEADLINE_S)
        assert not self._thread.is_alive(), "the test HTTP server did not stop"

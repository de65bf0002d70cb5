"""A loopback HTTP server in its own process that answers one request with one line
repeated until the client goes away (or ``--limit`` bytes): a flood whose bytes are never
held by the test process, so a test can measure the client's memory with tracemalloc.

Run: ``python -m tests.support.flood_server HEXLINE LIMIT``; it prints its port, serves
one request with a close-delimited ``text/event-stream`` body, and exits.
"""

from __future__ import annotations

import socket
import sys

HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n"
BLOCK = 64 * 1024


def _read_request(conn: socket.socket) -> None:
    data = b""
    while b"\r\n\r\n" not in data:
        got = conn.recv(65536)
        if not got:
            return
        data += got
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.decode("latin-1").split("\r\n"):
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value)
    while len(body) < length:
        got = conn.recv(65536)
        if not got:
            return
        body += got


def main(argv: list[str]) -> None:
    line, limit = bytes.fromhex(argv[0]), int(argv[1])
    block = line * max(1, BLOCK // len(line))
    with socket.create_server(("127.0.0.1", 0)) as listener:
        print(listener.getsockname()[1], flush=True)
        listener.settimeout(60)
        conn, _ = listener.accept()
        with conn:
            conn.settimeout(60)
            _read_request(conn)
            sent = 0
            try:
                conn.sendall(HEAD)
                while sent < limit:
                    conn.sendall(block)
                    sent += len(block)
            except OSError:
                return  # the client stopped reading and closed: the flood did its job


if __name__ == "__main__":
    main(sys.argv[1:])

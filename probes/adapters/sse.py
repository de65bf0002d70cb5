"""Incremental Server-Sent Events parser (WHATWG event-stream rules), bytes in, events out.

httpx-sse drops comment lines silently, but a probe needs to see them: keep-alive comments
(``: keep-alive``, ``: OPENROUTER PROCESSING``) are counted, and the simulator reports its
server-side first-token time in one. The rules are short enough to own: lines end in CRLF, LF
or CR; ``:`` starts a comment; ``data`` lines join with ``\\n``; a blank line dispatches; bytes
that are not UTF-8 become U+FFFD (so a sanity check can flag them) instead of raising.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass

__all__ = ["MAX_LINE_CHARS", "Comment", "Event", "LineTooLong", "SSEParser"]

MAX_LINE_CHARS = 4_000_000  # no real event line comes near; an endless one must not grow
DATA_RUN = 64  # data lines kept as separate strings before they are joined into one


class LineTooLong(ValueError):
    """A line grew past the parser's bound without ending."""


@dataclass(frozen=True, slots=True)
class Event:
    """One dispatched event; ``event`` is ``message`` when the stream named none."""

    event: str
    data: str


@dataclass(frozen=True, slots=True)
class Comment:
    text: str


class SSEParser:
    """Feed raw bytes as they arrive; get complete events and comments back."""

    def __init__(self, max_line: int = MAX_LINE_CHARS) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._max_line = max_line
        self._pending = 0  # characters of the unfinished line
        self._parts: list[str] = []
        self._event = ""
        # An event's data lines: runs of DATA_RUN lines already joined, then the latest.
        # One str per line costs ~50 bytes of object for a short line, so a flood of
        # ``data: xy`` lines that never dispatches would hold ~7x its bytes.
        self._data: list[str] = []
        self._recent: list[str] = []
        self._has_data = False
        self._first = True
        self.bytes_seen = 0

    def feed(self, chunk: bytes) -> list[Event | Comment]:
        self.bytes_seen += len(chunk)
        return self._lines(self._decoder.decode(chunk), final=False)

    def close(self) -> list[Event | Comment]:
        """End of stream: a last event without its blank line is still dispatched, since
        several servers close the socket right after the final ``data:`` line."""
        out = self._lines(self._decoder.decode(b"", final=True), final=True)
        if self._has_data:
            out.append(self._dispatch())
        return out

    @property
    def pending(self) -> bool:
        """True while an event is half-received (data seen, no blank line yet)."""
        return self._has_data or bool(self._parts)

    def _lines(self, text: str, *, final: bool) -> list[Event | Comment]:
        if self._first and text:
            text = text.removeprefix("\ufeff")
            self._first = False
        if not final and "\n" not in text and "\r" not in text:
            self._pending += len(text)
            if self._pending > self._max_line:
                raise LineTooLong(f"an SSE line passed {self._max_line:,} characters unended")
            self._parts.append(text)  # mid-line: avoid re-joining a long line per read
            return []
        buf = "".join(self._parts) + text
        hold = ""
        if not final and buf.endswith("\r"):
            buf, hold = buf[:-1], "\r"  # may be half of a CRLF split across reads
        if "\r" in buf:
            buf = buf.replace("\r\n", "\n").replace("\r", "\n")
        lines = buf.split("\n")
        rest = lines.pop()
        if final and rest:
            lines.append(rest)
            rest = ""
        self._parts = [rest + hold] if rest or hold else []
        self._pending = len(rest) + len(hold)
        out: list[Event | Comment] = []
        for line in lines:
            item = self._line(line)
            if item is not None:
                out.append(item)
        return out

    def _line(self, line: str) -> Event | Comment | None:
        if not line:
            if self._has_data:
                return self._dispatch()
            self._reset()  # an event name without data dispatches nothing
            return None
        if line.startswith(":"):
            return Comment(line[1:].strip())
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            self._recent.append(value)
            if len(self._recent) >= DATA_RUN:
                self._data.append("\n".join(self._recent))
                self._recent = []
            self._has_data = True
        elif name == "event":
            self._event = value
        return None  # id / retry / unknown fields are of no use to a probe

    def _dispatch(self) -> Event:
        event = Event(self._event or "message", "\n".join([*self._data, *self._recent]))
        self._reset()
        return event

    def _reset(self) -> None:
        self._event, self._data, self._recent, self._has_data = "", [], [], False

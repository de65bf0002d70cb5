"""Reading a response body as what it says it is, within a byte cap.

A body is read only up to a cap (an error reply, a non-streamed answer), a content-encoding
httpx cannot decode is named (httpx would pass the bytes through as if plain), and a body
that holds no JSON is described by its media type and page title instead of read as broken.

Which codings httpx decodes is read from its private ``httpx._decoders.SUPPORTED_DECODERS``
(the same table its ``Response`` and its default ``Accept-Encoding`` use; there is no public
one), so httpx is pinned to a minor version and ``tests/test_httpx_decoders.py`` checks the
table against what httpx really decodes.

A gzip or deflate body that ends before its compressed stream does (the gzip trailer
missing) is decoded by httpx as far as it goes and then flushed without a word (its zstd
decoder does complain), so the end of the body is checked against the decompressor's own
end-of-stream mark, read from the same private decoders (``CutEncoding``).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from typing import Any

import httpx

try:  # httpx has no public list of what it decodes; it passes other codings through as is
    from httpx._decoders import (
        SUPPORTED_DECODERS,
        DeflateDecoder,
        GZipDecoder,
        MultiDecoder,
    )
except ImportError as exc:  # pragma: no cover - only on an httpx outside pyproject's pin
    raise ImportError(
        "probes.adapters.body needs httpx._decoders.SUPPORTED_DECODERS (private; httpx is "
        "pinned >=0.28,<0.29 in pyproject.toml) to tell a body httpx decodes from one it "
        f"passes through undecoded; this httpx {httpx.__version__} has moved it"
    ) from exc

from probes.adapters.state import StreamState

__all__ = [
    "BODY_LIMIT",
    "ERROR_BODY_LIMIT",
    "CutEncoding",
    "NotAStream",
    "TooLarge",
    "decode_json",
    "describe_body",
    "drain",
    "encoding_ended",
    "read_limited",
    "read_whole",
    "undecodable",
]

ERROR_BODY_LIMIT = 64 * 1024
BODY_LIMIT = 32 * 1024 * 1024


class TooLarge(Exception):
    """The decoded answer passed the probe's byte cap."""


class NotAStream(Exception):
    """A 200 body with no event, comment or JSON in it: a portal or proxy page."""


class CutEncoding(Exception):
    """The body ended inside its compressed stream: what was decoded may be cut short."""


def encoding_ended(response: httpx.Response) -> None:
    """Raise ``CutEncoding`` when the body has ended but a gzip or deflate stream in it
    has not (a cut body, or a server that never wrote the trailer)."""
    if response.num_bytes_downloaded == 0:
        return  # an empty body under a content-encoding header holds nothing to cut
    decoder = getattr(response, "_decoder", None)
    stages = decoder.children if isinstance(decoder, MultiDecoder) else [decoder]
    for stage in stages:
        if isinstance(stage, (GZipDecoder, DeflateDecoder)) and not stage.decompressor.eof:
            coding = "gzip" if isinstance(stage, GZipDecoder) else "deflate"
            raise CutEncoding(
                f"the {coding} body ended before its compressed stream did "
                f"({response.num_bytes_downloaded:,} bytes): the answer may be cut"
            )


_TITLE = re.compile(rb"<title[^>]*>([^<]{1,200})", re.I)


def undecodable(headers: httpx.Headers) -> str | None:
    """The first content-encoding httpx has no decoder for, or None."""
    for value in headers.get_list("content-encoding", split_commas=True):
        coding = value.strip().lower()
        if coding and coding not in SUPPORTED_DECODERS:
            return coding
    return None


def describe_body(content_type: str, head: bytes, expected: str = "an event stream") -> str:
    """What came instead of ``expected``, in a few words (the caller scrubs it)."""
    media = content_type.split(";")[0].strip()
    what = f"a body of type {media}" if media else "a body without a content-type"
    found = _TITLE.search(head)
    title = " ".join(found[1].decode("utf-8", "replace").split())[:80] if found else ""
    return f"{what}, not {expected}" + (f": {title!r}" if title else "")


def decode_json(raw: bytes) -> Any:
    """The JSON in ``raw``, or its text (cut) when it is not JSON."""
    text = raw.decode("utf-8", errors="replace").strip()  # DeepSeek pads with blank lines
    try:
        return json.loads(text)
    except (ValueError, RecursionError):  # nesting deeper than the parser's recursion limit
        return text[:500]


async def read_limited(response: httpx.Response, limit: int) -> bytes:
    """The decoded body up to about ``limit`` bytes (the read stops at the first piece
    that reaches it)."""
    parts: list[bytes] = []
    size = 0
    async for piece in response.aiter_bytes():
        parts.append(piece)
        size += len(piece)
        if size >= limit:
            break
    return b"".join(parts)


async def read_whole(response: httpx.Response, state: StreamState, adapter: Any, cap: int) -> None:
    """A non-streamed body: past ``cap`` it is too large (cut, it would only read as broken
    JSON), and one that cannot be JSON at all is named for what it is."""
    raw = await read_limited(response, cap + 1)
    if len(raw) > cap:
        raise TooLarge(cap)
    encoding_ended(response)  # the whole body was read (an error reply's is not checked)
    if raw.strip() and raw.strip()[:1] not in (b"{", b"[", b'"'):
        content_type = response.headers.get("content-type", "")
        raise NotAStream(describe_body(content_type, raw[:ERROR_BODY_LIMIT], "JSON"))
    adapter.on_body(decode_json(raw), state)


async def drain(chunks: AsyncIterator[bytes], limit_s: float = 0.25) -> None:
    """Read what follows the terminator (the chunked-encoding end), so the connection
    goes back to the pool instead of being closed; bounded, since it is not needed."""
    try:
        async with asyncio.timeout(limit_s):
            async for _ in chunks:
                pass
    except (TimeoutError, httpx.TransportError):
        pass

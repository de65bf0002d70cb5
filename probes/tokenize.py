"""Count a prompt's tokens with the server's own tokenizer, where it offers one.

Self-hosted servers (llama.cpp's llama-server, vLLM) expose ``/tokenize`` beside ``/v1``.
One call before the timed request sizes a long prompt exactly on a tokenizer nerfwatch
has never seen; without it the first prompt can miss its target by half (UUIDs are 1.4
characters per token on one tokenizer, filler text 3.0). Any failure returns None: sizing
then falls back to the estimate, and the probe itself is never affected.
"""

from __future__ import annotations

from typing import Any

import httpx

__all__ = ["count_tokens", "tokenize_url"]

TIMEOUT_S = 10.0


def tokenize_url(base_url: str) -> str:
    """``http://host:8080/v1`` -> ``http://host:8080/tokenize``."""
    root = base_url.rstrip("/")
    return (root.removesuffix("/v1") or root) + "/tokenize"


def _count(dialect: str, reply: Any) -> int | None:
    if not isinstance(reply, dict):
        return None
    if dialect == "vllm" and isinstance(reply.get("count"), int):
        return int(reply["count"])
    tokens = reply.get("tokens")
    return len(tokens) if isinstance(tokens, list) else None


# What a pooled keep-alive connection the server closed as the request went out raises
# before any response byte (httpx: "Server disconnected without sending a response.").
_STALE = (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)


async def count_tokens(
    client: httpx.AsyncClient,
    *,
    base_url: str,
    dialect: str,
    model: str,
    text: str,
    headers: dict[str, str] | None = None,
) -> int | None:
    """Tokens of ``text`` as the server counts them (no chat template), or None.

    Counting is idempotent, so a transport failure (most often a kept-alive connection
    the server closed just as the call went out) gets one retry, which goes out on
    another connection: the failed one has left the pool. Without it the first long
    prompt on an unknown tokenizer went out at the bare estimate (60 % over target)."""
    body = {"model": model, "prompt": text} if dialect == "vllm" else {"content": text}
    url = tokenize_url(base_url)
    try:
        try:
            response = await client.post(url, json=body, headers=headers, timeout=TIMEOUT_S)
        except _STALE:
            response = await client.post(url, json=body, headers=headers, timeout=TIMEOUT_S)
        if response.status_code != 200:
            return None
        count = _count(dialect, response.json())
    except (httpx.HTTPError, ValueError):
        return None
    return count if count and count > 0 else None

"""A refused connection names the address it tried, and nothing secret."""

from __future__ import annotations

import asyncio
import socket

import httpx
import pytest

from pipeline.config import ProbeConfig, ProviderConfig
from probes.runner import run_probe

SECRET = "sk-test-0123456789abcdef"


def _closed_port() -> int:
    """A loopback port nobody listens on (bound once, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_refused_connection_names_host_and_port(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NW_TEST_KEY", SECRET)
    port = _closed_port()
    provider = ProviderConfig(
        name="closed", format="openai", base_url=f"http://127.0.0.1:{port}/v1?token=qs-secret",
        model="m", api_key_env="NW_TEST_KEY", preset="openai",
    )  # fmt: skip
    probe = ProbeConfig(
        name="t", task="arithmetic", context_tokens=1_000, every_s=60.0, cron=None,
        providers=("closed",), timeout_s=5.0, read_timeout_s=2.0,
    )  # fmt: skip

    async def go() -> str | None:
        async with httpx.AsyncClient() as client:
            result = await run_probe(provider, probe, client=client, seed=1)
        assert result.error_class == "connection_error"
        return result.error_detail

    detail = asyncio.run(go())
    assert detail == f"ConnectError: cannot connect to 127.0.0.1:{port} (connection refused)"

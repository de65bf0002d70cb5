"""Fidelity against a real inference server: llama.cpp's llama-server, built from source.

A tiny random-weight model (8,192-token context) answers nonsense, which does not matter:
what is tested is what nerfwatch measures and how it classifies, on a server nobody on
the team wrote. The session fixture starts one server; skipped locally without the
binary (with the reason), failed in CI.
"""

from __future__ import annotations

import asyncio

import httpx
import pytest

from pipeline.config import ProbeConfig, ProviderConfig
from pipeline.warehouse import Warehouse
from probes.result import ProbeResult
from probes.runner import run_probe
from probes.sizing import CharsPerToken
from tests.support.llama_server import LlamaServer

pytestmark = [pytest.mark.llama, pytest.mark.slow]


def _provider(server: LlamaServer, preset: str = "llamacpp") -> ProviderConfig:
    return ProviderConfig(
        name="llama", format="openai", base_url=server.base_url, model="tiny",
        api_key_env=None, preset=preset, max_context=server.context,
    )  # fmt: skip


def _probe(task: str, context: int, max_output_tokens: int = 8) -> ProbeConfig:
    return ProbeConfig(
        name=f"{task}-{context}", task=task, context_tokens=context, every_s=600.0, cron=None,
        providers=("llama",), max_output_tokens=max_output_tokens, timeout_s=120.0,
        read_timeout_s=120.0,
    )  # fmt: skip


def _run(
    provider: ProviderConfig, probes: list[ProbeConfig], estimator: CharsPerToken | None = None
) -> list[ProbeResult]:
    estimator = estimator or CharsPerToken(provider.chars_per_token)

    async def go() -> list[ProbeResult]:
        async with httpx.AsyncClient() as client:
            return [
                await run_probe(provider, p, client=client, seed=40 + i, estimator=estimator)
                for i, p in enumerate(probes)
            ]

    return asyncio.run(go())


def test_the_first_long_prompt_is_sized_by_the_servers_own_tokenizer(
    llama_server: LlamaServer,
) -> None:
    """Byte-fallback vocabulary: about 1.3 characters per token, far from any guess."""
    (first,) = _run(_provider(llama_server), [_probe("kv_lookup", 4_000)])
    assert first.input_tokens is not None, first.error_detail
    assert abs(first.input_tokens / 4_000 - 1) <= 0.05, first.input_tokens


def test_back_to_back_probes_meet_no_stale_connection(llama_server: LlamaServer) -> None:
    """llama-server closes the connection after each streamed answer despite keep-alive."""
    results = _run(_provider(llama_server), [_probe("arithmetic", 1_000)] * 60)
    classes = [r.error_class for r in results]
    assert "connection_error" not in classes, [r.error_detail for r in results]
    assert all(c in ("ok", "truncated") for c in classes), classes


def test_an_overflow_is_classified_and_sizes_the_next_prompt(llama_server: LlamaServer) -> None:
    provider = _provider(llama_server, preset="openai")  # no /tokenize: the error must teach
    estimator = CharsPerToken(provider.chars_per_token)
    overflow, fitted = _run(
        provider, [_probe("kv_lookup", 16_000), _probe("kv_lookup", 6_000)], estimator
    )
    assert overflow.error_class == "context_overflow", overflow.error_detail
    assert "8192" in (overflow.error_detail or "")
    assert fitted.input_tokens is not None, fitted.error_detail
    assert abs(fitted.input_tokens / 6_000 - 1) <= 0.05, fitted.input_tokens


def test_distinct_prompts_are_not_cache_hits(llama_server: LlamaServer) -> None:
    """The nonce leads every prompt, so only the template's few tokens can be reused."""
    results = _run(_provider(llama_server), [_probe("kv_lookup", 2_000)] * 3)
    for r in results:
        assert r.cached_tokens is not None and r.cached_tokens <= 64, r.cached_tokens
        assert "cache_hit" not in r.sanity_flags


def test_the_serving_stacks_fingerprint_is_stored_with_the_row(
    llama_server: LlamaServer, warehouse: Warehouse
) -> None:
    """llama-server sends ``system_fingerprint`` (its build) with every chunk."""
    (row,) = _run(_provider(llama_server), [_probe("arithmetic", 1_000)])
    assert row.system_fingerprint and row.system_fingerprint.startswith("b"), row
    warehouse.insert_rows("probe_results", [row.as_row()], key="run_id")
    stored = warehouse.query("SELECT system_fingerprint FROM probe_results")
    assert stored["system_fingerprint"].to_list() == [row.system_fingerprint]

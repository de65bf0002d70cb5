"""The first long prompt hits its token target on a tokenizer nerfwatch has never seen.

Two ways, both against the simulator over loopback HTTP (its tokenizer counts punctuation
and word pieces; nothing in nerfwatch knows its ratio): the server's /tokenize endpoint
measures the prompt before the timed request; without one, the ratio learned by earlier
runs comes back from the warehouse.
"""

from __future__ import annotations

import asyncio
import json
import tomllib
from dataclasses import replace
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.config import ProbeConfig, ProviderConfig
from pipeline.daemon.state import learned_chars_per_token
from pipeline.warehouse import Warehouse
from probes.result import ProbeResult
from probes.runner import run_probe
from probes.simulator import SimulatorHandle
from probes.simulator.tokens import count_tokens
from probes.sizing import CharsPerToken, overflow_prompt_tokens
from tests.support.loopback import Reply, openai_answer, serving
from tests.support.probing import loopback_provider, short_probe

TARGET = 8_000


def _provider(sim: SimulatorHandle, preset: str) -> ProviderConfig:
    spec = sim.scenario.provider("nova")
    return ProviderConfig(
        name="nova", format="openai", base_url=sim.provider_url("nova"), model=spec.model,
        api_key_env=None, preset=preset, max_context=200_000,
    )  # fmt: skip


def _probe(task: str) -> ProbeConfig:
    return ProbeConfig(
        name=f"long-{task}", task=task, context_tokens=TARGET, every_s=600.0, cron=None,
        providers=("nova",), max_output_tokens=32, timeout_s=60.0, read_timeout_s=60.0,
    )  # fmt: skip


def _run(
    provider: ProviderConfig, probe: ProbeConfig, estimator: CharsPerToken, n: int = 1
) -> list[ProbeResult]:
    async def go() -> list[ProbeResult]:
        async with httpx.AsyncClient() as client:
            return [
                await run_probe(provider, probe, client=client, seed=7 + i, estimator=estimator)
                for i in range(n)
            ]

    return asyncio.run(go())


def _miss(result: ProbeResult) -> float:
    assert result.input_tokens, result.error_detail
    return abs(result.input_tokens / TARGET - 1)


@pytest.mark.parametrize("task", ["kv_lookup", "multi_needle", "variable_tracking"])
def test_a_tokenize_endpoint_sizes_the_first_prompt_within_5_percent(
    simulator: SimulatorHandle, task: str
) -> None:
    provider = _provider(simulator, "simulator")  # the preset has a llama.cpp /tokenize
    (first,) = _run(provider, _probe(task), CharsPerToken(provider.chars_per_token))
    assert _miss(first) <= 0.05, first.input_tokens
    assert first.prompt_chars and first.prompt_chars > TARGET


def test_without_tokenize_the_warehouse_remembers_the_ratio(
    simulator: SimulatorHandle, warehouse: Warehouse
) -> None:
    provider = _provider(simulator, "vllm")
    provider = replace(provider, preset="openai")  # no /tokenize: only usage teaches
    probe = _probe("kv_lookup")
    cold = _run(provider, probe, CharsPerToken(provider.chars_per_token), n=3)
    assert _miss(cold[0]) > 0.05  # the guess is off on a tokenizer never seen
    warehouse.insert_rows("probe_results", [r.as_row() for r in cold], key="run_id")

    learned = learned_chars_per_token(warehouse)  # what a restarted daemon reads back
    (first,) = _run(provider, probe, CharsPerToken(provider.chars_per_token, learned["nova"]))
    assert _miss(first) <= 0.05, (first.input_tokens, learned)


def test_probe_context_is_checked_against_max_context(tmp_path: object) -> None:
    config = tmp_path / "nerfwatch.toml"  # type: ignore[operator]
    config.write_text(
        '[[providers]]\nname = "p"\nformat = "openai"\nbase_url = "http://127.0.0.1:9/v1"\n'
        'model = "m"\nmax_context = 8192\n\n[[probes]]\nname = "x"\ntask = "kv_lookup"\n'
        'context = "4k"\nevery = "10m"\n',
        encoding="utf-8",
    )
    result = CliRunner().invoke(app, ["probe", "p", "--config", str(config), "--context", "8150"])
    assert result.exit_code == 2, result.output
    assert "--context" in result.output and "max_context 8,192" in result.output


def test_an_overflow_that_states_the_count_corrects_the_next_prompt() -> None:
    """llama.cpp refuses an over-long prompt with its token count and no usage."""
    counts: list[int] = []

    def refuse(n: int, reused: bool) -> Reply:
        del n, reused
        prompt = json.loads(server.bodies[-1])["messages"][-1]["content"]
        counts.append(count_tokens(prompt))
        error = {"error": {"code": 400, "type": "exceed_context_size_error",
                           "message": f"request ({counts[-1]} tokens) exceeds the available "
                                      "context size (4096 tokens), try increasing it"}}  # fmt: skip
        return Reply(status=400, body=json.dumps(error).encode())

    with serving(refuse) as server:
        provider = ProviderConfig(
            name="llama", format="openai", base_url=f"http://127.0.0.1:{server.port}/v1",
            model="tiny", api_key_env=None, preset="openai", max_context=200_000,
        )  # fmt: skip
        first, second = _run(provider, _probe("kv_lookup"), CharsPerToken(4.0), n=2)
    assert first.error_class == second.error_class == "context_overflow"
    assert abs(counts[0] / TARGET - 1) > 0.05  # the first guess missed
    assert abs(counts[1] / TARGET - 1) <= 0.05, counts  # the stated count fixed the second


STATED = {  # server (as in fixtures/transcripts/overflow/wordings.toml) -> prompt tokens
    "llama.cpp": 25465, "vLLM": 40000, "vLLM (max_tokens too large)": 7800,
    "vLLM (decoder prompt)": 40000, "SGLang": 40000, "SGLang (max_tokens)": 40000,
    "OpenAI": 130000, "Anthropic": 210000, "Anthropic (with max_tokens)": 195000,
    "Gemini": 1200000, "DeepSeek": 139488, "OpenRouter": 139488,
}  # fmt: skip


def test_every_stated_count_in_the_overflow_wordings_is_read() -> None:
    path = Path(__file__).parent / "fixtures" / "transcripts" / "overflow" / "wordings.toml"
    rows = tomllib.loads(path.read_text(encoding="utf-8"))
    wordings = next(v for v in rows.values() if isinstance(v, list))
    read = {server: overflow_prompt_tokens(body) for server, _, _, _, body in wordings}
    assert {k: v for k, v in read.items() if v is not None} == STATED


def test_tokenize_on_a_connection_the_server_closed_still_sizes_the_prompt() -> None:
    """A llama.cpp server that closes a kept-alive connection just as the /tokenize call
    goes out (the earlier probe's connection, reused): the count is asked again on a fresh
    connection, so the long prompt is still sized, not sent at the bare estimate."""
    ratio = 1.4  # chars per token of this server's tokenizer; the estimate is 2.2
    dropped: list[int] = []

    def respond(n: int, reused: bool) -> Reply:
        body = json.loads(server.bodies[-1])
        if "content" not in body:  # the chat request
            return openai_answer()
        if reused and not dropped:
            dropped.append(n)
            return Reply(drop=True)  # closed without a byte, as an idle-timeout close races
        tokens = list(range(round(len(body["content"]) / ratio)))
        return Reply(body=json.dumps({"tokens": tokens}).encode())

    with serving(respond) as server:
        provider = loopback_provider(server.port, preset="llamacpp", max_context=200_000)
        estimator = CharsPerToken(4.0)

        async def go() -> list[ProbeResult]:
            async with httpx.AsyncClient() as client:  # one pool, as the daemon keeps
                warm = await run_probe(provider, short_probe(), client=client, estimator=estimator)
                long = await run_probe(
                    provider, _probe("kv_lookup"), client=client, seed=7, estimator=estimator
                )
                return [warm, long]

        warm, long = asyncio.run(go())
    assert warm.error_class == "ok" and dropped, "no /tokenize call met the closed connection"
    assert long.prompt_chars is not None
    assert abs(long.prompt_chars / (TARGET * ratio) - 1) <= 0.05, long.prompt_chars

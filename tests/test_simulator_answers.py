"""Answers and tokens: correct answers score correct, degraded ones do not."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from probes.simulator import SimulatorHandle
from probes.simulator.answers import compose
from probes.simulator.tokens import count_tokens, tokenize
from probes.tasks import FAMILIES

SCORED = [name for name in FAMILIES if name != "fixed_prompt"]


@given(st.text())
def test_tokens_join_back_to_the_text(text: str) -> None:
    tokens = tokenize(text)
    assert "".join(tokens) == text and count_tokens(text) == len(tokens)


def test_tokenizer_is_near_four_characters_per_token() -> None:
    prompt = FAMILIES["multi_needle"].item(1, 4_000).prompt
    assert 3.0 <= len(prompt) / count_tokens(prompt) <= 4.5


@pytest.mark.parametrize("family", SCORED)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_forced_outcomes_score_as_intended(family: str, seed: int) -> None:
    size = 2_000 if FAMILIES[family].KIND == "long" else 200
    item = FAMILIES[family].item(seed, size)
    rng = random.Random(seed)

    def reply(force: str) -> str:
        return compose(
            item.prompt, p_wrong=0, p_wrong_script=0, reasoning_sentences=0, rng=rng, force=force
        ).text

    assert FAMILIES[family].score(item, reply("correct")).strict == "correct"
    assert FAMILIES[family].score(item, reply("wrong")).strict == "wrong"
    assert FAMILIES[family].score(item, reply("format_slip")).strict != "correct"


def test_think_tags_provider_inlines_reasoning(
    simulator_factory: Callable[..., SimulatorHandle], tmp_path: Path
) -> None:
    path = tmp_path / "tags.toml"
    path.write_text(
        '[[providers]]\nname = "mm"\nvendor = "MM"\nformat = "openai"\nmodel = "mm-2"\n'
        'reasoning = "think_tags"\nreasoning_tokens = 20\n',
        encoding="utf-8",
    )
    sim = simulator_factory(path, quiet=True)
    item = FAMILIES["counting"].item(3, 200)
    body = {"model": "mm", "messages": [{"role": "user", "content": item.prompt}]}
    reply = httpx.post(sim.provider_url("mm") + "/chat/completions", json=body).json()
    content = reply["choices"][0]["message"]["content"]
    assert content.startswith("<think>") and "</think>" in content
    assert FAMILIES["counting"].score(item, content).strict == "correct"
    assert reply["usage"]["completion_tokens_details"]["reasoning_tokens"] > 0

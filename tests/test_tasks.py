"""Task families: determinism, rebuild from the header, sizing, and scoring verdicts."""

from __future__ import annotations

import json
import re

import pytest

from probes.tasks import FAMILIES, ladder, parse_context, rebuild
from probes.tasks.base import extract_lenient, extract_strict, parse_header

SHORT = [name for name, fam in FAMILIES.items() if fam.KIND != "long"]
LONG = [name for name, fam in FAMILIES.items() if fam.KIND == "long"]


def test_contract_names() -> None:
    assert set(FAMILIES) == {
        "arithmetic", "sorting", "counting", "json_extract", "instructions",
        "kv_lookup", "multi_needle", "variable_tracking", "fixed_prompt",
    }  # fmt: skip
    for name, family in FAMILIES.items():
        assert name == family.NAME
        assert family.VERSION >= 1
        assert family.KIND in {"short", "long", "distribution"}


@pytest.mark.parametrize("name", list(FAMILIES))
@pytest.mark.parametrize("seed", [0, 1, 2, 17, 2**40])
def test_rebuild_and_ideal_answer(name: str, seed: int) -> None:
    family = FAMILIES[name]
    item = family.item(seed, 2_000 if family.KIND == "long" else family.DEFAULT_SIZE, 3.7)
    assert rebuild(item.prompt) == item
    score = family.score(item, item.ideal_response())
    assert (score.strict, score.lenient) == ("correct", "correct")
    assert score.extracted is not None


@pytest.mark.parametrize("name", list(FAMILIES))
def test_same_seed_same_body_fresh_nonce(name: str) -> None:
    family = FAMILIES[name]
    a, b = family.item(5, 1_000), family.item(5, 1_000)
    assert a.prompt.split("\n", 1)[1] == b.prompt.split("\n", 1)[1]
    assert a.expected == b.expected
    assert a.prompt.split("\n", 1)[0] != b.prompt.split("\n", 1)[0]  # nonce leads, unique
    assert re.match(r"[0-9a-f]{32} family=", a.prompt)  # the nonce is the very first text


def test_different_seeds_differ() -> None:
    for name in FAMILIES:
        if name == "fixed_prompt":
            continue
        bodies = {FAMILIES[name].item(s, 1_000).prompt.split("\n", 1)[1] for s in range(10)}
        assert len(bodies) > 5, name


@pytest.mark.parametrize("name", LONG)
@pytest.mark.parametrize("size", [1_000, 8_000, 32_000])
def test_long_context_sized_to_target(name: str, size: int) -> None:
    item = FAMILIES[name].item(3, size, 4.0)
    assert abs(len(item.prompt) / 4.0 - size) / size < 0.05
    assert item.meta["depth"] in (0.1, 0.5, 0.9)


def test_depth_cycles_with_seed() -> None:
    depths = {FAMILIES["kv_lookup"].item(s, 1_000).meta["depth"] for s in range(3)}
    assert depths == {0.1, 0.5, 0.9}


def test_kv_needle_is_at_its_depth() -> None:
    item = FAMILIES["kv_lookup"].item(2, 8_000)  # seed 2 -> depth 0.9
    blob = item.prompt.split("\n")[1]
    assert 0.85 < blob.index(item.expected) / len(blob) < 0.95


def test_rebuild_rejects_foreign_and_stale_prompts() -> None:
    assert rebuild("hello") is None
    item = FAMILIES["arithmetic"].item(1, 100)
    stale = item.prompt.replace(" v=1 ", " v=99 ", 1)
    assert rebuild(stale) is None
    assert parse_header(item.prompt) is not None


@pytest.mark.parametrize(
    ("text", "strict", "lenient"),
    [
        ("ANSWER: 42", "correct", "correct"),
        ("42", "correct", "correct"),
        ("Let me think.\n6 * 7 = 42\nANSWER: 42", "correct", "correct"),
        ("The answer is **42**.", "unparseable", "correct"),
        ("ANSWER: 41", "wrong", "wrong"),
        ("ANSWER: 4,2", "unparseable", "correct"),
        ("I cannot help with that.\nSorry.", "unparseable", "unparseable"),
        ("", "unparseable", "unparseable"),
        ("<think>maybe 41</think>\nANSWER: 42", "correct", "correct"),
    ],
)
def test_integer_verdicts(text: str, strict: str, lenient: str) -> None:
    item = FAMILIES["arithmetic"].item(1, 100)
    item = type(item)(item.prompt, "42", item.meta)
    score = FAMILIES["arithmetic"].score(item, text)
    assert (score.strict, score.lenient) == (strict, lenient)


def test_json_extract_lenient_accepts_fenced_pretty_json() -> None:
    family = FAMILIES["json_extract"]
    item = family.item(4, 200)
    pretty = json.dumps(json.loads(item.expected), indent=2)
    score = family.score(item, f"Here you go:\n```json\n{pretty}\n```")
    assert (score.strict, score.lenient) == ("unparseable", "correct")
    wrong = dict(json.loads(item.expected), extra=1)
    assert family.score(item, f"ANSWER: {json.dumps(wrong)}").strict == "wrong"


def test_sorting_and_instructions_and_tracking() -> None:
    sorting = FAMILIES["sorting"]
    item = sorting.item(3, 100)
    numbers = json.loads(item.expected)
    assert sorting.score(item, f"ANSWER: {json.dumps(numbers[::-1])}").strict == "wrong"
    assert sorting.score(item, "ANSWER: " + ", ".join(map(str, numbers))).lenient == "correct"
    instr = FAMILIES["instructions"]
    it = instr.item(8, 100)
    assert instr.score(it, "ANSWER: " + it.expected + " EXTRA").strict == "wrong"
    vt = FAMILIES["variable_tracking"]
    it = vt.item(1, 1_000)
    shuffled = ", ".join(reversed(it.expected.split()))
    assert vt.score(it, f"ANSWER: {shuffled}").strict == "correct"
    assert vt.score(it, "ANSWER: " + it.expected.split()[0]).strict == "wrong"


def test_fixed_prompt_records_distribution() -> None:
    family = FAMILIES["fixed_prompt"]
    item = family.item(1, 50)
    assert family.score(item, "ANSWER: 3").extracted == "3"
    assert family.score(item, "ANSWER: 3").strict == "correct"
    assert family.score(item, "ANSWER: 11").strict == "wrong"


def test_extractors() -> None:
    assert extract_strict("a\nb") is None
    assert extract_strict("x\nANSWER:   7  ") == "7"
    assert extract_lenient("Final answer: `7`") == "7"


def test_ladder_and_context_parsing() -> None:
    assert ladder(200_000) == [1_000, 8_000, 32_000, 128_000, 180_000]
    assert ladder(32_768) == [1_000, 8_000, 32_000]
    assert parse_context("32k") == 32_000
    assert parse_context("1M") == 1_000_000
    assert parse_context("2048") == 2_048
    with pytest.raises(ValueError):
        parse_context("lots")

"""``nerfwatch drift discover|sample|check`` against a real llama-server."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.commands.drift import ALARM_EXIT
from pipeline.drift.baseline import load
from tests.support.llama_server import LlamaServer

pytestmark = [pytest.mark.llama, pytest.mark.slow]

SMALL = ["--candidates", "30", "--inputs", "5", "--reference-calls", "20", "--per-input", "6"]


@pytest.fixture
def config_file(tmp_path: Path, llama_server: LlamaServer) -> Path:
    path = tmp_path / "nerfwatch.toml"
    provider = {
        "name": "llama", "format": "openai", "preset": "llamacpp",
        "base_url": llama_server.base_url, "model": "tiny",
    }  # fmt: skip
    lines = ["[warehouse]", 'path = "data/nerfwatch.duckdb"', "[[providers]]"]
    lines += [f'{key} = "{value}"' for key, value in provider.items()]
    lines += ["[[probes]]", 'name = "p"', 'task = "arithmetic"', 'every = "1h"']
    path.write_text("\n".join(lines) + "\n")
    return path


def _drift(config: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["drift", *args, "--config", str(config)])
    return result.exit_code, result.output


def test_a_deterministic_server_has_no_border_inputs_at_temperature_0(config_file: Path) -> None:
    code, out = _drift(config_file, "discover", "llama", *SMALL, "--temperature", "0")
    assert code == 3, out
    assert "no border input among 30 prompts at temperature 0" in out


def test_discover_sample_check_then_accept_a_new_baseline(config_file: Path) -> None:
    stored = config_file.parent / "data" / "drift" / "llama" / "tiny.json"
    code, out = _drift(
        config_file, "discover", "llama", *SMALL, "--temperature", "0.03", "--logprob-calls", "4"
    )
    assert code == 0, out
    assert "5 border inputs from 190 calls" in out and "daily cost: 34 one-token calls" in out
    code, out = _drift(config_file, "sample", "llama", "--day", "2026-03-02")
    assert code == 0, out
    assert out.startswith("2026-03-02: mean TV 0.") and "(30 calls, 0 failed)" in out
    code, out = _drift(config_file, "check", "llama")
    assert code == 0 and code != ALARM_EXIT, out
    assert "rule: |TV - mean| > max(0.2, 4 sd) on 3 days in a row" in out
    assert "2026-03-02  TV 0." in out and "(null)" in out
    # 20 alternatives asked; byte tokens that decode to the same text count once
    assert re.search(r"2026-03-02  logprobs: L1 0.0000 over 1\d tokens, p = 1 \(4 vs 4", out)
    first = load(stored)
    assert len(first.reference) == 5 and [d.day for d in first.days] == ["2026-03-02"]
    prompt = max(max(c) for c in first.input_tokens.values())  # the server's own count
    plan = CliRunner().invoke(app, ["config", "check", "--no-env", "--config", str(config_file)])
    assert plan.exit_code == 0, plan.output
    assert (
        f"llama: drift sampling of tiny, 34 one-token calls/day, ≤ {34 * (prompt + 1):,} "
        "tokens/day, ≤ 0.0000 USD/day (nerfwatch drift sample)"
    ) in " ".join(plan.output.split()), plan.output

    code, out = _drift(config_file, "discover", "llama", *SMALL, "--temperature", "0.03")
    assert code == 0, out
    kept = list(stored.parent.glob("tiny.replaced-*.json"))
    assert len(kept) == 1 and load(kept[0]).days == first.days
    assert load(stored).days == []


def test_sample_before_discover_says_what_to_do(config_file: Path) -> None:
    code, out = _drift(config_file, "sample", "llama", "--day", "2026-03-02")
    assert code == 2 and "run `nerfwatch drift discover` first" in out

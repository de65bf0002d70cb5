"""``config check`` says where a daily cap cannot do what its owner expects.

Two cases a user cannot see in the plan's numbers alone: a plan whose worst case passes a
cap (probes will be skipped every day), and a provider with no prices under a dollar cap
(every probe costs 0 USD, so the cap never holds it back). Both warnings existed as
``plan.budget_warnings`` and were never printed.
"""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from pipeline.cli import app
from tests.test_config import VALID, write


def _check(tmp_path: Path, text: str) -> list[str]:
    path = write(tmp_path, text)
    result = CliRunner().invoke(app, ["config", "check", "--no-env", "--config", str(path)])
    assert result.exit_code == 0, result.output
    assert "sk-test-secret-value" not in result.output
    return [line for line in result.output.splitlines() if line.startswith("warning: ")]


def test_an_unpriced_provider_under_a_dollar_cap_is_named(tmp_path: Path) -> None:
    warnings = _check(tmp_path, VALID)  # beta has no prices; the total cap is 3 USD
    unpriced = [w for w in warnings if "no prices set" in w]
    assert len(unpriced) == 1 and unpriced[0].startswith("warning: beta: "), warnings


def test_no_unpriced_warning_without_a_dollar_cap(tmp_path: Path) -> None:
    text = VALID.replace("daily_cost_usd = 3.0\n", "")
    assert not [w for w in _check(tmp_path, text) if "no prices set" in w]


def test_a_plan_above_its_cap_is_named(tmp_path: Path) -> None:
    text = VALID.replace("daily_cost_usd = 3.0", "daily_cost_usd = 0.01")
    warnings = _check(tmp_path, text)
    assert any("above the daily cap of 0.01" in w for w in warnings), warnings

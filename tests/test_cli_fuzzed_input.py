"""Inputs a fuzzing session found to raise a traceback or to be accepted: each is now
refused in one line naming the option, file:key or variable, with exit status 2, and
nothing is written."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.commands.analyze import parse_since
from pipeline.config.durations import DurationError, parse_duration
from pipeline.warehouse import Warehouse
from probes.simulator import ScenarioError, bundled_scenario, load_scenario
from probes.simulator.history import generate, window
from probes.simulator.scenario import HistoryOptions

NOW = datetime(2026, 5, 1, 12, tzinfo=UTC)  # fixed: no test reads the clock
END = "2026-05-01T00:00:00"


def refused(args: list[str], cwd: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run the CLI in ``cwd``; assert exit 2 and one ``error:`` line; return that line."""
    monkeypatch.chdir(cwd)  # no ./nerfwatch.toml here, and defaults would land here
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, (result.output, result.exception)
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert lines[0].startswith("error: ")
    assert "Traceback" not in result.output
    return lines[0]


# 1. init: the path cannot be written


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        ("parent_is_file", "Not a directory"),
        ("missing_folder", "No such file or directory"),
        ("directory_forced", "Is a directory"),
    ],
)
def test_init_refuses_a_path_it_cannot_write(
    make: str, reason: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "afile").write_text("")
    (tmp_path / "adir").mkdir()
    path, extra = {
        "parent_is_file": (tmp_path / "afile" / "x.toml", []),
        "missing_folder": (tmp_path / "missing" / "x.toml", []),
        "directory_forced": (tmp_path / "adir", ["--force"]),
    }[make]
    line = refused(["init", str(path), *extra], tmp_path, monkeypatch)
    assert str(path) in line and reason in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["adir", "afile"]
    assert list((tmp_path / "adir").iterdir()) == []


# 2 and 3. durations too long for a timedelta or a date


def test_durations_beyond_a_timedelta_are_refused() -> None:
    from pipeline.config.durations import parse_timedelta  # new: absent before the fix

    assert parse_timedelta("999999999d") == timedelta(days=999_999_999)
    for text in ("1000000000d", "99999999999d", "9" * 400 + "d"):
        with pytest.raises(DurationError, match="at most 999999999d"):
            parse_timedelta(text)
        assert parse_duration(text) > 999_999_999 * 86_400.0  # the config checker caps it


def test_since_reaching_before_year_1_is_a_value_error() -> None:
    with pytest.raises(ValueError, match=r"^--since: look-back '1000000d' reaches before year 1$"):
        parse_since("1000000d", now=NOW)
    assert parse_since("1d", now=NOW) == datetime(2026, 4, 30, 12, tzinfo=UTC)


def test_analyze_refuses_a_huge_since(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    line = refused(
        ["analyze", "--since", "99999999999d", "--db", str(tmp_path / "w.duckdb")],
        tmp_path,
        monkeypatch,
    )
    assert line == "error: --since: look-back '99999999999d' reaches before year 1"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("keep", ["99999999999d", "36501d"])
def test_maintain_refuses_a_huge_keep(
    keep: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    line = refused(
        ["warehouse", "maintain", "--keep", keep, "--db", str(tmp_path / "w.duckdb")],
        tmp_path,
        monkeypatch,
    )
    assert line.startswith("error: --keep: expected ") and keep in line
    assert list(tmp_path.iterdir()) == []


# 4. simulate options that are not finite, or negative


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("--days", "nan"),
        ("--days", "inf"),
        ("--days", "1000000"),
        ("--cadence-minutes", "nan"),
        ("--noise", "-1"),
        ("--noise", "nan"),
        ("--step-scale", "nan"),
        ("--seed", "-1"),
        ("--end", "9999-12-31T12:00:00"),
    ],
)
def test_simulate_history_refuses_unusable_options(
    option: str, value: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "h.duckdb"
    args = ["simulate", "history", "--db", str(db), "--end", END, option, value]
    line = refused(args, tmp_path, monkeypatch)
    assert line.startswith(f"error: {option}: ")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("value", ["nan", "inf", "-1"])
def test_simulate_serve_refuses_an_unusable_time_scale(
    value: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a missing scenario: the old code would refuse it instead of serving, never hang
    missing = tmp_path / "absent.toml"
    args = ["simulate", "serve", "--port", "0", "--time-scale", value, "--scenario", str(missing)]
    line = refused(args, tmp_path, monkeypatch)
    assert line == f"error: --time-scale: expected a finite number >= 0, got {float(value)}"


def test_history_library_raises_value_errors_naming_the_input() -> None:
    scenario = load_scenario(bundled_scenario())
    for days in (math.nan, math.inf, 0.0, -1.0):
        with pytest.raises(ValueError, match="expected a number of days above zero"):
            window(scenario, days, NOW)
    with pytest.raises(ValueError, match="would start before year 1"):
        window(scenario, 1e6, NOW)
    win = window(scenario, 1.0, NOW)
    for options, name in [
        (HistoryOptions(cadence_minutes=math.nan), "cadence_minutes"),
        (HistoryOptions(noise=-1.0), "noise"),
    ]:
        with pytest.raises(ValueError, match=f"^{name}: expected a finite number"):
            generate(scenario, win, options=options)


# 5. scenario files


BUNDLED = bundled_scenario().read_text(encoding="utf-8")

# (line of the bundled scenario, its replacement, fragment the error must contain)
BAD_SCENARIO = {
    "latency_nan": ("base_latency_ms = 300.0", "base_latency_ms = nan", "'base_latency_ms'"),
    "latency_negative": (
        "base_latency_ms = 300.0",
        "base_latency_ms = -300.0",
        "providers[0]: key 'base_latency_ms': expected a number >= 0, got -300.0",
    ),
    "latency_inf": ("base_latency_ms = 300.0", "base_latency_ms = inf", "'base_latency_ms'"),
    "speed_zero": ("output_tps = 80.0", "output_tps = 0", "'output_tps'"),
    "probability_above_1": (
        "errors = { rate_limited = 0.003",
        "errors = { rate_limited = 1.5",
        "key 'errors'.rate_limited",
    ),
    "cadence_nan": ("cadence_minutes = 5.0", "cadence_minutes = nan", "[history]"),
    "ramp_negative": ("ramp_days = 8", "ramp_days = -8", "phases[7]: key 'ramp_days'"),
    "tokens_negative": ("reasoning_tokens = 30", "reasoning_tokens = -30", "'reasoning_tokens'"),
    "day_nan": ("day = 145", "day = nan", "key 'day'"),
    "demand_negative": ("seasonality = 1.0", "seasonality = 3.0", "demand would turn negative"),
    "seed_negative": ("seed = 20261120", "seed = -1", "key 'seed'"),
}


@pytest.mark.parametrize("case", list(BAD_SCENARIO))
def test_scenario_numbers_must_be_finite_and_in_range(case: str, tmp_path: Path) -> None:
    line, replacement, fragment = BAD_SCENARIO[case]
    assert BUNDLED.count(f"\n{line}") == 1  # the bundled file still has the line
    path = tmp_path / "bad.toml"
    text = BUNDLED.replace(f"\n{line}", f"\n{replacement}")
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    message = str(caught.value)
    assert fragment in message and "\n" not in message
    # the line named is the one changed, or for a product of two keys, one of the two
    number = int(message.removeprefix(f"{path}:").split(":")[0])
    named = text.splitlines()[number - 1]
    assert named.startswith(replacement) or (case == "demand_negative" and "amplitude" in named)


def test_a_non_utf8_scenario_is_a_scenario_error(tmp_path: Path) -> None:
    path = tmp_path / "latin1.toml"
    path.write_bytes('name = "café"\n'.encode("latin-1"))
    with pytest.raises(ScenarioError, match=r"latin1\.toml:\d+: not UTF-8 text"):
        load_scenario(path)


def test_simulate_history_names_the_scenario_key_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scenario = tmp_path / "nan.toml"
    scenario.write_text(BUNDLED.replace("\nbase_latency_ms = 300.0", "\nbase_latency_ms = nan"))
    number = BUNDLED.splitlines().index("base_latency_ms = 300.0") + 1
    db = tmp_path / "h.duckdb"
    args = ["simulate", "history", "--scenario", str(scenario), "--db", str(db), "--end", END]
    line = refused(args, tmp_path, monkeypatch)
    assert line == (
        f"error: {scenario}:{number}: providers[0]: key 'base_latency_ms': "
        "expected a finite number, got nan"
    )
    assert not db.exists()


def test_the_bundled_scenarios_still_load() -> None:
    for path in sorted(bundled_scenario().parent.glob("*.toml")):
        assert load_scenario(path).providers


# 6. NERFWATCH_LOCK_WAIT_S


def migrated(path: Path) -> Path:
    """A warehouse file with the tables, so ``sql`` gets as far as opening it."""
    warehouse = Warehouse(path)
    warehouse.migrate()
    warehouse.close()
    return path


@pytest.mark.parametrize("value", ["abc", "nan", "inf", "-1", ""])
def test_lock_wait_must_be_a_finite_number_of_seconds(
    value: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = migrated(tmp_path / "w.duckdb")
    monkeypatch.setenv("NERFWATCH_LOCK_WAIT_S", value)
    line = refused(["sql", "SELECT 1", "--db", str(db)], tmp_path, monkeypatch)
    assert line == (
        "error: environment variable NERFWATCH_LOCK_WAIT_S: expected a finite number of "
        f"seconds >= 0, got {value!r}"
    )


def test_lock_wait_of_zero_is_accepted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = migrated(tmp_path / "w.duckdb")
    monkeypatch.setenv("NERFWATCH_LOCK_WAIT_S", "0")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["sql", "SELECT 41 + 1 AS answer", "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert "42" in result.output

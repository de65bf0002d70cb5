"""Config loading: a valid file gives typed objects; each kind of bad input gives one line
naming file, line, key and what was expected, and exit status 2 from the CLI."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.config import ConfigError, load_config, parse_context
from pipeline.config.plan import format_runs
from pipeline.config.starter import STARTER_CONFIG

VALID = """\
[warehouse]
path = "data/nw.duckdb"

[[providers]]
name = "alpha"
format = "openai"
base_url = "http://127.0.0.1:9/alpha/v1"
model = "m-1"
api_key_env = "NW_TEST_KEY"
max_context = 64000
price_input_per_mtok = 2.0
price_output_per_mtok = 8.0

[[providers]]
name = "beta"
format = "anthropic"
base_url = "https://example.invalid/v1"
model = "m-2"
max_context = 16000

[[probes]]
name = "short"
task = "arithmetic"
every = "10m"
timeout = "60s"

[[probes]]
name = "long"
task = "kv_lookup"
context = "32k"
every = "30m"
providers = ["alpha"]

[budget]
daily_cost_usd = 3.0
[budget.providers.alpha]
daily_tokens = 100000

[report]
timezone = "Europe/Berlin"

[[alerts.webhooks]]
name = "hook"
url_env = "NW_TEST_HOOK"
"""


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NW_TEST_KEY", "sk-test-secret-value")
    monkeypatch.setenv("NW_TEST_HOOK", "http://127.0.0.1:9/hook")


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "nerfwatch.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_valid_config_builds_typed_objects(tmp_path: Path) -> None:
    cfg = load_config(write(tmp_path, VALID))
    assert [p.name for p in cfg.providers] == ["alpha", "beta"]
    alpha = cfg.provider("alpha")
    assert alpha.api_key() == "sk-test-secret-value"
    assert alpha.preset == "openai"
    short, long = cfg.probes
    assert short.every_s == 600 and short.timeout_s == 60 and short.providers == ("alpha", "beta")
    assert long.context_tokens == 32_000 and long.context_class == "long"
    assert cfg.warehouse.path == tmp_path / "data" / "nw.duckdb"
    assert cfg.budget.per_provider["alpha"].daily_tokens == 100_000
    assert cfg.alerts.webhooks[0].url() == "http://127.0.0.1:9/hook"


def test_starter_config_validates_without_keys(tmp_path: Path) -> None:
    cfg = load_config(write(tmp_path, STARTER_CONFIG))
    assert {p.task for p in cfg.probes} >= {"arithmetic", "kv_lookup", "fixed_prompt"}
    assert any(p.cron for p in cfg.probes)


def replace(old: str, new: str) -> str:
    assert old in VALID, old
    return VALID.replace(old, new, 1)


def line_of(text: str, marker: str, occurrence: int) -> int:
    """1-based line of the n-th line that contains ``marker``."""
    hits = [i for i, line in enumerate(text.splitlines(), start=1) if marker in line]
    return hits[occurrence - 1]


# (file text, expected fragments of the one-line message, (line marker, occurrence) or None)
BAD = {
    "malformed toml": (VALID + "\n[[probes]\n", ["malformed TOML"], ("[[probes]", 3)),
    "unknown top key": (
        VALID + "\n[reprot]\n",
        ["reprot", "unknown key", 'did you mean "report"'],
        ("[reprot]", 1),
    ),
    "unknown provider key": (
        replace('model = "m-1"', 'modle = "m-1"'),
        ["providers[0].modle", 'did you mean "model"'],
        ('modle = "m-1"', 1),
    ),
    "unknown probe key": (
        replace('every = "10m"', 'evry = "10m"'),
        ["probes[0].evry", 'did you mean "every"'],
        ('evry = "10m"', 1),
    ),
    "wrong type int": (
        replace("max_context = 64000", 'max_context = "big"'),
        ["providers[0].max_context", "expected a positive token count", "string"],
        ('max_context = "big"', 1),
    ),
    "wrong type bool for number": (
        replace("price_input_per_mtok = 2.0", "price_input_per_mtok = true"),
        ["providers[0].price_input_per_mtok", "boolean"],
        ("price_input_per_mtok = true", 1),
    ),
    "missing required model": (
        replace('model = "m-2"\n', ""),
        ["providers[1].model", "missing required key"],
        ("[[providers]]", 2),
    ),
    "missing providers": (
        VALID[VALID.index("[[probes]]") :]
        .replace('providers = ["alpha"]\n', "")
        .replace("[budget.providers.alpha]\ndaily_tokens = 100000\n", ""),
        ["providers", "missing required key"],
        None,
    ),
    "missing api key env": (
        replace('api_key_env = "NW_TEST_KEY"', 'api_key_env = "NW_UNSET_X"'),
        ["providers[0].api_key_env", "NW_UNSET_X is not set"],
        ('api_key_env = "NW_UNSET_X"', 1),
    ),
    "bad env var name": (
        replace('api_key_env = "NW_TEST_KEY"', 'api_key_env = "sk-abc"'),
        ["providers[0].api_key_env", "environment variable name"],
        ('api_key_env = "sk-abc"', 1),
    ),
    "duplicate provider": (
        replace('name = "beta"', 'name = "alpha"'),
        ["providers[1].name", "duplicate provider name 'alpha'"],
        ('name = "alpha"', 2),
    ),
    "duplicate probe": (
        replace('name = "long"', 'name = "short"'),
        ["probes[1].name", "duplicate probe name"],
        ('name = "short"', 2),
    ),
    "timeout longer than interval": (
        replace('timeout = "60s"', 'timeout = "20m"'),
        ["probes[0].timeout", "longer than the interval"],
        ('timeout = "20m"', 1),
    ),
    "unknown task family": (
        replace('task = "arithmetic"', 'task = "arithmatic"'),
        ["probes[0].task", "unknown task family", 'did you mean "arithmetic"'],
        ('task = "arithmatic"', 1),
    ),
    "context above max": (
        replace('context = "32k"', 'context = "64k"'),
        [
            "probes[1].context",
            "exceeds provider 'alpha' max_context 64,000; lower its context or list the "
            "providers it runs on (providers = [...])",
        ],
        ('context = "64k"', 1),
    ),
    "bad format": (
        replace('format = "openai"', 'format = "oai"'),
        ["providers[0].format", '"openai" or "anthropic"'],
        ('format = "oai"', 1),
    ),
    "bad url": (
        replace('base_url = "https://example.invalid/v1"', 'base_url = "example.invalid"'),
        ["providers[1].base_url", "http(s) URL"],
        ('base_url = "example.invalid"', 1),
    ),
    "credentials in url": (
        replace(
            'base_url = "https://example.invalid/v1"', 'base_url = "https://u:p@example.invalid/v1"'
        ),
        ["providers[1].base_url", "credentials"],
        ('base_url = "https://u:p@example.invalid/v1"', 1),
    ),
    "secret header": (
        replace('model = "m-2"', 'model = "m-2"\nheaders = { Authorization = "x" }'),
        ["providers[1].headers.Authorization", "secrets"],
        None,
    ),
    "bad duration": (
        replace('every = "10m"', 'every = "ten minutes"'),
        ["probes[0].every", "duration"],
        ('every = "ten minutes"', 1),
    ),
    "no schedule": (
        replace('every = "10m"\n', ""),
        ["probes[0].every", "missing schedule"],
        ("[[probes]]", 1),
    ),
    "both schedules": (
        replace('every = "10m"', 'every = "10m"\ncron = "* * * * *"'),
        ["probes[0].cron", "not both"],
        ('cron = "* * * * *"', 1),
    ),
    "bad cron": (
        replace('every = "30m"', 'cron = "61 * * * *"'),
        ["probes[1].cron", "crontab"],
        ('cron = "61 * * * *"', 1),
    ),
    "unknown probe provider": (
        replace('providers = ["alpha"]', 'providers = ["alpah"]'),
        ["probes[1].providers[0]", 'did you mean "alpha"'],
        ('providers = ["alpah"]', 1),
    ),
    "unknown budget provider": (
        replace("[budget.providers.alpha]", "[budget.providers.gamma]"),
        ["budget.providers.gamma", "unknown provider"],
        ("[budget.providers.gamma]", 1),
    ),
    "bad timezone": (
        replace('timezone = "Europe/Berlin"', 'timezone = "Mars/Olympus"'),
        ["report.timezone", "unknown time zone"],
        ('timezone = "Mars/Olympus"', 1),
    ),
    "temperature out of range": (
        replace('every = "10m"', 'every = "10m"\ntemperature = 3.5'),
        ["probes[0].temperature", "0 to 2"],
        ("temperature = 3.5", 1),
    ),
    "missing webhook env": (
        replace('url_env = "NW_TEST_HOOK"', 'url_env = "NW_UNSET_HOOK"'),
        ["alerts.webhooks[0].url_env", "not set"],
        ('url_env = "NW_UNSET_HOOK"', 1),
    ),
    "probe threads out of range": (
        VALID + "\n[daemon]\nprobe_threads = 99\n",
        ["daemon.probe_threads", "0 to 64", "99"],
        ("probe_threads = 99", 1),
    ),
    "bad context text": (
        replace('context = "32k"', 'context = "lots"'),
        ["probes[1].context", "token count"],
        ('context = "lots"', 1),
    ),
    "context beyond a float": (
        replace('context = "32k"', 'context = "' + "9" * 300 + 'k"'),
        ["probes[1].context", "token count"],
        ('context = "999', 1),
    ),
    "NaN in a body": (
        replace('model = "m-1"', 'model = "m-1"\nbody = { reasoning = { effort = nan } }'),
        ["providers[0].body.reasoning.effort", "finite number"],
        None,
    ),
    "name too long": (
        replace('name = "beta"', 'name = "' + "b" * 65 + '"'),
        ["providers[1].name", "at most 64 characters"],
        ('name = "bbb', 1),
    ),
}


def test_a_key_pasted_as_the_variable_name_is_not_repeated(tmp_path: Path) -> None:
    pasted = "sk-PASTED-CANARY-0123456789abcdef"
    path = write(tmp_path, replace('api_key_env = "NW_TEST_KEY"', f'api_key_env = "{pasted}"'))
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert "providers[0].api_key_env" in str(info.value)
    assert "PASTED-CANARY" not in str(info.value)


def test_a_byte_order_mark_is_fine_and_bytes_that_are_not_utf8_name_their_line(
    tmp_path: Path,
) -> None:
    path = tmp_path / "nerfwatch.toml"
    path.write_bytes(b"\xef\xbb\xbf" + VALID.encode())
    assert [p.name for p in load_config(path).providers] == ["alpha", "beta"]
    broken = VALID.replace('model = "m-2"', 'model = "m-\u00e9"').encode("latin-1")
    path.write_bytes(broken)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert info.value.line == line_of(VALID, 'model = "m-2"', 1)
    assert "not UTF-8 text (byte 0xe9)" in str(info.value)


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_config_is_one_clear_line(tmp_path: Path, case: str) -> None:
    text, fragments, line = BAD[case]  # type: ignore[misc]
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(str(path))
    for fragment in fragments:
        assert fragment in message, message
    if line is not None:
        marker, occurrence = line
        assert info.value.line == line_of(text, marker, occurrence), message
    assert "sk-test-secret-value" not in message


def test_cli_config_check_exits_2_on_bad_input(tmp_path: Path) -> None:
    path = write(tmp_path, replace('task = "arithmetic"', 'task = "arithmatic"'))
    result = CliRunner().invoke(app, ["config", "check", "--config", str(path)])
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "probes[0].task" in lines[0]


def test_cli_config_check_prints_plan(tmp_path: Path) -> None:
    path = write(tmp_path, VALID)
    result = CliRunner().invoke(app, ["config", "check", "--config", str(path)])
    assert result.exit_code == 0, result.output
    assert "config OK" in result.output
    # short probe: 144 runs/day against each of two providers; long: 48 runs/day on alpha
    cells = [line.split("│") for line in result.output.splitlines() if "│" in line]
    runs = [cell[6].strip() for cell in cells if len(cell) > 7 and cell[1].strip()]
    assert sorted(runs) == ["144", "144", "48"], result.output
    assert "alpha: 192 runs/day" in result.output
    assert "daily budget: 3.00 USD, - tokens" in result.output
    assert "sk-test-secret-value" not in result.output


def test_config_check_missing_file(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["config", "check", "--config", str(tmp_path / "nope.toml")])
    assert result.exit_code == 2
    assert "file not found" in result.output


def test_init_writes_starter_and_refuses_to_overwrite(tmp_path: Path) -> None:
    path = tmp_path / "nerfwatch.toml"
    assert CliRunner().invoke(app, ["init", str(path)]).exit_code == 0
    assert path.read_text(encoding="utf-8") == STARTER_CONFIG
    again = CliRunner().invoke(app, ["init", str(path)])
    assert again.exit_code == 2 and "already exists" in again.output


@pytest.mark.parametrize(
    ("text", "tokens"),
    [("1k", 1000), ("32k", 32_000), ("1.5k", 1500), ("1m", 1_000_000), (2048, 2048), ("512", 512)],
)
def test_parse_context(text: str | int, tokens: int) -> None:
    assert parse_context(text) == tokens


@pytest.mark.parametrize(
    "text", ["", "k", "-1k", "0", "12q", True, "9" * 300 + "k", 10**13, "1000000m"]
)
def test_parse_context_rejects(text: str | int) -> None:
    with pytest.raises(ValueError):
        parse_context(text)


@pytest.mark.parametrize(
    ("cron", "normalized"),
    [
        ("0 9 * * 1", "0 9 * * mon"),  # crontab: 1 = Monday (APScheduler alone would say Tue)
        ("0 9 * * 1-5", "0 9 * * mon,tue,wed,thu,fri"),
        ("0 0 * * 0", "0 0 * * sun"),
        ("0 0 * * 7", "0 0 * * sun"),
        ("0 0 * * */2", "0 0 * * tue,thu,sat,sun"),
        ("0 0 * * 1/2", "0 0 * * mon,wed,fri"),
        ("0 0 * * sat,sun", "0 0 * * sat,sun"),
        ("*/10 * * * *", "*/10 * * * *"),
    ],
)
def test_cron_weekdays_follow_crontab(tmp_path: Path, cron: str, normalized: str) -> None:
    path = write(tmp_path, replace('every = "10m"', f'cron = "{cron}"'))
    probe = load_config(path).probes[0]
    assert probe.cron == normalized
    from pipeline.config.schedule import cron_fire_times

    days = {t.strftime("%a").lower() for t in cron_fire_times(probe.cron)}
    if normalized.split()[4] != "*":
        assert days == set(normalized.split()[4].split(","))


def test_read_timeout_defaults_within_a_short_timeout(tmp_path: Path) -> None:
    cfg = load_config(write(tmp_path, replace('timeout = "60s"', 'timeout = "5s"')))
    assert cfg.probes[0].timeout_s == 5 and cfg.probes[0].read_timeout_s == 5
    assert cfg.probes[1].read_timeout_s == 30


def test_read_timeout_longer_than_timeout_is_refused(tmp_path: Path) -> None:
    text = replace('timeout = "60s"', 'timeout = "5s"\nread_timeout = "10s"')
    with pytest.raises(ConfigError, match=r"probes\[0\]\.read_timeout: 10s is longer"):
        load_config(write(tmp_path, text))


def test_timeout_defaults_within_a_short_interval(tmp_path: Path) -> None:
    cfg = load_config(write(tmp_path, replace('every = "30m"', 'every = "7s"')))
    assert cfg.probes[1].timeout_s == 7 and cfg.probes[1].read_timeout_s == 7


@pytest.mark.parametrize(
    ("per_day", "shown"), [(144.0, "144"), (1440.0, "1,440"), (1440 / 7, "205.7"), (0.5, "0.5")]
)
def test_runs_per_day_are_whole_numbers_unless_the_day_does_not_divide(
    per_day: float, shown: str
) -> None:
    assert format_runs(per_day) == shown

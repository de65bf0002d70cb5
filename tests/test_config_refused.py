"""Configs that cannot work are refused by ``config check``: one line, file/line/key, exit 2.

Each case is a small edit of the valid file in test_config; before these checks each was
accepted (and then stored NaN costs, disabled a cap, overflowed the scheduler, leaked a
key, or ran a daemon that stored nothing) or ended in a traceback.
"""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.config import ConfigError, load_config
from tests.support.mounts import unwritable_folder
from tests.test_config import VALID

PROVIDER_LINE = 'model = "m-1"'
PROBE_LINE = 'every = "10m"\ntimeout = "60s"'


def edit(old: str, new: str) -> str:
    assert old in VALID, old
    return VALID.replace(old, new, 1)


def provider(extra: str) -> str:
    """The first provider with ``extra`` lines added."""
    return edit(PROVIDER_LINE, f"{PROVIDER_LINE}\n{extra}")


def headers(table: str) -> str:
    """A [providers.headers] table on the second provider (at the end of its table)."""
    return edit("max_context = 16000\n", f"max_context = 16000\nheaders = {table}\n")


def body(table: str) -> str:
    return edit("max_context = 16000\n", f"max_context = 16000\nbody = {table}\n")


def report(extra: str) -> str:
    return edit('timezone = "Europe/Berlin"', f'timezone = "Europe/Berlin"\n{extra}')


def warehouse(extra: str) -> str:
    return edit('path = "data/nw.duckdb"', extra)


def lake(extra: str) -> str:
    """The [warehouse] table with ``extra`` lines after its path."""
    return warehouse(f'path = "data/nw.duckdb"\n{extra}')


# case: (file text, fragments every message must contain)
REFUSED: dict[str, tuple[str, list[str]]] = {
    # numbers that make no sense
    "price nan": (
        edit("price_input_per_mtok = 2.0", "price_input_per_mtok = nan"),
        ["price_input_per_mtok", "nan"],
    ),
    "price inf": (
        edit("price_output_per_mtok = 8.0", "price_output_per_mtok = inf"),
        ["price_output_per_mtok", "inf"],
    ),
    "price -inf": (
        edit("price_input_per_mtok = 2.0", "price_input_per_mtok = -inf"),
        ["price_input_per_mtok"],
    ),
    "price negative": (
        edit("price_input_per_mtok = 2.0", "price_input_per_mtok = -1.0"),
        ["price_input_per_mtok", "0 or more"],
    ),
    "cached price nan": (provider("price_cached_per_mtok = nan"), ["price_cached_per_mtok"]),
    "cache write price negative": (
        provider("price_cache_write_per_mtok = -3.75"),
        ["price_cache_write_per_mtok", "0 or more"],
    ),
    "daily cost nan": (
        edit("daily_cost_usd = 3.0", "daily_cost_usd = nan"),
        ["budget.daily_cost_usd", "nan"],
    ),
    "daily cost inf": (
        edit("daily_cost_usd = 3.0", "daily_cost_usd = inf"),
        ["budget.daily_cost_usd"],
    ),
    "daily cost negative": (
        edit("daily_cost_usd = 3.0", "daily_cost_usd = -3.0"),
        ["budget.daily_cost_usd", "positive"],
    ),
    "daily tokens beyond int64": (
        edit("daily_tokens = 100000", "daily_tokens = 9223372036854775808"),
        ["daily_tokens", "64-bit"],
    ),
    "max context beyond int64": (
        edit("max_context = 64000", "max_context = 99999999999999999999"),
        ["max_context", "64-bit"],
    ),
    "max output beyond int64": (
        edit(
            'task = "arithmetic"', 'task = "arithmetic"\nmax_output_tokens = 18446744073709551616'
        ),
        ["max_output_tokens", "64-bit"],
    ),
    "ttft alert negative": (
        VALID + "\n[alerts]\nttft_p95_ms = -100\n",
        ["alerts.ttft_p95_ms", "positive"],
    ),
    "ttft alert nan": (VALID + "\n[alerts]\nttft_p95_ms = nan\n", ["alerts.ttft_p95_ms"]),
    "error rate nan": (VALID + "\n[alerts]\nerror_rate = nan\n", ["alerts.error_rate"]),
    "temperature nan": (
        edit('task = "arithmetic"', 'task = "arithmetic"\ntemperature = nan'),
        ["temperature"],
    ),
    "chars per token inf": (provider("chars_per_token = inf"), ["chars_per_token"]),
    "chars per token zero": (provider("chars_per_token = 0"), ["chars_per_token"]),
    "window zero": (VALID + "\n[alerts]\nwindow = 0\n", ["alerts.window"]),
    "max concurrency zero": (provider("max_concurrency = 0"), ["max_concurrency"]),
    "metrics port huge": (VALID + "\n[daemon]\nmetrics_port = 70000\n", ["daemon.metrics_port"]),
    # durations and schedules
    "huge every": (
        edit('every = "10m"', 'every = "99999999999999999999d"'),
        ["probes[0].every", "366d"],
    ),
    "huge timeout every": (
        edit('every = "30m"', 'every = "400d"\ntimeout = "399d"'),
        ["probes[1].every", "366d"],
    ),
    "huge flush interval": (
        VALID + '\n[daemon]\nflush_interval = "9999999d"\n',
        ["daemon.flush_interval"],
    ),
    "huge shutdown grace": (
        VALID + '\n[daemon]\nshutdown_grace = "400d"\n',
        ["daemon.shutdown_grace"],
    ),
    "cron feb 30": (
        edit('every = "30m"', 'cron = "0 0 30 2 *"'),
        ["probes[1].cron", "never fires"],
    ),
    "cron feb 31": (
        edit('every = "30m"', 'cron = "0 12 31 2 *"'),
        ["probes[1].cron", "never fires"],
    ),
    "cron apr 31": (
        edit('every = "30m"', 'cron = "0 0 31 4 *"'),
        ["probes[1].cron", "never fires"],
    ),
    # names
    "provider name newline": (edit('name = "alpha"', 'name = "alpha\\n"'), ["providers[0].name"]),
    "probe name newline": (edit('name = "short"', 'name = "short\\n"'), ["probes[0].name"]),
    "webhook name newline": (
        edit('name = "hook"', 'name = "hook\\n"'),
        ["alerts.webhooks[0].name"],
    ),
    "key env newline": (
        edit('api_key_env = "NW_TEST_KEY"', 'api_key_env = "NW_TEST_KEY\\n"'),
        ["api_key_env"],
    ),
    # headers
    "header value crlf": (
        headers('{ "x-trace" = "a\\r\\nX-Evil: 1" }'),
        ["headers.x-trace", "line breaks"],
    ),
    "header value newline": (headers('{ "x-trace" = "a\\nb" }'), ["headers.x-trace"]),
    "header value nul": (headers('{ "x-trace" = "a\\u0000b" }'), ["headers.x-trace"]),
    "header name space": (headers('{ "x trace" = "1" }'), ["headers", "header name"]),
    "header name colon": (headers('{ "x-trace:" = "1" }'), ["header name"]),
    "header name unicode": (headers('{ "x-tracé" = "1" }'), ["header name"]),
    "header goog key": (headers('{ "x-goog-api-key" = "AIza123" }'), ["x-goog-api-key", "secrets"]),
    "header api-key": (headers('{ "api-key" = "abc" }'), ["api-key", "secrets"]),
    "header auth token": (headers('{ "X-Auth-Token" = "abc" }'), ["X-Auth-Token", "secrets"]),
    "header azure subscription": (headers('{ "Ocp-Apim-Subscription-Key" = "abc" }'), ["secrets"]),
    "header proxy authorization": (headers('{ "Proxy-Authorization" = "Basic x" }'), ["secrets"]),
    # credentials in URLs
    "url api-key query": (
        edit('"https://example.invalid/v1"', '"https://example.invalid/v1?api-key=abc"'),
        ["providers[1].base_url", "credentials"],
    ),
    "url access_token query": (
        edit('"https://example.invalid/v1"', '"https://example.invalid/v1?x=1&access_token=abc"'),
        ["credentials"],
    ),
    "url sig query": (
        edit('"https://example.invalid/v1"', '"https://example.invalid/v1?sig=abc"'),
        ["credentials"],
    ),
    # body fields the probe owns
    "body max_tokens": (body("{ max_tokens = 5 }"), ["body.max_tokens", "probe sets"]),
    "body max_completion_tokens": (
        body("{ max_completion_tokens = 5 }"),
        ["body.max_completion_tokens"],
    ),
    "body temperature": (body("{ temperature = 1.5 }"), ["body.temperature"]),
    "body stream_options": (
        body("{ stream_options = { include_usage = false } }"),
        ["body.stream_options"],
    ),
    "body n": (body("{ n = 3 }"), ["body.n"]),
    # the response byte cap
    "byte cap zero": (
        edit('task = "arithmetic"', 'task = "arithmetic"\nmax_response_bytes = 0'),
        ["probes[0].max_response_bytes"],
    ),
    "byte cap huge": (
        edit('task = "arithmetic"', 'task = "arithmetic"\nmax_response_bytes = 99000000000'),
        ["max_response_bytes", "1000000000"],
    ),
    # report
    "link base url ftp": (
        report('link_base_url = "ftp://reports.example/"'),
        ["report.link_base_url", "http(s)"],
    ),
    "link base url javascript": (
        report('link_base_url = "javascript:alert(1)"'),
        ["report.link_base_url"],
    ),
    # structure
    "deep nesting": ("x = " + "[" * 3000 + "]" * 3000 + "\n" + VALID, ["malformed TOML", "nested"]),
    # warehouse and spool paths
    "warehouse under proc": (
        warehouse('path = "/proc/nw.duckdb"'),
        ["warehouse.path", "special file system"],
    ),
    "warehouse under dev": (warehouse('path = "/dev/shm-nope/nw.duckdb"'), ["warehouse.path"]),
    "spool is a device": (
        warehouse('path = "data/nw.duckdb"\nspool_dir = "/dev/null"'),
        ["warehouse.spool_dir"],
    ),
    "warehouse equals spool": (
        warehouse('path = "same"\nspool_dir = "same"'),
        ["warehouse.spool_dir", "differ"],
    ),
    # the ducklake backend
    "backend unknown": (lake('backend = "ducklak"'), ["warehouse.backend", '"ducklake"']),
    "lake without catalog": (
        lake('backend = "ducklake"\ndata_path = "lake"'),
        ["warehouse.backend", "needs warehouse.catalog"],
    ),
    "lake without data path": (
        lake('backend = "ducklake"\ncatalog = "sqlite:c.sqlite"'),
        ["warehouse.backend", "needs warehouse.data_path"],
    ),
    "catalog of unknown kind": (
        lake('backend = "ducklake"\ncatalog = "mysql:db"\ndata_path = "lake"'),
        ["warehouse.catalog", "sqlite:PATH"],
    ),
    "postgres catalog with a password": (
        lake('backend = "ducklake"\ncatalog = "postgres:host=h password=hunter2"\ndata_path = "l"'),
        ["warehouse.catalog", "PGPASSWORD"],
    ),
    "postgres catalog as a url": (
        lake('backend = "ducklake"\ncatalog = "postgres:postgresql://u@h/db"\ndata_path = "l"'),
        ["warehouse.catalog", "password"],
    ),
    "catalog under proc": (
        lake('backend = "ducklake"\ncatalog = "sqlite:/proc/c.sqlite"\ndata_path = "lake"'),
        ["warehouse.catalog", "special file system"],
    ),
    "data path of another scheme": (
        lake('backend = "ducklake"\ncatalog = "sqlite:c.sqlite"\ndata_path = "gs://b/p"'),
        ["warehouse.data_path", "s3://bucket/prefix"],
    ),
    "s3 data path without its key": (
        lake(
            'backend = "ducklake"\ncatalog = "sqlite:c.sqlite"\ndata_path = "s3://bucket/p"\n'
            's3_key_id_env = "NW_TEST_UNSET_S3_KEY"'
        ),
        ["warehouse.s3_key_id_env", "NW_TEST_UNSET_S3_KEY is not set"],
    ),
    "s3 variable that is no name": (
        lake(
            'backend = "ducklake"\ncatalog = "sqlite:c.sqlite"\ndata_path = "lake"\n'
            's3_region_env = "not a name"'
        ),
        ["warehouse.s3_region_env", "environment variable name"],
    ),
    "catalog without the ducklake backend": (
        lake('catalog = "sqlite:c.sqlite"'),
        ["warehouse.catalog", 'only used with backend = "ducklake"'],
    ),
}


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NW_TEST_KEY", "sk-test-secret-value")
    monkeypatch.setenv("NW_TEST_HOOK", "http://127.0.0.1:9/hook")


def _check(tmp_path: Path, text: str) -> tuple[int, str]:
    path = tmp_path / "nerfwatch.toml"
    path.write_text(text, encoding="utf-8")
    result = CliRunner().invoke(app, ["config", "check", "--config", str(path)])
    return result.exit_code, result.output


def test_there_are_enough_cases() -> None:
    assert len(REFUSED) >= 40


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_config_check_refuses_in_one_line(tmp_path: Path, case: str) -> None:
    text, fragments = REFUSED[case]
    code, output = _check(tmp_path, text)
    lines = output.strip().splitlines()
    assert code == 2, output
    assert len(lines) == 1 and lines[0].startswith("error: ") and "nerfwatch.toml" in lines[0]
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    assert "sk-test-secret-value" not in output and "hunter2" not in output


def test_the_valid_file_still_passes(tmp_path: Path) -> None:
    code, output = _check(tmp_path, VALID)
    assert code == 0, output


def test_a_key_variable_of_whitespace_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NW_TEST_KEY", "  \t")
    code, output = _check(tmp_path, VALID)
    assert code == 2 and "providers[0].api_key_env" in output and "blank" in output


def _files(tmp_path: Path) -> dict[str, tuple[str, str]]:
    """Cases that need real files: (config text, fragment)."""
    (tmp_path / "a-file").write_text("x", encoding="utf-8")
    (tmp_path / "a-folder").mkdir()
    return {
        "warehouse is a folder": (warehouse('path = "a-folder"'), "warehouse.path"),
        "warehouse under a file": (warehouse('path = "a-file/nw.duckdb"'), "warehouse.path"),
        "spool is a file": (warehouse('path = "x.duckdb"\nspool_dir = "a-file"'), "spool_dir"),
        "report folder is a file": (report('out_dir = "a-file"'), "report.out_dir"),
    }


@pytest.mark.parametrize(
    "case",
    [
        "warehouse is a folder",
        "warehouse under a file",
        "spool is a file",
        "report folder is a file",
    ],
)
def test_unusable_paths_are_refused(tmp_path: Path, case: str) -> None:
    text, fragment = _files(tmp_path)[case]
    code, output = _check(tmp_path, text)
    assert code == 2 and fragment in output, output


def test_an_unwritable_spool_folder_is_refused(tmp_path: Path) -> None:
    with unwritable_folder(tmp_path) as locked:
        text = warehouse(f'path = "x.duckdb"\nspool_dir = "{locked}/spool"')
        code, output = _check(tmp_path, text)
    assert code == 2 and "warehouse.spool_dir" in output and "not writable" in output


def test_a_metrics_port_in_use_stops_run_in_one_line_with_exit_2(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        path = tmp_path / "nerfwatch.toml"
        path.write_text(VALID + f"\n[daemon]\nmetrics_port = {port}\n", encoding="utf-8")
        result = CliRunner().invoke(app, ["run", "--config", str(path)])
    assert result.exit_code == 2, result.output
    line = result.output.strip().splitlines()[-1]
    assert "daemon.metrics_port" in line and str(port) in line


def test_load_config_raises_config_error_not_recursion(tmp_path: Path) -> None:
    path = tmp_path / "deep.toml"
    path.write_text("x = " + "{ a = " * 5000 + "1" + " }" * 5000 + "\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"nested too deeply|malformed TOML"):
        load_config(path)


def test_existing_warehouse_spool_and_report_folder_are_accepted(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "nw.duckdb").write_bytes(b"")
    (tmp_path / "nerfwatch-data" / "spool").mkdir(parents=True)
    (tmp_path / "nerfwatch-data" / "reports").mkdir()
    code, output = _check(tmp_path, VALID)
    assert code == 0, output

"""The shape of ``nerfwatch.toml``: every section, key, type and default in one table.

``pipeline.config`` walks these tables to validate a file, suggest a key for a typo and
fill defaults; the README's configuration section documents the same keys.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["SECTIONS", "Key"]


@dataclass(frozen=True, slots=True)
class Key:
    """One configuration key: its TOML type(s), whether it must be given, and a default."""

    types: tuple[type, ...]
    expected: str  # how the error message describes a valid value
    required: bool = False
    default: Any = None
    help: str = ""


_STR = (str,)
_INT = (int,)
_NUM = (int, float)
_BOOL = (bool,)

WAREHOUSE = {
    "path": Key(
        _STR,
        "a file path",
        default="nerfwatch-data/nerfwatch.duckdb",
        help="DuckDB file; relative paths start at the config file's folder",
    ),
    "spool_dir": Key(
        _STR,
        "a folder path",
        default="nerfwatch-data/spool",
        help="where results wait (fsync'd) before they reach DuckDB",
    ),
    "probe_site": Key(
        _STR, "a short label", help="where this prober runs, stored per row (default: host name)"
    ),
    "backend": Key(
        _STR,
        '"duckdb" or "ducklake"',
        default="duckdb",
        help="duckdb: one file (path); ducklake: a catalog plus data files, for many sites",
    ),
    "catalog": Key(
        _STR,
        '"sqlite:PATH" or "postgres:<libpq conninfo without password>"',
        help="ducklake: where the catalog lives; a sqlite path starts at the config's folder",
    ),
    "data_path": Key(
        _STR,
        'a folder or "s3://bucket/prefix"',
        help="ducklake: where the Parquet data files go",
    ),
    "s3_endpoint_env": Key(
        _STR,
        "an environment variable name",
        default="AWS_ENDPOINT_URL",
        help="ducklake on s3://: the variable holding http(s)://host:port (unset: AWS)",
    ),
    "s3_region_env": Key(_STR, "an environment variable name", default="AWS_REGION"),
    "s3_key_id_env": Key(_STR, "an environment variable name", default="AWS_ACCESS_KEY_ID"),
    "s3_secret_env": Key(_STR, "an environment variable name", default="AWS_SECRET_ACCESS_KEY"),
}

PROVIDER = {
    "name": Key(_STR, "a name of letters, digits, - or _", required=True),
    "format": Key(_STR, '"openai" or "anthropic"', required=True),
    "base_url": Key(_STR, "an http(s) URL", required=True),
    "model": Key(_STR, "a model id", required=True),
    "api_key_env": Key(
        _STR,
        "an environment variable name",
        help="the variable holding the API key; omit for keyless local servers",
    ),
    "vendor": Key(_STR, "a vendor name", help="company, for the release calendar"),
    "plan": Key(_STR, "a plan/tier label"),
    "preset": Key(_STR, "a preset name", help="wire-format quirks (defaults to the format)"),
    "max_context": Key(_INT, "a positive token count", default=128_000),
    "price_input_per_mtok": Key(_NUM, "a price in USD per million tokens", default=0.0),
    "price_output_per_mtok": Key(_NUM, "a price in USD per million tokens", default=0.0),
    "price_cached_per_mtok": Key(
        _NUM,
        "a price in USD per million tokens",
        help="cache-read input; unset: the input price",
    ),
    "price_cache_write_per_mtok": Key(
        _NUM,
        "a price in USD per million tokens",
        help="input written to a prompt cache; unset: 1.25 x the input price",
    ),
    "max_concurrency": Key(_INT, "a positive integer", default=2),
    "serialize_long_context": Key(_BOOL, "true or false", default=True),
    "chars_per_token": Key(_NUM, "a positive number", default=4.0),
    "headers": Key((dict,), "a table of header names to string values", default={}),
    "body": Key(
        (dict,),
        "a table of extra request-body fields",
        default={},
        help="provider controls such as thinking or routing, merged into every request",
    ),
}

PROBE = {
    "name": Key(_STR, "a name of letters, digits, - or _", required=True),
    "task": Key(_STR, "a task family name", required=True),
    "context": Key((str, int), 'a token count such as 1000 or "32k"', default="1k"),
    "every": Key(_STR, 'a duration such as "30s", "10m" or "1h"'),
    "cron": Key(_STR, 'a crontab expression such as "*/10 * * * *"'),
    "providers": Key((list,), "a list of provider names", help="default: every provider"),
    "max_output_tokens": Key(_INT, "a positive integer", default=512),
    "temperature": Key(_NUM, "a number from 0 to 2", default=0.0),
    "timeout": Key(
        _STR,
        'a duration such as "120s"',
        help="overall deadline of one attempt; default 120s or the interval",
    ),
    "read_timeout": Key(
        _STR,
        'a duration such as "30s"',
        help="longest silence between chunks; default 30s or the timeout",
    ),
    "stream": Key(_BOOL, "true or false", default=True),
    "max_response_bytes": Key(
        _INT,
        "a byte count from 1000 to 1000000000",
        default=8_000_000,
        help="decoded bytes one answer may carry; more ends the probe as response_too_large",
    ),
    "anchor_items": Key(
        _INT,
        "0 or an item count up to 100000",
        default=0,
        help="draw each item from this many fixed ones, so the same items recur across "
        "weeks for paired tests; 0: a fresh item every run",
    ),
}

BUDGET_LIMITS = {
    "daily_tokens": Key(_INT, "a positive token count"),
    "daily_cost_usd": Key(_NUM, "a positive amount in USD"),
}

BUDGET = {
    **BUDGET_LIMITS,
    "providers": Key((dict,), "a table of provider names"),
    "scope": Key(
        _STR,
        '"site" or "lake"',
        default="site",
        help="whose spend the caps count on a lake: this site's, or every site's (\"lake\")",
    ),
}

REPORT = {
    "out_dir": Key(_STR, "a folder path", default="nerfwatch-data/reports"),
    "weekday": Key(_STR, "mon, tue, wed, thu, fri, sat or sun", default="mon"),
    "time": Key(_STR, '"HH:MM"', default="08:00"),
    "timezone": Key(_STR, 'an IANA time zone such as "Europe/Berlin"', default="UTC"),
    "enabled": Key(_BOOL, "true or false", default=True),
    "link_base_url": Key(_STR, "an http(s) URL where reports are published"),
}

WEBHOOK = {
    "name": Key(_STR, "a name", required=True),
    "url_env": Key(_STR, "an environment variable name holding the URL", required=True),
    "kind": Key(_STR, '"json" or "slack"', default="json"),
}

ALERTS = {
    "webhooks": Key((list,), "a list of [[alerts.webhooks]] tables", default=[]),
    "error_rate": Key(_NUM, "a share from 0 to 1", default=0.5),
    "ttft_p95_ms": Key(_NUM, "a positive number of milliseconds"),
    "window": Key(_INT, "a positive number of probes", default=10),
    "failure_threshold": Key(_INT, "a positive integer", default=3),
    "success_threshold": Key(_INT, "a positive integer", default=2),
}

DAEMON = {
    "max_concurrency": Key(_INT, "a positive integer", default=8),
    "flush_interval": Key(_STR, 'a duration such as "2s"', default="2s"),
    "lock_wait": Key(_STR, 'a duration such as "500ms"', default="500ms"),
    "shutdown_grace": Key(_STR, 'a duration such as "30s"', default="30s"),
    "metrics_port": Key(_INT, "a TCP port from 1 to 65535"),
    "probe_threads": Key(_INT, "an integer from 0 to 64", default=0),
}

TOP = {
    "warehouse": Key((dict,), "a [warehouse] table", default={}),
    "providers": Key((list,), "[[providers]] tables", required=True),
    "probes": Key((list,), "[[probes]] tables", required=True),
    "budget": Key((dict,), "a [budget] table", default={}),
    "report": Key((dict,), "a [report] table", default={}),
    "alerts": Key((dict,), "an [alerts] table", default={}),
    "daemon": Key((dict,), "a [daemon] table", default={}),
}

SECTIONS: dict[str, dict[str, Key]] = {
    "": TOP,
    "warehouse": WAREHOUSE,
    "providers": PROVIDER,
    "probes": PROBE,
    "budget": BUDGET,
    "budget.providers": BUDGET_LIMITS,
    "report": REPORT,
    "alerts": ALERTS,
    "alerts.webhooks": WEBHOOK,
    "daemon": DAEMON,
}

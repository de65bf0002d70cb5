"""Build each section of the config from its checked table (``pipeline.config.checker``)."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pipeline.config.checker import Checker, did_you_mean, named_tables, type_name
from pipeline.config.keys import WAREHOUSE
from pipeline.config.model import (
    BUDGET_SCOPES,
    AlertsConfig,
    BudgetConfig,
    BudgetLimits,
    Config,
    DaemonConfig,
    ProbeConfig,
    ProviderConfig,
    ReportConfig,
    WarehouseConfig,
    Webhook,
)
from pipeline.config.provider_section import build_providers
from pipeline.config.schedule import cron_interval_s, cron_never_fires, normalize_crontab
from pipeline.config.user_paths import HomeUnknown, expand_home, name_too_long
from pipeline.warehouse.lake import Lake, LakeSpecError, check_catalog, check_data_path
from probes.tasks import FAMILIES, parse_context

__all__ = ["build"]
_SPECIAL_ROOTS = (Path("/proc"), Path("/sys"), Path("/dev"))
_WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_BACKENDS = ("duckdb", "ducklake")


def build(data: Mapping[str, Any], c: Checker, *, base: Path, source: Path | None) -> Config:
    top = c.table(data, "", "")
    warehouse = _warehouse(c.table(top["warehouse"], "warehouse", "warehouse"), c, base)
    providers = build_providers(top["providers"], c)
    probes = _probes(top["probes"], c, providers)
    return Config(
        path=source,
        warehouse=warehouse,
        providers=providers,
        probes=probes,
        budget=_budget(c.table(top["budget"], "budget", "budget"), c, providers, warehouse),
        report=_report(c.table(top["report"], "report", "report"), c, base),
        alerts=_alerts(c.table(top["alerts"], "alerts", "alerts"), c),
        daemon=_daemon(c.table(top["daemon"], "daemon", "daemon"), c),
    )


def _resolve(base: Path, value: str, key: str, c: Checker) -> Path:
    """``value`` with ``~`` expanded; a relative path starts at the config's folder."""
    try:
        p = expand_home(value)
    except HomeUnknown as exc:
        raise c.fail(key, str(exc)) from None
    return p if p.is_absolute() else base / p


def _usable(path: Path, key: str, c: Checker, *, folder: bool) -> None:
    """Refuse a path that can never hold what the key names.

    Checked: a special file system (/proc, /sys, /dev), the wrong kind of thing already
    there, and a nearest existing ancestor that is not a writable folder. A daemon given
    such a path used to run for ever and store nothing.
    """
    absolute = Path(os.path.abspath(path))
    if any(absolute.is_relative_to(root) for root in _SPECIAL_ROOTS):
        raise c.fail(key, f"{path} is on a special file system, not a place for data")
    too_long = name_too_long(path)
    if too_long:
        raise c.fail(key, f"{path}: {too_long}")
    try:  # a name too long for the file system made every later check raise
        absolute.stat()
    except (FileNotFoundError, NotADirectoryError):
        pass  # missing, or under a file: told apart below
    except OSError as exc:
        raise c.fail(key, f"{path}: {exc.strerror or exc}") from None
    kind = "folder" if folder else "file"
    if absolute.exists() and absolute.is_dir() != folder:
        raise c.fail(key, f"{path} exists and is not a {kind}")
    if absolute.exists() and not folder and not absolute.is_file():
        raise c.fail(key, f"{path} exists and is not a regular file")
    # A file needs its folder writable (DuckDB writes a WAL beside it); a folder itself.
    ancestor = absolute if folder and absolute.exists() else absolute.parent
    while not ancestor.exists():
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise c.fail(key, f"{path} lies under {ancestor}, which is a file, not a folder")
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise c.fail(key, f"{path}: {ancestor} is not writable")


def _warehouse(t: dict[str, Any], c: Checker, base: Path) -> WarehouseConfig:
    path = _resolve(base, t["path"], "warehouse.path", c)
    spool = _resolve(base, t["spool_dir"], "warehouse.spool_dir", c)
    _usable(path, "warehouse.path", c, folder=False)
    _usable(spool, "warehouse.spool_dir", c, folder=True)
    if Path(os.path.abspath(path)) == Path(os.path.abspath(spool)):
        raise c.fail("warehouse.spool_dir", "must differ from warehouse.path")
    backend = t["backend"]
    if backend not in _BACKENDS:
        raise c.fail(
            "warehouse.backend",
            f'expected "duckdb" or "ducklake", got {backend!r}{did_you_mean(backend, _BACKENDS)}',
        )
    lake = _lake(t, c, base) if backend == "ducklake" else None
    if lake is None:
        for key in ("catalog", "data_path"):
            if t[key] is not None:
                raise c.fail(f"warehouse.{key}", 'only used with backend = "ducklake"')
    return WarehouseConfig(path=path, spool_dir=spool, probe_site=t["probe_site"], lake=lake)


def _lake(t: dict[str, Any], c: Checker, base: Path) -> Lake:
    """The ``ducklake`` backend's catalog and data path, checked; relative local paths
    start at the config file's folder, like ``path``."""
    for key in ("catalog", "data_path"):
        if t[key] is None:
            expected = WAREHOUSE[key].expected
            raise c.fail("warehouse.backend", f'"ducklake" needs warehouse.{key} ({expected})')
    for key in ("s3_endpoint_env", "s3_region_env", "s3_key_id_env", "s3_secret_env"):
        c.env_name(t[key], f"warehouse.{key}")
    try:
        kind, target = check_catalog(t["catalog"])
    except LakeSpecError as exc:
        raise c.fail("warehouse.catalog", str(exc)) from None
    catalog = t["catalog"]
    if kind == "sqlite":
        file = _resolve(base, target, "warehouse.catalog", c)
        _usable(file, "warehouse.catalog", c, folder=False)
        catalog = f"sqlite:{file}"
    data_path = t["data_path"]
    try:
        check_data_path(data_path)
    except LakeSpecError as exc:
        raise c.fail("warehouse.data_path", str(exc)) from None
    if "://" not in data_path:
        folder = _resolve(base, data_path, "warehouse.data_path", c)
        _usable(folder, "warehouse.data_path", c, folder=True)
        data_path = str(folder)
    else:  # credentials only from the environment, checked like API keys
        c.env(t["s3_key_id_env"], "warehouse.s3_key_id_env", "the S3 access key id")
        c.env(t["s3_secret_env"], "warehouse.s3_secret_env", "the S3 secret access key")
    return Lake(
        catalog=catalog,
        data_path=data_path,
        s3_endpoint_env=t["s3_endpoint_env"],
        s3_region_env=t["s3_region_env"],
        s3_key_id_env=t["s3_key_id_env"],
        s3_secret_env=t["s3_secret_env"],
    )


def _probes(
    value: list[Any], c: Checker, providers: tuple[ProviderConfig, ...]
) -> tuple[ProbeConfig, ...]:
    by_name = {p.name: p for p in providers}
    out = []
    for p, t, name in named_tables(value, "probes", "probe", c):
        if t["task"] not in FAMILIES:
            extra = did_you_mean(t["task"], FAMILIES)
            raise c.fail(
                f"{p}.task",
                f"unknown task family {t['task']!r} (known: {', '.join(sorted(FAMILIES))}){extra}",
            )
        every_s, cron, interval_s = _schedule(t, p, c)
        timeout_s = (
            c.duration(t["timeout"], f"{p}.timeout")
            if t["timeout"] is not None
            else min(120.0, interval_s)
        )
        read_timeout_s = (
            c.duration(t["read_timeout"], f"{p}.read_timeout")
            if t["read_timeout"] is not None
            else min(30.0, timeout_s)
        )
        if timeout_s > interval_s:
            raise c.fail(
                f"{p}.timeout",
                f"timeout {t['timeout']} is longer than the interval "
                f"between runs ({interval_s:g}s); runs would overlap",
            )
        if read_timeout_s > timeout_s:
            raise c.fail(
                f"{p}.read_timeout",
                f"{t['read_timeout']} is longer than the probe's "
                f"timeout {t['timeout']}; expected at most the timeout",
            )
        try:
            context = parse_context(t["context"])
        except ValueError:
            raise c.fail(
                f"{p}.context",
                f'expected a token count such as 1000 or "32k", got {t["context"]!r}',
            ) from None
        if t["max_output_tokens"] <= 0:
            raise c.fail(f"{p}.max_output_tokens", "expected a positive integer")
        if not 1_000 <= t["max_response_bytes"] <= 1_000_000_000:
            raise c.fail(
                f"{p}.max_response_bytes",
                f"expected a byte count from 1000 to 1000000000, got {t['max_response_bytes']}",
            )
        if not 0 <= t["anchor_items"] <= 100_000:
            raise c.fail(
                f"{p}.anchor_items",
                f"expected 0 or an item count up to 100000, got {t['anchor_items']}",
            )
        if not 0 <= t["temperature"] <= 2:
            raise c.fail(
                f"{p}.temperature", f"expected a number from 0 to 2, got {t['temperature']}"
            )
        targets = _probe_providers(t["providers"], f"{p}.providers", c, by_name)
        for target in targets:
            need = context + t["max_output_tokens"]
            if need > by_name[target].max_context:
                raise c.fail(
                    f"{p}.context",
                    f"context {context:,} + max_output_tokens "
                    f"{t['max_output_tokens']:,} exceeds provider {target!r} "
                    f"max_context {by_name[target].max_context:,}; lower its context or "
                    f"list the providers it runs on (providers = [...])",
                )
        out.append(
            ProbeConfig(
                name=name,
                task=t["task"],
                context_tokens=context,
                every_s=every_s,
                cron=cron,
                providers=targets,
                max_output_tokens=t["max_output_tokens"],
                temperature=t["temperature"],
                timeout_s=timeout_s,
                read_timeout_s=read_timeout_s,
                stream=t["stream"],
                max_response_bytes=t["max_response_bytes"],
                anchor_items=t["anchor_items"],
            )
        )
    return tuple(out)


def _schedule(t: dict[str, Any], p: str, c: Checker) -> tuple[float | None, str | None, float]:
    """Exactly one of ``every`` and ``cron``; returns (every_s, cron, shortest interval)."""
    if t["every"] is None and t["cron"] is None:
        raise c.fail(f"{p}.every", 'missing schedule: set every = "10m" or cron = "..."')
    if t["every"] is not None and t["cron"] is not None:
        raise c.fail(f"{p}.cron", "set either every or cron, not both")
    if t["every"] is not None:
        every_s = c.duration(t["every"], f"{p}.every")
        if every_s < 1:
            raise c.fail(f"{p}.every", "expected an interval of at least 1s")
        return every_s, None, every_s
    try:
        cron = normalize_crontab(t["cron"])  # numeric weekdays mean what crontab means
    except ValueError as exc:
        raise c.fail(f"{p}.cron", f"invalid crontab expression: {exc}") from None
    if cron_never_fires(cron):
        raise c.fail(f"{p}.cron", f"{t['cron']!r} never fires (no such date)")
    return None, cron, cron_interval_s(cron)


def _probe_providers(
    value: list[Any] | None, path: str, c: Checker, by_name: Mapping[str, ProviderConfig]
) -> tuple[str, ...]:
    if value is None:
        return tuple(by_name)
    for i, name in enumerate(value):
        if name not in by_name:
            extra = did_you_mean(str(name), by_name)
            raise c.fail(f"{path}[{i}]", f"unknown provider {name!r}{extra}")
    if not value:
        raise c.fail(path, "expected at least one provider name")
    return tuple(value)


def _limits(t: dict[str, Any], path: str, c: Checker) -> BudgetLimits:
    for key in ("daily_tokens", "daily_cost_usd"):
        if t[key] is not None and t[key] <= 0:
            raise c.fail(f"{path}.{key}", f"expected a positive number, got {t[key]}")
    return BudgetLimits(daily_tokens=t["daily_tokens"], daily_cost_usd=t["daily_cost_usd"])


def _budget(
    t: dict[str, Any],
    c: Checker,
    providers: tuple[ProviderConfig, ...],
    warehouse: WarehouseConfig,
) -> BudgetConfig:
    names = [p.name for p in providers]
    per: dict[str, BudgetLimits] = {}
    for name, raw in (t["providers"] or {}).items():
        path = f"budget.providers.{name}"
        if name not in names:
            extra = did_you_mean(name, names)
            raise c.fail(path, f"unknown provider {name!r}{extra}")
        if not isinstance(raw, dict):
            raise c.fail(path, f"expected a table, got {type_name(raw)}")
        per[name] = _limits(c.table(raw, path, "budget.providers"), path, c)
    return BudgetConfig(
        total=_limits(t, "budget", c), per_provider=per, scope=_scope(t["scope"], c, warehouse)
    )


def _scope(scope: str, c: Checker, warehouse: WarehouseConfig) -> str:
    """``budget.scope``; "lake" on one file is refused: there the caps already count
    every row in it, so the key could only mislead (sites on other machines cannot
    share a file)."""
    if scope not in BUDGET_SCOPES:
        raise c.fail("budget.scope", f'expected "site" or "lake", got {scope!r}')
    if scope == "lake" and warehouse.lake is None:
        raise c.fail(
            "budget.scope",
            '"lake" needs warehouse.backend = "ducklake"; on one file the caps already'
            " count every row in it",
        )
    return scope


def _report(t: dict[str, Any], c: Checker, base: Path) -> ReportConfig:
    if t["weekday"] not in _WEEKDAYS:
        raise c.fail(
            "report.weekday", f"expected one of {', '.join(_WEEKDAYS)}, got {t['weekday']!r}"
        )
    if not re.match(r"^([01]\d|2[0-3]):[0-5]\d$", t["time"]):
        raise c.fail("report.time", f'expected "HH:MM" (24 h), got {t["time"]!r}')
    try:
        ZoneInfo(t["timezone"])
    except (ZoneInfoNotFoundError, ValueError):
        raise c.fail("report.timezone", f"unknown time zone {t['timezone']!r}") from None
    link = t["link_base_url"]
    if link is not None and not re.match(r"^https?://[^/\s]+", link):
        raise c.fail("report.link_base_url", f"expected an http(s) URL, got {link!r}")
    out_dir = _resolve(base, t["out_dir"], "report.out_dir", c)
    _usable(out_dir, "report.out_dir", c, folder=True)
    return ReportConfig(
        out_dir=out_dir,
        weekday=t["weekday"],
        time=t["time"],
        timezone=t["timezone"],
        enabled=t["enabled"],
        link_base_url=t["link_base_url"],
    )


def _alerts(t: dict[str, Any], c: Checker) -> AlertsConfig:
    hooks = []
    for p, w, name in named_tables(t["webhooks"], "alerts.webhooks", "webhook", c, required=False):
        if w["kind"] not in ("json", "slack"):
            raise c.fail(f"{p}.kind", f'expected "json" or "slack", got {w["kind"]!r}')
        c.env(w["url_env"], f"{p}.url_env", f"the URL of webhook {name!r}")
        hooks.append(Webhook(name=name, url_env=w["url_env"], kind=w["kind"]))
    if not 0 < t["error_rate"] <= 1:
        raise c.fail("alerts.error_rate", f"expected a share from 0 to 1, got {t['error_rate']}")
    if t["ttft_p95_ms"] is not None and t["ttft_p95_ms"] <= 0:
        raise c.fail("alerts.ttft_p95_ms", f"expected a positive number, got {t['ttft_p95_ms']}")
    for key in ("window", "failure_threshold", "success_threshold"):
        if t[key] <= 0:
            raise c.fail(f"alerts.{key}", f"expected a positive integer, got {t[key]}")
    return AlertsConfig(
        webhooks=tuple(hooks),
        error_rate=t["error_rate"],
        ttft_p95_ms=t["ttft_p95_ms"],
        window=t["window"],
        failure_threshold=t["failure_threshold"],
        success_threshold=t["success_threshold"],
    )


def _daemon(t: dict[str, Any], c: Checker) -> DaemonConfig:
    if t["max_concurrency"] <= 0:
        raise c.fail("daemon.max_concurrency", "expected a positive integer")
    port = t["metrics_port"]
    if port is not None and not 1 <= port <= 65535:
        raise c.fail("daemon.metrics_port", f"expected a TCP port from 1 to 65535, got {port}")
    if not 0 <= t["probe_threads"] <= 64:
        raise c.fail("daemon.probe_threads", f"expected 0 to 64, got {t['probe_threads']}")
    return DaemonConfig(
        max_concurrency=t["max_concurrency"],
        flush_interval_s=c.duration(t["flush_interval"], "daemon.flush_interval"),
        lock_wait_s=c.duration(t["lock_wait"], "daemon.lock_wait"),
        shutdown_grace_s=c.duration(t["shutdown_grace"], "daemon.shutdown_grace"),
        metrics_port=port,
        probe_threads=t["probe_threads"],
    )

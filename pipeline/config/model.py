"""Typed configuration objects; ``pipeline.config`` builds them from ``nerfwatch.toml``.

Kept apart from the loader so that every module can import the types without pulling in
validation code. All objects are frozen: a reload builds new ones.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the type only: loading a config does not need the warehouse
    from pipeline.warehouse.lake import Lake

__all__ = [
    "BUDGET_SCOPES",
    "CACHE_WRITE_MULTIPLIER",
    "AlertsConfig",
    "BudgetConfig",
    "BudgetLimits",
    "Config",
    "DaemonConfig",
    "ProbeConfig",
    "ProviderConfig",
    "ReportConfig",
    "WarehouseConfig",
    "Webhook",
]


CACHE_WRITE_MULTIPLIER = 1.25  # default cache-write price, x the input price


@dataclass(frozen=True, slots=True)
class ProviderConfig:
    """One endpoint + model to probe. The API key itself is never stored here."""

    name: str
    format: str  # "openai" | "anthropic"
    base_url: str
    model: str
    api_key_env: str | None  # environment variable holding the key; None = no auth
    vendor: str | None = None  # company, for the release calendar (e.g. "OpenAI")
    plan: str | None = None
    preset: str | None = None  # wire quirks preset name (probes.adapters.presets)
    max_context: int = 128_000
    price_input_per_mtok: float = 0.0
    price_output_per_mtok: float = 0.0
    price_cached_per_mtok: float | None = None  # None: the input price (see cached_price)
    price_cache_write_per_mtok: float | None = None  # None: see cache_write_price
    max_concurrency: int = 2
    serialize_long_context: bool = True
    chars_per_token: float = 4.0  # initial estimate for sizing prompts
    extra_headers: dict[str, str] = field(default_factory=dict)
    extra_body: dict[str, Any] = field(default_factory=dict)  # merged into every request body

    def api_key(self) -> str | None:
        """The key from the environment at call time (None when the provider needs none)."""
        return os.environ.get(self.api_key_env) if self.api_key_env else None

    def cached_price(self) -> float:
        """USD per million cache-read input tokens. Unset, the input price: the discount
        differs by vendor and model (80 % at DashScope, about 90 % at Anthropic, MiniMax,
        Kimi; providers.md §4-§9), so none is assumed, and costing cached input as free
        (the former default, 0) understated spend against the budget caps."""
        if self.price_cached_per_mtok is None:
            return self.price_input_per_mtok
        return self.price_cached_per_mtok

    def cache_write_price(self) -> float:
        """USD per million tokens written to a prompt cache. Unset, 1.25 x the input price:
        Anthropic's 5-minute write rate, also DashScope's explicit cache and MiniMax's
        (providers.md §4, §6, §9); set it for Anthropic's 1-hour cache (2 x). Only providers
        that bill writes report them, so the rate never applies elsewhere."""
        if self.price_cache_write_per_mtok is None:
            return CACHE_WRITE_MULTIPLIER * self.price_input_per_mtok
        return self.price_cache_write_per_mtok


@dataclass(frozen=True, slots=True)
class ProbeConfig:
    """One probe definition, run against each of its providers on its schedule."""

    name: str
    task: str  # task family name (probes.tasks.FAMILIES)
    context_tokens: int  # target prompt size; short families use a small default
    every_s: float | None  # interval schedule, or
    cron: str | None  # a crontab expression (exactly one of the two is set)
    providers: tuple[str, ...]  # provider names this probe runs against
    max_output_tokens: int = 512
    temperature: float = 0.0
    timeout_s: float = 120.0  # overall deadline of one attempt
    read_timeout_s: float = 30.0  # longest silence between two chunks
    stream: bool = True
    # Decoded bytes one answer may carry: far above any real answer, so a flood or a
    # decompression bomb ends as response_too_large instead of filling memory.
    max_response_bytes: int = 8_000_000
    # Items drawn from this many fixed seeds (per probe name), so the same items recur in
    # a baseline and a recent window and can be compared item by item (McNemar); 0 draws
    # a fresh item every run. Fixed items are also items a provider could learn to spot.
    anchor_items: int = 0

    @property
    def context_class(self) -> str:
        """``long`` for prompts of 8K tokens and more, else ``short``."""
        return "long" if self.context_tokens >= 8_000 else "short"


@dataclass(frozen=True, slots=True)
class BudgetLimits:
    daily_tokens: int | None = None
    daily_cost_usd: float | None = None


BUDGET_SCOPES = ("site", "lake")


@dataclass(frozen=True, slots=True)
class BudgetConfig:
    total: BudgetLimits = BudgetLimits()
    per_provider: dict[str, BudgetLimits] = field(default_factory=dict)
    # Whose spend the caps count on a lake: "site", this site's (its own keys, its own
    # bill); "lake", every site's (sites sharing one key, one bill). One file: every row.
    scope: str = "site"


@dataclass(frozen=True, slots=True)
class WarehouseConfig:
    path: Path
    spool_dir: Path
    probe_site: str | None = None
    lake: Lake | None = None  # backend = "ducklake"; None: the single file at ``path``

    @property
    def site(self) -> str:
        """The label stored with every row: ``probe_site``, else the host name. One rule for
        the daemon and ``nerfwatch probe``, so one machine is one site in the analysis."""
        return self.probe_site or socket.gethostname()

    @property
    def own_site(self) -> str | None:
        """Whose rows are this daemon's (its budget, its ``status``): on a lake, which
        several sites write, this site's; on one file, None: every row (one site wrote it,
        or sites on one host that share it)."""
        return self.site if self.lake is not None else None

    @property
    def location(self) -> Path | Lake:
        """What ``Warehouse`` opens: the lake if configured, else the file."""
        return self.lake if self.lake is not None else self.path

    @property
    def drift_dir(self) -> Path:
        """Where ``nerfwatch drift`` keeps accepted baselines (under ``drift/``): the
        folder of ``path``, for a lake too (a lake has no folder of its own here)."""
        return self.path.parent


@dataclass(frozen=True, slots=True)
class ReportConfig:
    out_dir: Path
    weekday: str = "mon"  # mon..sun
    time: str = "08:00"  # HH:MM local to `timezone`
    timezone: str = "UTC"
    enabled: bool = True
    link_base_url: str | None = None  # if set, alerts carry a link instead of a path


@dataclass(frozen=True, slots=True)
class Webhook:
    name: str
    url_env: str  # webhook URLs are secrets: they come from the environment
    kind: str = "json"  # "json" | "slack"

    def url(self) -> str | None:
        return os.environ.get(self.url_env)


@dataclass(frozen=True, slots=True)
class AlertsConfig:
    webhooks: tuple[Webhook, ...] = ()
    error_rate: float = 0.5  # error share over the window that counts as failing
    ttft_p95_ms: float | None = None  # TTFT p95 above this counts as failing
    window: int = 10  # recent probes per provider the thresholds look at
    failure_threshold: int = 3  # consecutive failing evaluations before alerting
    success_threshold: int = 2  # consecutive passing evaluations before resolving


@dataclass(frozen=True, slots=True)
class DaemonConfig:
    """How the probe daemon runs (all optional)."""

    max_concurrency: int = 8  # global cap on in-flight probes
    flush_interval_s: float = 2.0  # how often the spool is moved into DuckDB
    lock_wait_s: float = 0.5  # how long a flush waits for a reader to let go
    shutdown_grace_s: float = 30.0  # in-flight probes get this long on SIGTERM
    metrics_port: int | None = None  # Prometheus /metrics on 127.0.0.1 when set
    probe_threads: int = 0  # >0: probes run on this many worker event loops


@dataclass(frozen=True, slots=True)
class Config:
    path: Path | None  # the file it came from (None for embedded defaults)
    warehouse: WarehouseConfig
    providers: tuple[ProviderConfig, ...]
    probes: tuple[ProbeConfig, ...]
    budget: BudgetConfig = BudgetConfig()
    report: ReportConfig = ReportConfig(out_dir=Path("nerfwatch-data/reports"))
    alerts: AlertsConfig = AlertsConfig()
    daemon: DaemonConfig = DaemonConfig()

    def secret_values(self) -> list[str | None]:
        """Every secret the config names, read from the environment: API keys and
        webhook URLs (a Slack hook URL is a credential). Logs and reports mask them."""
        keys = [p.api_key() for p in self.providers]
        return [*keys, *(w.url() for w in self.alerts.webhooks)]

    def provider(self, name: str) -> ProviderConfig:
        for provider in self.providers:
            if provider.name == name:
                return provider
        raise KeyError(name)

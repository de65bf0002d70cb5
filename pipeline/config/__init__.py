"""Configuration: ``nerfwatch.toml`` read, checked and typed.

What callers import is here: the typed model (``Config`` and its sections), ``load_config``
and ``ConfigError``, and ``default_config`` for the embedded demo set-up. The rooms behind it:
``model`` (the frozen dataclasses), ``load`` (file → model), ``checker``, ``keys`` and
``sections`` (validation with file and line in every message), ``toml_lines`` (which line a
key is on), ``durations``, ``schedule`` (cron arithmetic), ``plan`` (what a config costs per
day), ``starter`` (the commented config ``init`` writes) and ``writer`` (a ``Config`` written
back as TOML).
"""

from __future__ import annotations

from pipeline.config.checker import ConfigError
from pipeline.config.load import SimulatedProvider, default_config, load_config, parse_context
from pipeline.config.model import (
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

__all__ = [
    "AlertsConfig",
    "BudgetConfig",
    "BudgetLimits",
    "Config",
    "ConfigError",
    "DaemonConfig",
    "ProbeConfig",
    "ProviderConfig",
    "ReportConfig",
    "SimulatedProvider",
    "WarehouseConfig",
    "Webhook",
    "default_config",
    "load_config",
    "parse_context",
]

"""A ``Config`` written back as ``nerfwatch.toml``.

The demo builds its config in memory; writing it beside the data lets every command read
that data later with ``--config`` (``status`` needs the spool folder and the providers,
``report`` the output folder). Only what ``default_config`` sets is written: warehouse,
providers, probes and the report folder.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from urllib.parse import urlsplit

from pipeline.config.durations import format_duration
from pipeline.config.load import SimulatedProvider, default_config
from pipeline.config.model import Config, ProbeConfig, ProviderConfig

__all__ = ["CONFIG_NAME", "config_toml", "write_demo_config"]

CONFIG_NAME = "nerfwatch.toml"

Value = str | int | float | bool | Sequence[str]


def _toml(value: Value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    # a JSON string (ASCII, escaped) is a valid TOML basic string; a list of them an array
    return json.dumps(value if isinstance(value, str) else list(value))


def _table(header: str, pairs: Mapping[str, Value | None]) -> list[str]:
    return [header, *(f"{k} = {_toml(v)}" for k, v in pairs.items() if v is not None), ""]


def _relative(path: Path, folder: Path) -> str:
    """Paths in the file are relative to its folder, so the folder can be moved whole."""
    return os.path.relpath(path.resolve(), folder.resolve())


def _provider(p: ProviderConfig) -> dict[str, Value | None]:
    if p.extra_headers or p.extra_body:
        raise ValueError(f"provider {p.name}: headers and body are not written")
    return {
        "name": p.name,
        "vendor": p.vendor,
        "format": p.format,
        "preset": p.preset,
        "base_url": p.base_url,
        "model": p.model,
        "api_key_env": p.api_key_env,
        "plan": p.plan,
        "max_context": p.max_context,
        "price_input_per_mtok": p.price_input_per_mtok,
        "price_output_per_mtok": p.price_output_per_mtok,
        "price_cached_per_mtok": p.price_cached_per_mtok,
        "price_cache_write_per_mtok": p.price_cache_write_per_mtok,
    }


def _probe(p: ProbeConfig) -> dict[str, Value | None]:
    return {
        "name": p.name,
        "task": p.task,
        "context": p.context_tokens,
        "every": format_duration(p.every_s) if p.every_s is not None else None,
        "cron": p.cron,
        "providers": list(p.providers),
        "max_output_tokens": p.max_output_tokens,
        "timeout": format_duration(p.timeout_s),
        "read_timeout": format_duration(p.read_timeout_s),
    }


def config_toml(config: Config, folder: Path) -> str:
    """The TOML text of ``config`` for a file in ``folder``."""
    warehouse = {
        "path": _relative(config.warehouse.path, folder),
        "spool_dir": _relative(config.warehouse.spool_dir, folder),
        "probe_site": config.warehouse.probe_site,
    }
    lake = config.warehouse.lake
    if lake is not None:
        warehouse |= {
            "backend": "ducklake",
            "catalog": lake.catalog,
            "data_path": lake.data_path,
            "s3_endpoint_env": lake.s3_endpoint_env,
            "s3_region_env": lake.s3_region_env,
            "s3_key_id_env": lake.s3_key_id_env,
            "s3_secret_env": lake.s3_secret_env,
        }
    lines = _table("[warehouse]", warehouse)
    for provider in config.providers:
        lines += _table("[[providers]]", _provider(provider))
    for probe in config.probes:
        lines += _table("[[probes]]", _probe(probe))
    lines += _table("[report]", {"out_dir": _relative(config.report.out_dir, folder)})
    return "\n".join(lines)


def write_demo_config(folder: Path, base_url: str, simulated: Sequence[SimulatedProvider]) -> Path:
    """Write the demo's providers and the standard probes (at their normal pace) to
    ``folder/nerfwatch.toml``, with a note on the simulator they need."""
    port = urlsplit(base_url).port
    note = (
        "# Written by `nerfwatch demo` for the data in this folder. status, sql, analyze and\n"
        "# report read the warehouse only. The providers are the demo's simulator, which\n"
        "# stopped with the demo: before `nerfwatch run` or `nerfwatch probe`, start it again\n"
        f"# with  nerfwatch simulate serve --port {port}\n"
        "# (the demo probed on this schedule sped up; these are the normal intervals)\n\n"
    )
    path = folder / CONFIG_NAME
    config = default_config(base_url, simulated, folder)
    path.write_text(note + config_toml(config, folder), encoding="utf-8")
    return path

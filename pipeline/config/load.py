"""Load and validate ``nerfwatch.toml`` into typed objects (``pipeline.config.model``).

Every problem is a ``ConfigError`` whose text is one line: file, line where known, the key
and what was expected, e.g. ``nerfwatch.toml:14: providers[1].format: expected "openai" or
"anthropic", got "oai"``. The CLI prints it and exits with status 2.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from pipeline.config.checker import Checker, ConfigError
from pipeline.config.model import Config, ProbeConfig, ProviderConfig, ReportConfig, WarehouseConfig
from pipeline.config.sections import build
from pipeline.config.toml_lines import KeyLines
from pipeline.config.user_paths import HomeUnknown, expand_home, stray_space
from pipeline.text_files import NotUtf8, decode_utf8
from probes.tasks import parse_context

__all__ = [
    "ConfigError",
    "SimulatedProvider",
    "default_config",
    "load_config",
    "parse_context",
]


def load_config(path: str | Path, *, check_env: bool = True) -> Config:
    """Read and validate a config file.

    Args:
        path: the TOML file.
        check_env: also require that every API-key and webhook variable is set (the
            daemon and probes need them; ``status``, ``sql`` and ``report`` do not).
    """
    try:
        path = expand_home(path)
    except HomeUnknown as exc:
        raise ConfigError(str(path), None, "", str(exc)) from None
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        why = stray_space(path) or "create one with `nerfwatch init`"
        raise ConfigError(str(path), None, "", f"file not found ({why})") from None
    except OSError as exc:
        raise ConfigError(str(path), None, "", f"cannot read: {exc.strerror or exc}") from None
    try:
        text = decode_utf8(raw)
    except NotUtf8 as exc:
        raise ConfigError(str(path), exc.line, "", str(exc)) from None
    try:
        data = tomllib.loads(text)
    except RecursionError:
        raise ConfigError(str(path), None, "", "malformed TOML: nested too deeply") from None
    except tomllib.TOMLDecodeError as exc:
        line = re.search(r"at line (\d+)", str(exc))
        message = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(exc))
        raise ConfigError(
            str(path), int(line[1]) if line else None, "", f"malformed TOML: {message}"
        ) from None
    checker = Checker(str(path), KeyLines(text), check_env)
    return build(data, checker, base=path.resolve().parent, source=path)


class SimulatedProvider(Protocol):
    """What ``default_config`` needs to know of each provider the simulator plays."""

    @property
    def name(self) -> str: ...
    @property
    def format(self) -> str: ...
    @property
    def model(self) -> str: ...
    @property
    def vendor(self) -> str: ...


def default_config(
    base_url: str,
    simulated: Sequence[SimulatedProvider],
    data_dir: str | Path = "nerfwatch-data",
    *,
    speed: float = 1.0,
) -> Config:
    """The embedded defaults: every simulated provider, probed by a small standard set.

    Args:
        base_url: where the simulator listens, e.g. ``http://127.0.0.1:8765``.
        simulated: the providers of the scenario the simulator plays.
        data_dir: folder for the warehouse, spool and reports.
        speed: divides every probe interval (the demo uses a fast schedule).
    """
    data = Path(data_dir)
    providers = tuple(
        ProviderConfig(
            name=s.name,
            format=s.format,
            base_url=f"{base_url.rstrip('/')}/{s.name}/v1",
            model=s.model,
            api_key_env=None,
            vendor=s.vendor,
            plan="simulated",
            preset="simulator",
            max_context=200_000,
            price_input_per_mtok=1.0,
            price_output_per_mtok=4.0,
            price_cached_per_mtok=0.1,
        )
        for s in simulated
    )
    names = tuple(p.name for p in providers)
    standard = (
        ("short-arithmetic", "arithmetic", 1_000, 300.0, 256),
        ("short-json", "json_extract", 1_000, 300.0, 256),
        ("long-kv-32k", "kv_lookup", 32_000, 900.0, 128),
        ("fixed-prompt", "fixed_prompt", 1_000, 900.0, 64),
    )
    probes = tuple(
        ProbeConfig(
            name=name,
            task=task,
            context_tokens=ctx,
            every_s=every / speed,
            cron=None,
            providers=names,
            max_output_tokens=out,
            timeout_s=min(120.0, every / speed),
            read_timeout_s=min(30.0, every / speed),
        )
        for name, task, ctx, every, out in standard
    )
    return Config(
        path=None,
        warehouse=WarehouseConfig(
            path=data / "nerfwatch.duckdb", spool_dir=data / "spool", probe_site="demo"
        ),
        providers=providers,
        probes=probes,
        report=ReportConfig(out_dir=data / "reports"),
    )

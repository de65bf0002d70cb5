"""``nerfwatch probe PROVIDER``: run probes now, store them, show them."""

from __future__ import annotations

import asyncio
import statistics
from collections import Counter
from dataclasses import replace
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from pipeline.commands.common import (
    CONFIG_OPTION,
    DB_OPTION,
    fail,
    load_or_fail,
    provider_or_fail,
    warehouse_from,
)
from pipeline.config import Config, ProbeConfig, ProviderConfig, parse_context
from pipeline.daemon.state import learned_chars_per_token
from pipeline.warehouse import Warehouse, WarehouseError
from probes.adapters.transport import probe_client
from probes.result import ProbeResult
from probes.runner import run_probe
from probes.sizing import CharsPerToken
from probes.tasks import FAMILIES

__all__ = ["ALL_FAILED_EXIT", "register"]

ALL_FAILED_EXIT = 3  # every probe failed: the rows are stored, the provider did not answer

_SHOWN = (
    "run_id", "provider", "model", "reported_model", "probe", "task_family",
    "context_target_tokens",
    "http_status", "error_class", "error_code", "error_detail", "finish_reason", "headers_ms",
    "ttft_ms", "first_answer_ms", "total_ms", "itl_p50_ms", "output_tokens_per_s",
    "input_tokens", "output_tokens", "cached_tokens", "reasoning_tokens", "cost_usd",
    "rl_requests_remaining", "rl_tokens_remaining", "retry_after_s", "expected_answer",
    "extracted_answer", "score_strict", "score_lenient", "sanity_flags", "response_text",
)  # fmt: skip


def select_probes(
    cfg: Config, provider: ProviderConfig, task: str | None, context: int | None
) -> list[ProbeConfig]:
    """The configured probes of this provider (those of ``task`` if given); an ad-hoc probe
    when none matches. ``context`` overrides the target size."""
    chosen = [
        p for p in cfg.probes if provider.name in p.providers and (task is None or p.task == task)
    ]
    if not chosen:
        family = task or "arithmetic"
        size = FAMILIES[family].DEFAULT_SIZE
        chosen = [
            ProbeConfig(
                name=f"adhoc-{family}",
                task=family,
                context_tokens=size,
                every_s=None,
                cron=None,
                providers=(provider.name,),
            )
        ]
    if context is not None:
        chosen = [replace(p, context_tokens=context) for p in chosen]
    return chosen


async def run_now(
    provider: ProviderConfig,
    probes: list[ProbeConfig],
    repeat: int,
    site: str | None,
    learned: dict[str, float] | None = None,
) -> list[ProbeResult]:
    """Each probe ``repeat`` times, one after another (no concurrency: honest latency).

    ``learned``: characters per token per family from earlier runs (the warehouse).
    """
    estimator = CharsPerToken(provider.chars_per_token, learned)
    rows: list[ProbeResult] = []
    async with probe_client() as client:
        for probe in probes:
            for _ in range(repeat):
                rows.append(
                    await run_probe(
                        provider, probe, client=client, probe_site=site, estimator=estimator
                    )
                )
    return rows


def _learned(warehouse: Warehouse) -> dict[str, dict[str, float]]:
    """What earlier runs learned about prompt sizing; nothing when it cannot be read. (The
    caller has migrated the warehouse: an older one has gained the prompt_chars column.)"""
    if not warehouse.path.is_file():
        return {}
    try:
        return learned_chars_per_token(warehouse)
    except WarehouseError:  # SqlError too
        return {}


def _show_rows(rows: list[ProbeResult]) -> None:
    """Every non-empty field of interest; model text is shown quoted and cut short."""
    for row in rows:
        values = row.as_row()
        for name in _SHOWN:
            value = values.get(name)
            if value in (None, []):
                continue
            if name == "response_text":
                value = repr(str(value)[:200])
            elif isinstance(value, float) and name != "cost_usd":
                value = f"{value:.1f}"
            typer.echo(f"{name:>24}: {value}")
        typer.echo("")


def _median(values: list[float | None]) -> str:
    present = [v for v in values if v is not None]
    return f"{statistics.median(present):.0f}" if present else "-"


def _show_summary(rows: list[ProbeResult]) -> None:
    table = Table(title="probe summary", title_justify="left")
    for column in ("probe", "n", "ok", "correct", "ttft p50 ms", "total p50 ms", "tok/s p50",
                   "errors", "flags"):  # fmt: skip
        table.add_column(column)
    for probe in dict.fromkeys(r.probe for r in rows):
        group = [r for r in rows if r.probe == probe]
        errors = Counter(r.error_class for r in group if r.error_class != "ok")
        flags = Counter(f for r in group for f in r.sanity_flags)
        table.add_row(
            probe, str(len(group)), str(sum(r.error_class == "ok" for r in group)),
            str(sum(r.score_strict == "correct" for r in group)),
            _median([r.ttft_ms for r in group]), _median([r.total_ms for r in group]),
            _median([r.output_tokens_per_s for r in group]),
            ", ".join(f"{k}×{v}" for k, v in errors.items()) or "-",
            ", ".join(f"{k}×{v}" for k, v in flags.items()) or "-",
        )  # fmt: skip
    Console(width=None if Console().is_terminal else 160).print(table)


def probe(
    provider: str = typer.Argument(..., help="Provider name from the config."),
    task: str | None = typer.Option(None, "--task", "-t", help="Task family to run."),
    context: str | None = typer.Option(None, "--context", help="Target prompt size, e.g. 32k."),
    repeat: int = typer.Option(1, "--repeat", "-n", min=1, help="Runs per probe."),
    config: Path | None = CONFIG_OPTION,
    db: Path | None = DB_OPTION,
) -> None:
    """Run probes against PROVIDER now, store them in the warehouse and print them.

    Exits 0 when at least one probe got an answer, 3 when every probe failed (the
    failures are stored too), 2 on bad input and 1 when the rows could not be stored.
    """
    cfg = load_or_fail(config, check_env=False)  # only this provider's key matters here
    chosen = provider_or_fail(cfg, provider)
    if task is not None and task not in FAMILIES:
        fail(f"--task: unknown family {task!r}; known: {sorted(FAMILIES)}", 2)
    try:
        size = parse_context(context) if context is not None else None
    except ValueError as exc:
        fail(f"--context: {exc}: {context!r} (expected e.g. 8k, 32000, 1m)", 2)
    probes = select_probes(cfg, chosen, task, size)
    for p in probes:  # --context must respect max_context as the config's probes do
        if p.context_tokens + p.max_output_tokens > chosen.max_context:
            fail(
                f"--context: {p.context_tokens:,} + max_output_tokens {p.max_output_tokens:,} "
                f"exceeds provider {provider!r} max_context {chosen.max_context:,}",
                2,
            )
    warehouse = warehouse_from(config, db)
    try:  # before any probe is sent (and paid for): its rows must have somewhere to go
        warehouse.migrate()
    except WarehouseError as exc:
        fail(f"nothing probed, the warehouse cannot store rows: {exc}", 1)
    learned = _learned(warehouse).get(chosen.name)
    rows = asyncio.run(run_now(chosen, probes, repeat, cfg.warehouse.site, learned))
    if repeat > 1:
        _show_summary(rows)
    else:
        _show_rows(rows)
    try:
        warehouse.insert_rows("probe_results", [r.as_row() for r in rows], key="run_id")
    except WarehouseError as exc:
        fail(f"rows not stored: {exc}", 1)
    typer.echo(f"stored {len(rows)} row(s) in {warehouse.path}")
    if all(r.error_class != "ok" for r in rows):
        classes = Counter(r.error_class for r in rows).most_common()
        told = ", ".join(f"{n} {name}" for name, n in classes)  # "truncated" is not obvious
        fail(f"every probe of {provider} failed: {told} (exit {ALL_FAILED_EXIT})", ALL_FAILED_EXIT)


def register(app: typer.Typer) -> None:
    """Add ``nerfwatch probe`` to the app."""
    app.command("probe")(probe)

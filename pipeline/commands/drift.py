"""``nerfwatch drift discover|sample|check PROVIDER``: is the same model still behind the name?

Border-input tracking: ``discover`` finds one-token prompts whose first answer token varies
and stores their reference distribution (run it again to accept a new baseline, e.g. after
a release; the old file is kept beside it), ``sample`` spends one day's budget of
one-token calls, ``check`` applies the alarm rule to the stored days. The files live under
``<warehouse folder>/drift/``.
"""

from __future__ import annotations

import asyncio
import math
from dataclasses import replace
from datetime import UTC, date, datetime
from pathlib import Path

import typer

from pipeline.commands.common import (
    CONFIG_OPTION,
    DB_OPTION,
    drift_dir,
    fail,
    load_or_fail,
    provider_or_fail,
)
from pipeline.config import ProviderConfig
from pipeline.drift.baseline import Baseline, DriftSettings, baseline_path, load, save
from pipeline.drift.collect import discover, sample_day
from probes.adapters.transport import probe_client

__all__ = ["ALARM_EXIT", "parse_day", "register"]

ALARM_EXIT = 4  # the latest sampled day raised an alarm
MAX_TEMPERATURE = 2.0  # the widest range a supported API accepts (OpenAI's 0..2)

drift_app = typer.Typer(
    help="Border-input tracking: has the model behind a name changed (quantized, swapped)?",
    no_args_is_help=True,
)
_DEFAULTS = DriftSettings()


def _target(provider: str, config: Path | None, db: Path | None) -> tuple[ProviderConfig, Path]:
    cfg = load_or_fail(config, check_env=False)
    chosen = provider_or_fail(cfg, provider)
    return chosen, baseline_path(drift_dir(config, db), chosen.name, chosen.model)


def _stored(path: Path) -> Baseline:
    if not path.is_file():
        fail(f"no drift baseline at {path}: run `nerfwatch drift discover` first", 2)
    try:
        return load(path)
    except ValueError as exc:
        fail(str(exc), 2)


@drift_app.command("discover")
def discover_command(
    provider: str = typer.Argument(..., help="Provider name from the config."),
    candidates: int = typer.Option(_DEFAULTS.candidates, min=1, help="Prompts tried."),
    calls: int = typer.Option(_DEFAULTS.discovery_calls, min=1, help="Calls per candidate."),
    inputs: int = typer.Option(_DEFAULTS.inputs, min=1, help="Border inputs kept."),
    reference_calls: int = typer.Option(_DEFAULTS.reference_calls, min=1, help="Calls per input."),
    per_input: int = typer.Option(_DEFAULTS.per_input, min=1, help="Daily calls per input."),
    temperature: float = typer.Option(
        _DEFAULTS.temperature,
        help="0 relies on the server's own noise (B3IT); a deterministic server needs a "
        "small value such as 0.03, sampled with a seed per call.",
    ),
    logprob_calls: int = typer.Option(
        _DEFAULTS.logprob_calls,
        min=0,
        help="Calls of the fixed prompt per logprob window (0: off; needs an API that "
        "returns logprobs).",
    ),
    config: Path | None = CONFIG_OPTION,
    db: Path | None = DB_OPTION,
) -> None:
    """Find border inputs and store their reference (accepts a new baseline)."""
    if not (math.isfinite(temperature) and 0 <= temperature <= MAX_TEMPERATURE):
        fail(
            f"--temperature: expected a number from 0 to {MAX_TEMPERATURE:g}, got {temperature}", 2
        )
    chosen, path = _target(provider, config, db)
    settings = DriftSettings(
        candidates=candidates, discovery_calls=calls, inputs=inputs,
        reference_calls=reference_calls, per_input=per_input, temperature=temperature,
        logprob_calls=logprob_calls,
    )  # fmt: skip
    baseline = asyncio.run(_discover(chosen, settings))
    if logprob_calls and not baseline.logprob_reference:
        typer.echo("no logprobs came back: logprob tracking is off for this provider")
        baseline.settings = replace(settings, logprob_calls=0)
    if not baseline.reference:
        fail(
            f"no border input among {candidates} prompts at temperature {temperature:g}: "
            "every first token was the same (a deterministic server needs a temperature > 0)",
            3,
        )
    if path.is_file():
        stamp = load(path).accepted_at[:19].replace(":", "")
        path.rename(path.with_name(f"{path.stem}.replaced-{stamp}.json"))
    save(baseline, path)
    total = candidates * calls + len(baseline.reference) * reference_calls
    typer.echo(f"{len(baseline.reference)} border inputs from {total} calls; stored {path}")
    daily = len(baseline.reference) * per_input + baseline.settings.logprob_calls
    typer.echo(f"daily cost: {daily} one-token calls")


async def _discover(provider: ProviderConfig, settings: DriftSettings) -> Baseline:
    async with probe_client() as client:
        return await discover(provider, client, settings)


@drift_app.command("sample")
def sample_command(
    provider: str = typer.Argument(..., help="Provider name from the config."),
    day: str | None = typer.Option(None, help="Day to record (YYYY-MM-DD; default today, UTC)."),
    config: Path | None = CONFIG_OPTION,
    db: Path | None = DB_OPTION,
) -> None:
    """Spend one day's budget re-sampling the border inputs; store the day's distance."""
    today = datetime.now(UTC).date()
    when = parse_day(day, today) if day else today
    chosen, path = _target(provider, config, db)
    baseline = _stored(path)

    async def go() -> None:
        async with probe_client() as client:
            baseline.add_day(await sample_day(chosen, client, baseline, when))

    asyncio.run(go())
    save(baseline, path)
    sample = next(d for d in baseline.days if d.day == when.isoformat())
    shown = "no answer" if sample.distance is None else f"{sample.distance:.3f}"
    typer.echo(f"{sample.day}: mean TV {shown} ({sample.calls} calls, {sample.failed} failed)")


def parse_day(text: str, today: date) -> date:
    """``--day``: a real date no later than ``today`` (UTC). A sample stored under a
    future day would stay the latest, and ``check`` would judge it instead of each real day."""
    try:
        when = date.fromisoformat(text)
    except ValueError:
        fail(f"--day: expected YYYY-MM-DD, got {text!r}", 2)
    if when > today:
        fail(f"--day: {when} is in the future (today is {today}, UTC)", 2)
    return when


@drift_app.command("check")
def check_command(
    provider: str = typer.Argument(..., help="Provider name from the config."),
    seed: int = typer.Option(0, help="Seed of the simulated null."),
    config: Path | None = CONFIG_OPTION,
    db: Path | None = DB_OPTION,
) -> None:
    """Judge the stored days; exit 4 when the latest day is an alarm."""
    _, path = _target(provider, config, db)
    stored = _stored(path)
    from pipeline.drift.check import check_baseline  # scipy: only when checking

    result = check_baseline(stored, seed=seed)
    fa = result.false_alarms
    typer.echo(f"rule: {result.rule.describe()}")
    typer.echo(
        f"null (unchanged model, simulated): mean TV {result.null.mean:.3f} "
        f"sd {result.null.sd:.3f}; false alarms {fa.alarms} in {fa.days} simulated days "
        f"(per-day rate <= {fa.upper95:.2g}, 95 % bound)"
    )
    for day, v in result.days:
        mark = "ALARM" if v.alarm else ("out" if v.out else "")
        typer.echo(
            f"{day}  TV {v.distance:.3f}  baseline {v.baseline_mean:.3f} ({v.baseline})  "
            f"threshold +-{v.threshold:.3f}  {mark}"
        )
    for sample in stored.days:
        for prompt, (before, now) in stored.token_count_changes(sample).items():
            typer.echo(f"{sample.day}  {prompt!r} is now {now} input tokens (was {before})")
    for day, lt in result.logprobs:
        typer.echo(
            f"{day}  logprobs: L1 {lt.statistic:.4f} over {lt.tokens} tokens, "
            f"p = {lt.p_value:.3g} ({lt.n_recent} vs {lt.n_reference} calls)"
        )
    if result.days and result.days[-1][1].alarm:
        typer.echo("the answers to fixed questions changed; same model name")
        raise typer.Exit(ALARM_EXIT)


def register(app: typer.Typer) -> None:
    app.add_typer(drift_app, name="drift")

"""Scenario TOML -> ``Scenario``, with errors that name the file, the key and what was expected.

Simple tables map one-to-one onto the dataclasses in ``probes.simulator.scenario``; their
fields (and defaults) are the documentation of the keys, mirrored in ``README.md``.
"""

from __future__ import annotations

import dataclasses
import math
import tomllib
import types
import typing
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any, TypeVar

from pipeline.config.toml_lines import KeyLines
from pipeline.text_files import NotUtf8, decode_utf8
from probes.simulator.faults import FAULTS
from probes.simulator.scenario import (
    ERROR_KINDS,
    STAGES,
    Clock,
    FaultTiming,
    HistoryOptions,
    Phase,
    ProbeSpec,
    Provider,
    Release,
    Rhythm,
    Scenario,
)

__all__ = ["ScenarioError", "bundled_scenario", "load_scenario", "parse_scenario", "scenarios_dir"]

T = TypeVar("T")
_FORMATS = ("openai", "anthropic")
_REASONING = ("none", "reasoning_content", "think_tags", "thinking")


@dataclass(frozen=True, slots=True)
class _Range:
    """Where a numeric key's values may lie (every number must also be finite)."""

    low: float
    high: float = math.inf
    above: bool = False  # strictly above ``low``: 0 makes no sense (a speed, a cadence)

    def holds(self, value: float) -> bool:
        return (value > self.low if self.above else value >= self.low) and value <= self.high

    def text(self) -> str:
        low = f"above {self.low:g}" if self.above else f">= {self.low:g}"
        return low if self.high == math.inf else f"{low} and <= {self.high:g}"


_AT_LEAST_0 = _Range(0.0)  # durations, latencies, rates, counts, multipliers, sigmas
_ABOVE_0 = _Range(0.0, above=True)  # divisors and lengths: 0 makes no sense
_SHARE = _Range(0.0, 1.0)  # probabilities and shares

# Keys not listed need only be finite: days of phases and releases, peak hour and weekday,
# demand_error_exponent, business_error_code. Table values (errors = {k = x}) are
# checked one by one.
_RANGES: dict[type, dict[str, _Range]] = {
    Scenario: {"seed": _AT_LEAST_0, "time_scale": _AT_LEAST_0},  # time_scale 0 = no sleeps
    Clock: {"length_days": _Range(0.0, 36_500.0, above=True), "speed": _ABOVE_0},  # a century
    Rhythm: {"daily_amplitude": _AT_LEAST_0, "weekly_amplitude": _AT_LEAST_0},  # see _check_demand
    FaultTiming: {
        "keepalive_s": _AT_LEAST_0,
        "keepalive_interval_s": _ABOVE_0,
        "drip_interval_s": _ABOVE_0,
        "huge_chunk_bytes": _ABOVE_0,
    },
    HistoryOptions: {
        "cadence_minutes": _ABOVE_0,
        "noise": _AT_LEAST_0,
        "heavy_tail": _SHARE,
        "tail_alpha": _ABOVE_0,
        "seasonality": _AT_LEAST_0,
        "gaps_per_month": _AT_LEAST_0,
        "gap_hours": _AT_LEAST_0,
        "outliers": _SHARE,
        "step_scale": _AT_LEAST_0,
        "scheduler_jitter_s": _AT_LEAST_0,
    },
    ProbeSpec: {
        "context_tokens": _ABOVE_0,
        "max_output_tokens": _ABOVE_0,
        "answer_tokens": _ABOVE_0,
        "every_minutes": _ABOVE_0,
    },
    Provider: {
        "reasoning_tokens": _AT_LEAST_0,
        "base_latency_ms": _AT_LEAST_0,
        "queue_ms_per_request": _AT_LEAST_0,
        "background_load": _AT_LEAST_0,
        "prefill_ms_per_ktok": _AT_LEAST_0,
        "prefill_exponent": _ABOVE_0,
        "output_tps": _ABOVE_0,
        "decode_load_sensitivity": _AT_LEAST_0,
        "ttft_noise": _AT_LEAST_0,
        "itl_jitter": _AT_LEAST_0,
        "wrong_rate": _SHARE,
        "wrong_script_rate": _SHARE,
        "errors": _SHARE,
        "faults": _SHARE,
        "rate_limit_requests": _AT_LEAST_0,  # 0 = no rate-limit headers
        "rate_limit_tokens": _AT_LEAST_0,
        "rate_limit_utilisation": _SHARE,
        "max_context": _ABOVE_0,
        "price_input_per_mtok": _AT_LEAST_0,
        "price_output_per_mtok": _AT_LEAST_0,
    },
    Phase: {
        "ramp_days": _AT_LEAST_0,
        "latency_short": _ABOVE_0,
        "latency_long": _ABOVE_0,
        "speed": _ABOVE_0,
        "error_multiplier": _AT_LEAST_0,
        "error_multipliers": _AT_LEAST_0,
        "wrong_multiplier": _AT_LEAST_0,
        "quantized": _SHARE,
        "wrong_script_rate": _SHARE,
        "rate_limit": _AT_LEAST_0,
        "fault_multiplier": _AT_LEAST_0,
    },
}


class ScenarioError(ValueError):
    """A scenario file that cannot be used; the message names file, line and key."""


@dataclass(frozen=True, slots=True)
class _Where:
    """A place in a scenario: its file, the TOML path of a table or key (which finds the
    line when the scenario was read from a file), and how a message names it."""

    file: str
    lines: KeyLines | None = None
    path: str = ""  # providers[0].phases[1].stage
    label: str = ""  # providers[0].phases[1]: key 'stage'

    def table(self, path: str, label: str | None = None) -> _Where:
        return dataclasses.replace(self, path=path, label=label or path)

    def item(self, name: str, index: int) -> _Where:
        path = f"{self.path}.{name}[{index}]" if self.path else f"{name}[{index}]"
        return self.table(path)

    def key(self, key: str) -> _Where:
        named = f"key '{key}'"
        return dataclasses.replace(
            self,
            path=f"{self.path}.{key}" if self.path else key,
            label=f"{self.label}: {named}" if self.label else named,
        )

    def entry(self, key: str) -> _Where:
        """One entry of an inline table (``errors = { teapot = 0.1 }``)."""
        return dataclasses.replace(self, path=f"{self.path}.{key}", label=f"{self.label}.{key}")

    def error(self, message: str) -> ScenarioError:
        line = self.lines.line_of(self.path) if self.lines is not None and self.path else None
        head = f"{self.file}:{line}" if line else self.file
        return ScenarioError(
            f"{head}: {self.label}: {message}" if self.label else f"{head}: {message}"
        )


def scenarios_dir() -> Path:
    """Directory of the scenarios shipped inside this package."""
    return Path(__file__).resolve().parent / "scenarios"


def bundled_scenario(name: str = "training_cycle") -> Path:
    return scenarios_dir() / f"{name}.toml"


def load_scenario(path: str | Path) -> Scenario:
    """Read and validate a scenario file."""
    path = Path(path)
    try:
        text = decode_utf8(path.read_bytes())
    except OSError as exc:
        raise ScenarioError(f"{path}: cannot read scenario ({exc.strerror})") from None
    except NotUtf8 as exc:
        raise ScenarioError(f"{path}:{exc.line}: {exc}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(f"{path}: invalid TOML: {exc}") from None
    return parse_scenario(data, where=str(path), lines=KeyLines(text))


def parse_scenario(
    data: dict[str, Any], *, where: str = "<scenario>", lines: KeyLines | None = None
) -> Scenario:
    """Validate a scenario already parsed from TOML; ``lines`` of its text, if it was read
    from a file, let each error name its line."""
    data = dict(data)
    top = _Where(where, lines)
    providers_raw = _pop_list(data, "providers", top)
    probes_raw = _pop_list(data, "probes", top)
    if not providers_raw:
        raise top.key("providers").error("expected at least one [[providers]] table")
    rhythm = _build(Rhythm, data.pop("rhythm", {}), top.table("rhythm", "[rhythm]"))
    clock = _build(Clock, data.pop("clock", {}), top.table("clock", "[clock]"))
    timing = _build(FaultTiming, data.pop("faults", {}), top.table("faults", "[faults]"))
    history = _build(HistoryOptions, data.pop("history", {}), top.table("history", "[history]"))
    providers = tuple(
        _provider(raw, top.item("providers", i), clock) for i, raw in enumerate(providers_raw)
    )
    names = [p.name for p in providers]
    if len(set(names)) != len(names):
        raise top.key("providers").error(f"provider names must be unique, got {names}")
    probes = tuple(
        _build(ProbeSpec, raw, top.item("probes", i)) for i, raw in enumerate(probes_raw)
    )
    _check_demand(rhythm, history.seasonality, top.table("rhythm", "[rhythm]"))
    for i, provider in enumerate(providers):
        _check_demand(provider.rhythm, history.seasonality, top.table(f"providers[{i}].rhythm"))
    data.setdefault("name", Path(where).stem)
    data.setdefault("description", "")
    return _build(
        Scenario,
        data,
        top,
        providers=providers,
        probes=probes,
        rhythm=rhythm,
        clock=clock,
        fault_timing=timing,
        history=history,
    )


def _check_demand(rhythm: Rhythm | None, seasonality: float, where: _Where) -> None:
    """Demand is 1 + amplitude x seasonality x cos(...): above 1 it turns negative at the
    trough, and a negative Poisson load fails in numpy mid-history."""
    if rhythm is None:
        return
    for key in ("daily_amplitude", "weekly_amplitude"):
        amplitude = getattr(rhythm, key)
        if amplitude * seasonality > 1:
            raise where.key(key).error(
                f"{amplitude:g} x [history] seasonality "
                f"{seasonality:g} is above 1 (demand would turn negative)"
            )


def _provider(raw: dict[str, Any], where: _Where, clock: Clock) -> Provider:
    raw = dict(raw)
    phases_raw = _pop_list(raw, "phases", where)
    releases_raw = _pop_list(raw, "releases", where)
    rhythm_raw = raw.pop("rhythm", None)
    phases = tuple(_phase(p, where.item("phases", i), clock) for i, p in enumerate(phases_raw))
    if not phases:
        phases = (Phase(stage="stable", start_day=0.0),)
    starts = [p.start_day for p in phases]
    if starts != sorted(starts):
        raise where.key("phases").error(f"phases must be in time order, got {starts}")
    releases = tuple(
        _release(r, where.item("releases", i), clock) for i, r in enumerate(releases_raw)
    )
    rhythm = (
        None
        if rhythm_raw is None
        else _build(Rhythm, rhythm_raw, where.table(f"{where.path}.rhythm"))
    )
    provider = _build(Provider, raw, where, phases=phases, releases=releases, rhythm=rhythm)
    _check_choice(provider.format, _FORMATS, where, "format")
    _check_choice(provider.reasoning, _REASONING, where, "reasoning")
    for kind in provider.errors:
        _check_choice(kind, ERROR_KINDS, where, "errors")
    for fault in provider.faults:
        _check_choice(fault, tuple(FAULTS), where, "faults")
    return provider


def _day_of(raw: dict[str, Any], where: _Where, clock: Clock) -> float:
    """A phase/release start from ``day`` (offset) or ``date`` (needs [clock].start)."""
    if "day" in raw and "date" in raw:
        raise where.key("date").error("give either 'day' or 'date', not both")
    if "date" in raw:
        when = raw.pop("date")
        if isinstance(when, datetime):
            when = when.date()
        if not isinstance(when, date):
            raise where.key("date").error(f"expected a TOML date, got {when!r}")
        if clock.start is None:
            raise where.key("date").error("needs [clock].start to be set")
        return float((when - clock.start).days)
    day = raw.pop("day", 0.0)
    if isinstance(day, bool) or not isinstance(day, int | float) or not math.isfinite(day):
        raise where.key("day").error(f"expected a number of days, got {day!r}")
    return float(day)


def _phase(raw: dict[str, Any], where: _Where, clock: Clock) -> Phase:
    raw = dict(raw)
    start = _day_of(raw, where, clock)
    phase = _build(Phase, raw, where, start_day=start)
    _check_choice(phase.stage, STAGES, where, "stage")
    for kind in phase.error_multipliers:
        _check_choice(kind, ERROR_KINDS, where, "error_multipliers")
    return phase


def _release(raw: dict[str, Any], where: _Where, clock: Clock) -> Release:
    raw = dict(raw)
    return _build(Release, raw, where, day=_day_of(raw, where, clock))


def _check_choice(value: str, allowed: tuple[str, ...], where: _Where, key: str) -> None:
    if value not in allowed:
        raise where.key(key).error(f"expected one of {list(allowed)}, got {value!r}")


def _pop_list(data: dict[str, Any], key: str, where: _Where) -> list[dict[str, Any]]:
    value = data.pop(key, [])
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise where.key(key).error(f"expected an array of tables ([[{key}]])")
    return value


def _build(cls: type[T], raw: Any, where: _Where, **given: Any) -> T:
    """Construct dataclass ``cls`` from a TOML table, checking names and types."""
    if not isinstance(raw, dict):
        raise where.error("expected a table")
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(raw) - names)
    if unknown:
        at_line = dataclasses.replace(where, path=where.key(unknown[0]).path)
        raise at_line.error(f"unknown key(s) {unknown}; known: {sorted(names)}")
    values = dict(given)
    ranges = _RANGES.get(cls, {})
    for key, value in raw.items():
        if key in given:
            continue
        values[key] = _coerce(value, hints[key], where.key(key))
        if key in ranges:
            _check_range(values[key], ranges[key], where.key(key))
    try:
        return cls(**values)
    except TypeError as exc:
        raise where.error(str(exc)) from None


def _check_range(value: Any, allowed: _Range, where: _Where) -> None:
    """A number (or each number of a table) within ``allowed``; NaN rows must not reach
    the warehouse, nor negative latencies."""
    if isinstance(value, dict):
        for k, v in value.items():
            _check_range(v, allowed, where.entry(k))
    elif isinstance(value, int | float) and not allowed.holds(value):
        raise where.error(f"expected a number {allowed.text()}, got {value!r}")


def _coerce(value: Any, hint: Any, where: _Where) -> Any:
    """Check one TOML value against a (simple) annotation."""
    origin = typing.get_origin(hint)
    if origin in (types.UnionType, typing.Union):
        options = [a for a in typing.get_args(hint) if a is not type(None)]
        return _coerce(value, options[0], where)
    if origin is dict:
        if not isinstance(value, dict):
            raise where.error("expected a table of numbers")
        return {str(k): _coerce(v, float, where.entry(str(k))) for k, v in value.items()}
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise where.error(f"expected a number, got {value!r}")
        if not math.isfinite(value):
            raise where.error(f"expected a finite number, got {value!r}")
        return float(value)
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise where.error(f"expected an integer, got {value!r}")
        return value
    if hint is bool:
        if not isinstance(value, bool):
            raise where.error(f"expected true or false, got {value!r}")
        return value
    if hint is str:
        if not isinstance(value, str):
            raise where.error(f"expected a string, got {value!r}")
        return value
    if hint is date:
        if isinstance(value, datetime):
            return value.date()
        if not isinstance(value, date):
            raise where.error(f"expected a TOML date (2026-05-01), got {value!r}")
        return value
    return value

"""Scenario types: what a simulated provider is and how it changes over time.

A scenario is data (TOML, see ``README.md`` beside this file) turned into these frozen
objects by ``probes.simulator.loader``. The live server and the synthetic-history
generator both read the same objects through ``probes.simulator.model``, so a
history row and a live response come from one model.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta

__all__ = [
    "ERROR_KINDS",
    "HARD_FAMILIES",
    "LONG_CONTEXT_TOKENS",
    "STAGES",
    "Clock",
    "FaultTiming",
    "HistoryOptions",
    "Phase",
    "ProbeSpec",
    "Provider",
    "Release",
    "Rhythm",
    "Scenario",
]

# Planted stage labels, in the order the users' story tells them.
STAGES = ("stable", "subtle", "long_context", "major", "release", "recovery")

# Error kinds the simulator can produce (baseline probabilities per request; see README).
ERROR_KINDS = ("rate_limited", "unavailable", "overloaded", "stream_error", "business_error")

# Families a "quantized" model gets wrong more often: multi-step arithmetic and
# long-context retrieval (probes.tasks family names).
HARD_FAMILIES = ("arithmetic", "kv_lookup", "multi_needle", "variable_tracking")

# Prompts of at least this many tokens count as long context (matches ProbeConfig).
LONG_CONTEXT_TOKENS = 8_000


@dataclass(frozen=True, slots=True)
class Phase:
    """From ``start_day`` until the next phase: multipliers relative to the baseline."""

    stage: str
    start_day: float  # days since the scenario start (fractions allowed)
    ramp_days: float = 0.0  # linear blend from the previous phase's values
    latency_short: float = 1.0  # TTFT multiplier, short-context prompts
    latency_long: float = 1.0  # TTFT multiplier, long-context prompts
    speed: float = 1.0  # output tokens/s multiplier (below 1 = slower decode)
    error_multiplier: float = 1.0  # every error kind
    error_multipliers: dict[str, float] = field(default_factory=dict)  # per kind, on top
    wrong_multiplier: float = 1.0  # wrong-answer probability
    quantized: float = 0.0  # extra wrong probability on HARD_FAMILIES (0..1)
    wrong_script_rate: float | None = None  # None = the provider's baseline
    rate_limit: float = 1.0  # advertised rate-limit size multiplier (below 1 = shrinking)
    fault_multiplier: float = 1.0  # scenario fault probabilities

    def error_mult(self, kind: str) -> float:
        return self.error_multiplier * self.error_multipliers.get(kind, 1.0)


@dataclass(frozen=True, slots=True)
class Release:
    """A (fictional) model release: from this day the provider serves ``model``."""

    day: float
    model: str
    kind: str = "major"


@dataclass(frozen=True, slots=True)
class Rhythm:
    """Daily and weekly demand wave; demand multiplies background load and error odds."""

    daily_amplitude: float = 0.35
    weekly_amplitude: float = 0.15
    peak_hour_utc: float = 15.0
    peak_weekday: float = 2.0  # 0 = Monday; fractional allowed
    demand_error_exponent: float = 1.5  # error probability ~ demand ** exponent


@dataclass(frozen=True, slots=True)
class Provider:
    """One simulated provider/model and its baseline service parameters."""

    name: str
    vendor: str
    format: str  # openai | anthropic (the default endpoint; both are served)
    model: str
    reasoning: str = "none"  # none | reasoning_content | think_tags | thinking
    reasoning_tokens: int = 0  # reasoning tokens emitted before the answer
    base_latency_ms: float = 250.0  # fixed part of TTFT (network, scheduling)
    queue_ms_per_request: float = 40.0  # per request ahead in the queue
    background_load: float = 3.0  # mean other requests in flight at demand 1
    prefill_ms_per_ktok: float = 30.0
    prefill_exponent: float = 1.3  # > 1: long prompts cost more than proportionally
    output_tps: float = 60.0  # decode speed, tokens per second
    decode_load_sensitivity: float = 0.2  # speed / (1 + s * (demand - 1))
    ttft_noise: float = 0.15  # lognormal sigma on TTFT
    itl_jitter: float = 0.3  # lognormal sigma on each inter-token gap
    wrong_rate: float = 0.02
    wrong_script_rate: float = 0.002
    errors: dict[str, float] = field(default_factory=dict)  # kind -> baseline probability
    business_error_code: int = 1002
    business_error_message: str = "rate limit exceeded, please retry later"
    faults: dict[str, float] = field(default_factory=dict)  # fault -> probability
    rate_limit_requests: int = 500  # per minute; 0 = send no rate-limit headers
    rate_limit_tokens: int = 200_000
    rate_limit_utilisation: float = 0.3  # share of the limit other traffic uses
    max_context: int = 200_000
    price_input_per_mtok: float = 0.0
    price_output_per_mtok: float = 0.0
    rhythm: Rhythm | None = None  # None = the scenario's rhythm
    phases: tuple[Phase, ...] = (Phase(stage="stable", start_day=0.0),)
    releases: tuple[Release, ...] = ()

    def model_at(self, day: float) -> str:
        """The model the provider serves on scenario day ``day`` (latest release)."""
        current = self.model
        for release in sorted(self.releases, key=lambda r: r.day):
            if release.day <= day:
                current = release.model
        return current


@dataclass(frozen=True, slots=True)
class ProbeSpec:
    """A probe the synthetic history plays (mirrors a config probe)."""

    name: str
    task_family: str
    context_tokens: int
    max_output_tokens: int = 256
    answer_tokens: int = 12  # typical answer length for this family
    every_minutes: float | None = None  # None = the history cadence
    stream: bool = True

    @property
    def context_class(self) -> str:
        return "long" if self.context_tokens >= LONG_CONTEXT_TOKENS else "short"


@dataclass(frozen=True, slots=True)
class FaultTiming:
    """Durations of timed faults, in scenario seconds (multiplied by ``time_scale``)."""

    keepalive_s: float = 60.0
    keepalive_interval_s: float = 5.0
    drip_interval_s: float = 1.0
    huge_chunk_bytes: int = 1_048_576


@dataclass(frozen=True, slots=True)
class HistoryOptions:
    """Knobs for synthetic history; the accuracy benchmark turns these."""

    cadence_minutes: float = 5.0
    noise: float = 1.0  # scales every lognormal sigma
    heavy_tail: float = 0.01  # share of latencies drawn from a Pareto tail
    tail_alpha: float = 1.5  # Pareto shape (smaller = heavier)
    seasonality: float = 1.0  # scales the rhythm amplitudes (0 = flat demand)
    gaps_per_month: float = 1.0  # daemon downtime windows (missing rows), Poisson
    gap_hours: float = 6.0  # mean downtime length (exponential)
    outliers: float = 0.002  # share of rows whose latency is multiplied by 5..20
    step_scale: float = 1.0  # scales every phase's deviation from 1 (0 = no change)
    scheduler_jitter_s: float = 2.0  # uniform delay of each run after its slot


@dataclass(frozen=True, slots=True)
class Clock:
    """How scenario time maps to wall time.

    Day 0 is ``start`` (UTC midnight). Without ``start``, the timeline's last day is
    today: start = today's UTC midnight - (length_days - 1) days, so history generated
    today and a live server started today agree on every phase. ``speed`` > 1 makes the
    live server's scenario clock run faster than the wall clock from the moment it
    starts (a demo can watch phases pass).
    """

    length_days: float = 180.0
    start: date | None = None
    speed: float = 1.0

    def start_at(self, today: date | None = None) -> datetime:
        if self.start is not None:
            return datetime(self.start.year, self.start.month, self.start.day, tzinfo=UTC)
        today = today or datetime.now(UTC).date()
        midnight = datetime(today.year, today.month, today.day, tzinfo=UTC)
        return midnight - timedelta(days=math.ceil(self.length_days) - 1)


@dataclass(frozen=True, slots=True)
class Scenario:
    name: str
    description: str
    providers: tuple[Provider, ...]
    probes: tuple[ProbeSpec, ...]
    seed: int = 0
    time_scale: float = 1.0  # multiplies every sleep of the live server
    clock: Clock = Clock()
    rhythm: Rhythm = Rhythm()
    fault_timing: FaultTiming = FaultTiming()
    history: HistoryOptions = HistoryOptions()
    quiet: bool = False  # True: no random errors, faults or wrong answers (on demand only)

    def provider(self, name: str) -> Provider:
        for provider in self.providers:
            if provider.name == name:
                return provider
        raise KeyError(name)

    def rhythm_of(self, provider: Provider) -> Rhythm:
        return provider.rhythm or self.rhythm

"""The columns of a synthetic row, as a probe would have recorded them.

``history`` draws the raw values; this module rolls each row's outcome (one error kind, else
one fault, else ok), the rate-limit headers a probe would parse, and turns the raw frame into
``probe_results`` columns: nulls where a probe would not have measured (no answer, no first
token), constants per provider and probe, names as the warehouse has them.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import polars as pl

from probes.simulator import model
from probes.simulator.outcomes import FAULT_OUTCOMES, Outcome, error_outcomes
from probes.simulator.scenario import (
    ERROR_KINDS,
    ProbeSpec,
    Provider,
    Rhythm,
)
from probes.tasks import FAMILIES

__all__ = ["Outcomes", "finish_columns", "outcome_table", "rate_limit_frame", "roll"]

Floats = npt.NDArray[np.float64]
Bools = npt.NDArray[np.bool_]


def roll(probabilities: list[Floats], rng: np.random.Generator, n: int) -> npt.NDArray[np.int64]:
    """Index of the outcome each row drew (len(probabilities) = none), one uniform per row."""
    if not probabilities:
        return np.zeros(n, dtype=np.int64)
    cumulative = np.cumsum(np.stack(probabilities), axis=0)
    u = rng.random(n)
    return (u[None, :] >= cumulative).sum(axis=0).astype(np.int64)


def outcome_table(
    provider: Provider,
    rhythm: Rhythm,
    pv: model.PhaseValues,
    dem: Floats,
    rng: np.random.Generator,
    n: int,
) -> Outcomes:
    """Roll one error kind per row, then one fault for the rows without an error."""
    kinds = list(ERROR_KINDS)
    probs = model.error_probabilities(provider, rhythm, pv, dem)
    kind_idx = roll([probs[k] for k in kinds], rng, n)
    names = list(provider.faults)
    fault_idx = roll([np.full(n, provider.faults[f]) * pv.fault_multiplier for f in names], rng, n)
    fault_idx = np.where(kind_idx < len(kinds), len(names), fault_idx)
    errors = error_outcomes(provider)
    return Outcomes(
        [errors[k] for k in kinds], [FAULT_OUTCOMES[f] for f in names], kind_idx, fault_idx, names
    )


_RATE_LIMIT_COLUMNS = (
    "rl_requests_limit",
    "rl_requests_remaining",
    "rl_requests_reset_s",
    "rl_tokens_limit",
    "rl_tokens_remaining",
    "rl_tokens_reset_s",
)


def rate_limit_frame(
    provider: Provider,
    pv: model.PhaseValues,
    dem: Floats,
    table: Outcomes,
    rng: np.random.Generator,
    n: int,
) -> pl.DataFrame:
    """Rate-limit header values a probe would parse; all null when the provider sends none."""
    if provider.rate_limit_requests <= 0:
        return pl.DataFrame(
            {
                k: pl.Series([None] * n, dtype=pl.Float64 if k.endswith("_s") else pl.Int64)
                for k in _RATE_LIMIT_COLUMNS
            }
        )
    req_limit, tok_limit = model.rate_limits(provider, pv)
    share = np.minimum(provider.rate_limit_utilisation * dem, 1.0)
    used_req = np.minimum(rng.poisson(req_limit * share), req_limit)
    used_tok = np.minimum(rng.poisson(tok_limit * share), tok_limit)
    limited = table.http_status == 429
    return pl.DataFrame(
        {
            "rl_requests_limit": req_limit,
            "rl_requests_remaining": np.where(limited, 0, req_limit - used_req),
            "rl_requests_reset_s": 60.0 * used_req / req_limit,
            "rl_tokens_limit": tok_limit,
            "rl_tokens_remaining": np.where(limited, 0, tok_limit - used_tok),
            "rl_tokens_reset_s": 60.0 * used_tok / tok_limit,
        }
    )


_WHEN_ANSWERED = [
    "first_answer_ms",
    "input_tokens",
    "output_tokens",
    "cost_usd",
    "finish_reason",
]
_WHEN_TTFT = [
    "reported_model",
    "ttft_ms",
    "last_token_ms",
    "itl_p50_ms",
    "itl_p95_ms",
    "itl_max_ms",
    "chunks",
]


def finish_columns(raw: pl.DataFrame, provider: Provider, probe: ProbeSpec) -> pl.DataFrame:
    """Null what a probe would not have measured, add constants, name the columns."""
    answered, ttft = pl.col("_answered"), pl.col("_ttft")
    scored = answered & pl.lit(probe.task_family != "fixed_prompt")
    fixed = answered & pl.lit(probe.task_family == "fixed_prompt")
    constants = {
        "source": "synthetic",
        "probe_site": "synthetic",
        "run_status": "done",
        "provider": provider.name,
        "vendor": provider.vendor,
        "model": provider.model,
        "endpoint": f"http://127.0.0.1/{provider.name}/v1",
        "wire_format": provider.format,
        "probe": probe.name,
        "task_family": probe.task_family,
        "task_version": getattr(FAMILIES.get(probe.task_family), "VERSION", 1),
        "context_class": probe.context_class,
        "context_target_tokens": probe.context_tokens,
        "max_output_tokens": probe.max_output_tokens,
        "temperature": 0.0,
        "streamed": probe.stream,
    }
    return raw.select(
        pl.col("run_id"),
        pl.col("t_ms")
        .cast(pl.Datetime("ms", "UTC"))
        .cast(pl.Datetime("us", "UTC"))
        .alias("started_at"),
        *(pl.lit(v).alias(k) for k, v in constants.items()),
        *(pl.when(answered).then(pl.col(c)).alias(c) for c in _WHEN_ANSWERED),
        *(pl.when(ttft).then(pl.col(c)).alias(c) for c in _WHEN_TTFT),
        pl.when(answered & (pl.col("output_tokens") > 1))
        .then(pl.col("output_tokens_per_s"))
        .alias("output_tokens_per_s"),
        pl.when(answered).then(pl.lit(0)).alias("cached_tokens"),
        pl.when(answered & pl.lit(provider.format == "openai"))
        .then(pl.col("reasoning_tokens"))
        .alias("reasoning_tokens"),
        pl.when(pl.col("_status")).then(pl.col("headers_ms")).alias("headers_ms"),
        pl.when(pl.col("_status")).then(pl.col("http_status")).alias("http_status"),
        pl.when(pl.col("_retry")).then(pl.col("retry_draw")).alias("retry_after_s"),
        pl.when(scored).then(pl.col("score_strict")).alias("score_strict"),
        pl.when(scored).then(pl.col("score_lenient")).alias("score_lenient"),
        pl.when(fixed).then(pl.col("fixed_answer").cast(pl.String)).alias("extracted_answer"),
        pl.concat_list(
            pl.when(pl.col("truncated")).then(pl.lit("truncated")),
            pl.when(pl.col("wrong_script")).then(pl.lit("wrong_script")),
        )
        .list.drop_nulls()
        .alias("sanity_flags"),
        pl.col(
            [
                "seed",
                "total_ms",
                "connection_reused",
                "error_class",
                "error_code",
                "error_detail",
                *_RATE_LIMIT_COLUMNS,
            ]
        ),
    )


class Outcomes:
    """Per-row columns from the error/fault index arrays."""

    def __init__(
        self,
        errors: list[Outcome],
        faults: list[Outcome],
        kind_idx: npt.NDArray[np.int64],
        fault_idx: npt.NDArray[np.int64],
        fault_names: list[str],
    ) -> None:
        ok = Outcome(200, None, "ok", "", True)
        table = [*errors, *faults, ok]
        # one combined index: errors first, then faults, then ok
        idx = np.where(
            kind_idx < len(errors),
            kind_idx,
            np.where(fault_idx < len(faults), len(errors) + fault_idx, len(table) - 1),
        )
        self.idx = idx
        self.kind_idx = kind_idx
        pick = np.array
        self.http_status = pick([o.http_status or 0 for o in table])[idx]
        self.classes = [o.error_class for o in table]
        gather = pl.Series(idx, dtype=pl.UInt32)
        self.error_code = pl.Series([o.error_code for o in table], dtype=pl.String).gather(gather)
        self.detail = pl.Series([o.detail or None for o in table], dtype=pl.String).gather(gather)
        is_ok = pick([o.error_class == "ok" for o in table])[idx]
        self.answered = is_ok
        self.partial = pick([o.streamed_tokens and o.error_class != "ok" for o in table])[idx]
        self.stalled = pick([o.error_class == "stall" for o in table])[idx]
        keepalive = [f == "keepalive_minute" for f in fault_names]
        self.keepalive = pick([False] * len(errors) + keepalive + [False])[idx]

    def kind_is(self, kind: str) -> Bools:
        return self.kind_idx == ERROR_KINDS.index(kind)

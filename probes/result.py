"""The one row a probe produces: ``ProbeResult`` mirrors the ``probe_results`` table
(``sql/schema/001_probe_results.sql`` and the migrations that add columns to it).

Every probe attempt, successful or not, and every scheduled run that could not start,
becomes exactly one ``ProbeResult``. The warehouse stores ``as_row()`` verbatim.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from dataclasses import dataclass, field
from datetime import datetime
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

if TYPE_CHECKING:
    from pipeline.config.model import ProbeConfig, ProviderConfig

__all__ = [
    "INT64_MAX",
    "INT64_MIN",
    "NERFWATCH_VERSION",
    "OUT_OF_RANGE",
    "ProbeResult",
    "clamp_row",
    "mend_text",
    "planned_row",
    "safe_endpoint",
]

OUT_OF_RANGE = "out_of_range"  # sanity flag: a numeric field was unstorable and set to NULL
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1  # DuckDB BIGINT: what a row can store

try:
    NERFWATCH_VERSION: str | None = version("nerfwatch")
except PackageNotFoundError:  # running from a checkout without metadata
    NERFWATCH_VERSION = None


def safe_endpoint(base_url: str) -> str:
    """The base URL without credentials, query or fragment: secrets never reach a row."""
    parts = urlsplit(base_url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


@dataclass(slots=True)
class ProbeResult:
    """One probe attempt; field meanings are documented in the schema files (001, 012, 014)."""

    run_id: str
    started_at: datetime
    provider: str
    model: str
    probe: str
    task_family: str
    source: str = "live"
    probe_site: str | None = None
    run_status: str = "done"
    skip_reason: str | None = None
    vendor: str | None = None
    reported_model: str | None = None
    system_fingerprint: str | None = None  # serving-stack id (OpenAI-style), when sent
    upstream_provider: str | None = None  # the upstream a router says served it (OpenRouter)
    endpoint: str | None = None
    wire_format: str | None = None
    plan: str | None = None
    task_version: int | None = None
    seed: int | None = None
    context_class: str | None = None
    context_target_tokens: int | None = None
    prompt_chars: int | None = None  # the prompt actually sent, in characters
    max_output_tokens: int | None = None
    temperature: float | None = None
    streamed: bool | None = None
    headers_ms: float | None = None
    ttft_ms: float | None = None
    first_answer_ms: float | None = None
    last_token_ms: float | None = None
    total_ms: float | None = None
    itl_p50_ms: float | None = None
    itl_p95_ms: float | None = None
    itl_max_ms: float | None = None
    output_tokens_per_s: float | None = None
    chunks: int | None = None
    connection_reused: bool | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cached_tokens: int | None = None
    cache_write_tokens: int | None = None  # of input_tokens, written to a prompt cache
    reasoning_tokens: int | None = None
    cost_usd: float | None = None
    http_status: int | None = None
    error_class: str | None = None
    error_code: str | None = None
    error_detail: str | None = None
    finish_reason: str | None = None
    request_id: str | None = None
    rl_requests_limit: int | None = None
    rl_requests_remaining: int | None = None
    rl_requests_reset_s: float | None = None
    rl_tokens_limit: int | None = None
    rl_tokens_remaining: int | None = None
    rl_tokens_reset_s: float | None = None
    rl_input_tokens_limit: int | None = None
    rl_input_tokens_remaining: int | None = None
    rl_input_tokens_reset_s: float | None = None
    rl_output_tokens_limit: int | None = None
    rl_output_tokens_remaining: int | None = None
    rl_output_tokens_reset_s: float | None = None
    rl_unified_status: str | None = None
    rl_unified_claim: str | None = None
    rl_unified_reset_s: float | None = None
    rl_unified_5h_utilization: float | None = None
    rl_unified_5h_reset_s: float | None = None
    rl_unified_7d_utilization: float | None = None
    rl_unified_7d_reset_s: float | None = None
    retry_after_s: float | None = None
    response_headers: dict[str, str] | None = None
    expected_answer: str | None = None
    extracted_answer: str | None = None
    score_strict: str | None = None
    score_lenient: str | None = None
    sanity_flags: list[str] = field(default_factory=list)
    response_text: str | None = None
    reasoning_text: str | None = None
    nerfwatch_version: str | None = None

    def as_row(self) -> dict[str, Any]:
        """A plain dict ready for the warehouse (headers serialized as JSON text)."""
        row = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        if self.response_headers is not None:
            row["response_headers"] = json.dumps(self.response_headers, sort_keys=True)
        row["sanity_flags"] = list(self.sanity_flags)
        return row

    def to_json(self) -> str:
        """One JSON line for the spool; ``from_json`` reverses it exactly (out-of-range
        numbers excepted: see ``clamp_row``)."""
        row = clamp_row(self.as_row())
        row["started_at"] = self.started_at.isoformat()
        return json.dumps(row, ensure_ascii=False, sort_keys=True)

    @classmethod
    def from_json(cls, line: str) -> ProbeResult:
        row = json.loads(line)
        row["started_at"] = datetime.fromisoformat(row["started_at"])
        if isinstance(row.get("response_headers"), str):
            row["response_headers"] = json.loads(row["response_headers"])
        known = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in row.items() if k in known})


def _numeric_kind(annotation: str) -> str | None:
    base = annotation.replace(" | None", "").strip()
    return base if base in ("int", "float") else None


_NUMERIC_FIELDS = {
    f.name: kind
    for f in dataclasses.fields(ProbeResult)
    if (kind := _numeric_kind(str(f.type))) is not None
}


def _storable(kind: str, value: object) -> bool:
    if value is None or isinstance(value, bool):
        return True
    if isinstance(value, int):
        return kind == "float" or INT64_MIN <= value <= INT64_MAX
    if isinstance(value, float):
        return math.isfinite(value)
    return False  # a string or a list where a number belongs


def clamp_row(row: dict[str, Any]) -> dict[str, Any]:
    """``row`` with every numeric field the warehouse cannot store set to None, plus the
    sanity flag ``out_of_range:<field>``.

    Provider values (``usage``, rate-limit headers) and config values are untrusted: one
    ``prompt_tokens = 10**25`` or a ``NaN`` must not make a row DuckDB rejects, since a
    rejected row would hold back every row spooled after it. The flag keeps the fact
    that the provider sent nonsense visible.
    """
    bad = [n for n, kind in _NUMERIC_FIELDS.items() if not _storable(kind, row.get(n))]
    if not bad:
        return row
    clamped = dict(row)
    flags = list(clamped.get("sanity_flags") or [])
    for name in bad:
        clamped[name] = None
        flag = f"{OUT_OF_RANGE}:{name}"
        if flag not in flags:
            flags.append(flag)
    clamped["sanity_flags"] = flags
    return clamped


_SURROGATE = re.compile("[\ud800-\udfff]")


def mend_text(result: ProbeResult) -> None:
    """Replace lone surrogates in every text field of ``result`` by U+FFFD, in place.

    A JSON escape such as ``"\\ud800"`` decodes to one, and neither UTF-8 (the spool) nor
    DuckDB can store it: the row would be refused whole, its measurements lost. U+FFFD
    keeps the damage visible (``invalid_unicode`` flags it as it flagged the surrogate).
    Header values need nothing: httpx decodes them from bytes, which holds no surrogate.
    """
    for f in dataclasses.fields(result):
        value = getattr(result, f.name)
        if isinstance(value, str):
            setattr(result, f.name, _SURROGATE.sub("\ufffd", value))


def planned_row(
    provider: ProviderConfig,
    probe: ProbeConfig,
    *,
    run_id: str,
    started_at: datetime,
    source: str = "live",
    probe_site: str | None = None,
) -> ProbeResult:
    """The row of one (provider, probe) run with what is known before it is attempted."""
    return ProbeResult(
        run_id=run_id,
        started_at=started_at,
        provider=provider.name,
        model=provider.model,
        probe=probe.name,
        task_family=probe.task,
        source=source,
        probe_site=probe_site,
        vendor=provider.vendor,
        endpoint=safe_endpoint(provider.base_url),
        wire_format=provider.format,
        plan=provider.plan,
        max_output_tokens=probe.max_output_tokens,
        temperature=probe.temperature,
        streamed=probe.stream,
        nerfwatch_version=NERFWATCH_VERSION,
    )

"""Error classes of the ``error_class`` column, and the table that assigns them.

One value per probe attempt. The first attempt's outcome is the signal: nothing is retried
(a send on a pooled socket the server had already closed is not an attempt; it is resent).

=================  ==========================================================================
ok                 a complete answer arrived
timeout_connect    no connection within the connect timeout (or no free pooled connection)
timeout_first_token  connected, but no token before the deadline / read timeout
stall              tokens began, then stopped (read timeout, content silence or deadline)
rate_limited       account rate or concurrency limit; retryable later (429 and kin)
quota_exhausted    balance, spend cap, plan quota: a 429/402/403 that waiting will not fix
overloaded         provider capacity (503, 529, "overloaded"/"too busy" codes)
server_error       other provider failures (500, 502, 504, in-stream failures)
auth               key missing, invalid, expired, not allowed
bad_request        the request was refused as invalid (4xx, unknown model, redirects)
context_overflow   the prompt exceeds the model's window
content_filter     moderation refused the prompt or cut the answer
malformed_stream   undecodable events, or the stream ended without a finish signal; also a
                   reply that is not HTTP (or not TLS): something else is listening
connection_error   connection refused, reset or dropped (nothing, or nothing more, came)
response_too_large the answer passed the probe's byte cap (a flood, a decompression bomb)
truncated          the answer stopped at the output-token limit
context_full       the answer stopped because prompt and output filled the context window
empty              the stream finished normally (a finish reason) but carried no answer text
=================  ==========================================================================

``classify`` maps (HTTP status, body codes, preset) to a class: the first matching row of
``RULES`` wins, then message patterns, then ``GENERIC_RULES`` (bare error types), then a
status carried in the body, then the HTTP status alone. Body codes are strings; MiniMax
``base_resp`` codes are prefixed ``base_resp:`` because their numbers clash with Z.ai's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "ERROR_CLASSES",
    "GENERIC_RULES",
    "RETRYABLE",
    "RULES",
    "Rule",
    "classify",
    "classify_status",
]

ERROR_CLASSES = (
    "ok",
    "timeout_connect",
    "timeout_first_token",
    "stall",
    "rate_limited",
    "quota_exhausted",
    "overloaded",
    "server_error",
    "auth",
    "bad_request",
    "context_overflow",
    "content_filter",
    "malformed_stream",
    "connection_error",
    "response_too_large",
    "truncated",
    "context_full",
    "empty",
)

# What a scheduler may try again later; quota_exhausted, auth and bad_request never help.
RETRYABLE = frozenset(
    {"timeout_connect", "timeout_first_token", "stall", "rate_limited", "overloaded",
     "server_error", "malformed_stream", "connection_error"}
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Rule:
    """``codes`` match any body code exactly; ``status``/``preset`` narrow when set."""

    codes: tuple[str, ...]
    error_class: str
    status: int | None = None
    preset: str | None = None
    note: str = ""


def _r(codes: str, cls: str, *, status: int | None = None, preset: str | None = None) -> Rule:
    return Rule(tuple(codes.split()), cls, status, preset)


def _zai(first: int, last: int, cls: str) -> Rule:
    return Rule(tuple(str(c) for c in range(first, last + 1)), cls, note="Z.ai business codes")


# Order matters: specific codes before the generic error types they travel with
# (Z.ai sends code 1113 inside a "rate_limit_error"; Anthropic a spend cap inside one).
RULES: tuple[Rule, ...] = (
    # OpenAI
    _r("insufficient_quota credit_balance_exhausted billing_hard_limit_reached", "quota_exhausted"),
    _r("rate_limit_exceeded slow_down", "rate_limited"),
    _r("server_is_overloaded service_unavailable_error", "overloaded"),
    _r("context_length_exceeded string_above_max_length", "context_overflow"),
    # llama.cpp server
    _r("exceed_context_size_error", "context_overflow"),
    _r("content_filter content_policy_violation", "content_filter"),
    _r("invalid_api_key invalid_organization unsupported_country_region_territory", "auth"),
    # Anthropic (details.error_code before error.type)
    _r("enforced_spend_limit_reached", "quota_exhausted"),
    _r("billing_error", "quota_exhausted"),
    _r("overloaded_error OverloadedError", "overloaded"),
    _r("authentication_error permission_error", "auth"),
    _r("request_too_large", "bad_request"),
    # Z.ai / BigModel business codes (strings in error.code)
    _zai(1000, 1004, "auth"),
    _r("1113", "quota_exhausted"),
    _zai(1110, 1121, "auth"),
    _r("1221 1234", "server_error"),
    _zai(1200, 1233, "bad_request"),
    _r("1261", "context_overflow"),
    _r("1300 1301", "content_filter"),
    _r("1302 1303", "rate_limited"),
    _r("1304", "quota_exhausted"),
    _r("1305 1312", "overloaded"),
    _zai(1308, 1321, "quota_exhausted"),
    # MiniMax base_resp.status_code (HTTP status may be 200)
    _r("base_resp:1002", "rate_limited"),
    _r("base_resp:1004", "auth"),
    _r("base_resp:1008", "quota_exhausted"),
    _r("base_resp:1026 base_resp:1027", "content_filter"),
    _r("base_resp:1000 base_resp:1001 base_resp:1024 base_resp:1033", "server_error"),
    # Moonshot / Kimi
    _r("engine_overloaded_error", "overloaded"),
    _r("exceeded_current_quota_error", "quota_exhausted"),
    _r("rate_limit_reached_error", "rate_limited"),
    _r("invalid_authentication_error", "auth"),
    # Alibaba DashScope
    _r("Throttling.AllocationQuota AllocationQuota.FreeTierOnly", "quota_exhausted"),
    _r("Arrearage InsufficientBalance", "quota_exhausted"),
    _r("Throttling Throttling.RateQuota Throttling.User", "rate_limited"),
    _r("InvalidApiKey AccessDenied AccessDenied.Unpurchased Model.AccessDenied", "auth"),
    _r("DataInspectionFailed data_inspection_failed", "content_filter"),
    _r("ModelNotFound", "bad_request"),
    _r("InternalError InternalError.Algo", "server_error"),
    # Google RPC status (Gemini)
    _r("RESOURCE_EXHAUSTED", "rate_limited"),
    _r("UNAVAILABLE", "overloaded"),
    _r("UNAUTHENTICATED PERMISSION_DENIED API_KEY_INVALID", "auth"),
    _r("INTERNAL DEADLINE_EXCEEDED", "server_error"),
    # Preset-specific readings of a bare status
    _r("", "quota_exhausted", status=403, preset="moonshot"),
    _r("", "content_filter", status=403, preset="openrouter"),
)

# Generic error types: consulted after the message patterns, so that an Anthropic
# "invalid_request_error: prompt is too long" reads as context_overflow. Gemini's
# INVALID_ARGUMENT and MiniMax's 2013 ("invalid params") carry context overflows too.
GENERIC_RULES: tuple[Rule, ...] = (
    _r("rate_limit_error", "rate_limited"),
    _r("invalid_request_error not_found_error model_not_found InvalidParameter", "bad_request"),
    _r("INVALID_ARGUMENT FAILED_PRECONDITION NOT_FOUND base_resp:2013", "bad_request"),
    # vLLM exception names (a context overflow is a BadRequestError with a telling message)
    _r("BadRequestError UnprocessableEntityError NotFoundError NotImplementedError", "bad_request"),
    _r("InternalServerError", "server_error"),
)

_MESSAGE_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    # One alternative per server wording (see tests/fixtures/transcripts/overflow).
    (re.compile(r"context.{0,20}(length|window|size|limit)|maximum context|prompt is too long|"
                r"too many (input )?tokens|token length too long|exceeded model token limit|"
                r"input is too long|range of input length|maximum model length|"
                r"token count .{0,20}exceeds the maximum|tokens \+ `?max_new_tokens`? must be",
                re.I), "context_overflow"),
    (re.compile(r"insufficient (balance|credit|quota)|exceeded your current quota|"
                r"spend limit|no resource package|recharge", re.I), "quota_exhausted"),
    (re.compile(r"overload|high load|too busy|too much traffic|capacity", re.I), "overloaded"),
    # Gemini says a bad key with 400 INVALID_ARGUMENT, which alone would read as bad_request.
    (re.compile(r"api key not valid|invalid api[ _-]?key", re.I), "auth"),
    (re.compile(r"high risk|content (filter|policy)|sensitive|moderation", re.I),
     "content_filter"),
)  # fmt: skip


# Three ASCII digits: str.isdigit() also accepts "²" (which int() refuses) and codes of
# thousands of digits (which int() refuses past 4,300).
_HTTP_STATUS = re.compile(r"[3-5][0-9]{2}")


def classify_status(status: int) -> str:
    """The class an HTTP status implies when the body says nothing more specific."""
    if status in (401, 403, 407):
        return "auth"
    if status == 402:
        return "quota_exhausted"
    if status == 429:
        return "rate_limited"
    if status in (503, 529):
        return "overloaded"
    if status == 408 or status >= 500:
        return "server_error"
    return "bad_request"  # 3xx (redirect to a page), 400, 404, 413, 422, other 4xx


def _match(
    rules: Iterable[Rule], status: int | None, codes: set[str], preset: str | None
) -> str | None:
    for rule in rules:
        if rule.status is not None and rule.status != status:
            continue
        if rule.preset is not None and rule.preset != preset:
            continue
        if rule.codes and not codes.intersection(rule.codes):
            continue
        return rule.error_class
    return None


def classify(
    status: int | None,
    codes: Iterable[str] = (),
    message: str = "",
    preset: str | None = None,
) -> str:
    """Error class of a failed response or an in-stream error event.

    ``status`` is the HTTP status (200 for in-stream errors); ``codes`` every code-like field
    of the body (``error.code``, ``error.type``, ``error.status``, details...).
    """
    code_set = {c for c in codes if c}
    found = _match(RULES, status, code_set, preset)
    if found:
        return found
    for pattern, cls in _MESSAGE_RULES:
        if message and pattern.search(message):
            return cls
    found = _match(GENERIC_RULES, status, code_set, preset)
    if found:
        return found
    # OpenRouter, vLLM and Gemini put the HTTP status in error.code; inside a 200 stream it
    # is the only status there is.
    embedded = [int(c) for c in code_set if _HTTP_STATUS.fullmatch(c)]
    if (status is None or status < 300) and embedded:
        return classify_status(embedded[0])
    if status is None or status < 300:
        return "server_error"  # an in-stream error event with nothing more specific
    return classify_status(status)

"""How each simulated error and fault shows up in a probe row.

The status, codes and message come from the wire modules (what the server sends) and the
class from ``probes.errors.classify`` (what the probe engine concludes from it), so
synthetic rows carry the same ``http_status`` / ``error_code`` / ``error_class`` a live
probe of the simulator would record.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from probes.errors import classify
from probes.simulator import anthropic_wire, openai_wire
from probes.simulator.scenario import ERROR_KINDS, Provider

__all__ = ["FAULT_OUTCOMES", "Outcome", "error_outcomes"]


@dataclass(frozen=True, slots=True)
class Outcome:
    http_status: int | None
    error_code: str | None
    error_class: str
    detail: str
    streamed_tokens: bool  # tokens arrived before the failure (TTFT is known)


# What a probe of the simulator records for each fault (runner semantics, probes/errors.py).
FAULT_OUTCOMES: dict[str, Outcome] = {
    "reset_before_headers": Outcome(None, None, "connection_error", "connection reset", False),
    "reset_mid_stream": Outcome(200, None, "connection_error", "connection reset", True),
    "stall": Outcome(200, None, "stall", "no data before the read timeout", True),
    "slow_drip": Outcome(200, None, "stall", "deadline passed while bytes trickled", True),
    "malformed_json": Outcome(200, None, "malformed_stream", "undecodable event", True),
    "no_done": Outcome(200, None, "ok", "", True),
    "truncated": Outcome(200, None, "malformed_stream", "stream ended without finish", True),
    "html_502": Outcome(502, None, "server_error", "HTML error page", False),
    "wrong_content_type": Outcome(200, None, "ok", "", True),  # the body parses; tolerated
    "redirect": Outcome(302, None, "bad_request", "redirect", False),
    "huge_chunk": Outcome(200, None, "ok", "", True),
    "keepalive_minute": Outcome(200, None, "ok", "", True),
}


def _codes(payload: dict[str, Any]) -> list[str]:
    """Every code-like field of an error body, as the probe engine collects them."""
    error = payload.get("error") or {}
    codes = [error.get("code"), error.get("type"), (error.get("details") or {}).get("error_code")]
    base = payload.get("base_resp")
    if base:
        codes.append(f"base_resp:{base['status_code']}")
    return [str(c) for c in codes if c]


def error_outcomes(provider: Provider) -> dict[str, Outcome]:
    """Outcome of each scenario error kind on the provider's own wire format."""
    wire = openai_wire if provider.format == "openai" else anthropic_wire
    out: dict[str, Outcome] = {}
    for kind in ERROR_KINDS:
        if kind == "business_error":
            code = f"base_resp:{provider.business_error_code}"
            cls = classify(200, [code], provider.business_error_message)
            out[kind] = Outcome(200, code, cls, provider.business_error_message, False)
            continue
        if kind == "stream_error":
            payload = json.loads(_stream_error_json(provider))
            status = 200
        else:
            status, payload = wire.error_body(kind, None)
        codes = _codes(payload)
        message = str((payload.get("error") or {}).get("message", ""))
        cls = classify(status, codes, message)
        out[kind] = Outcome(
            status, codes[0] if codes else None, cls, message, kind == "stream_error"
        )
    return out


def _stream_error_json(provider: Provider) -> str:
    """The JSON of the in-stream error event the server sends for this provider."""
    wire = openai_wire if provider.format == "openai" else anthropic_wire
    raw = wire.stream_error().decode()
    data = next(line[5:].strip() for line in raw.splitlines() if line.startswith("data:"))
    return data

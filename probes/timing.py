"""Every timestamp of a probe, on one monotonic clock (``time.perf_counter_ns``).

Marks are nanoseconds; the row gets milliseconds relative to the moment the request was sent.
Definitions follow the careful latency benchmarks (see measurement notes): TTFT is the first
token of any kind (reasoning included); first-answer time waits for answer text; inter-token
gaps are between content-bearing chunks (role-only and empty chunks do not count); output
speed uses the provider's token count and excludes the first chunk, whose share of tokens is
estimated from its share of characters.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field

__all__ = ["Timeline", "now_ns"]

now_ns = time.perf_counter_ns


def _ms(start: int | None, end: int | None) -> float | None:
    if start is None or end is None:
        return None
    return (end - start) / 1e6


def _quantile(sorted_values: list[float], q: float) -> float:
    """Linear-interpolated quantile of an already sorted, non-empty list."""
    pos = (len(sorted_values) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


@dataclass(slots=True)
class Timeline:
    """Marks of one attempt. ``token`` is called once per content-bearing chunk."""

    sent: int | None = None
    headers: int | None = None
    first_token: int | None = None
    first_answer: int | None = None
    last_token: int | None = None
    last_event: int | None = None  # any event, text or not (a finish, a usage chunk)
    end: int | None = None
    token_times: list[int] = field(default_factory=list)
    first_chunk_chars: int = 0
    total_chars: int = 0

    def mark_sent(self) -> None:
        self.sent = now_ns()

    def mark_headers(self) -> None:
        self.headers = now_ns()

    def token(self, chars: int, *, answer: bool, at: int | None = None) -> None:
        """Record a chunk carrying ``chars`` characters of reasoning or answer text."""
        t = now_ns() if at is None else at
        if self.first_token is None:
            self.first_token = t
            self.first_chunk_chars = chars
        if answer and self.first_answer is None:
            self.first_answer = t
        self.last_token = t
        self.total_chars += chars
        self.token_times.append(t)

    def event(self, at: int) -> None:
        self.last_event = at

    def finish(self) -> None:
        if self.end is None:
            self.end = now_ns()

    def end_at_last_event(self) -> None:
        """End the timeline where the answer ended, not where the wait for a close did."""
        self.end = self.last_event if self.last_event is not None else self.end

    @property
    def since_last_token_s(self) -> float:
        """Seconds since the last token (or since the headers when none came yet)."""
        ref = self.last_token or self.headers or self.sent or now_ns()
        return (now_ns() - ref) / 1e9

    def gaps_ms(self) -> list[float]:
        times = self.token_times
        return [(b - a) / 1e6 for a, b in itertools.pairwise(times)]

    def output_tokens_per_s(self, output_tokens: int | None) -> float | None:
        """Provider tokens after the first chunk, over the time from first to last token."""
        if not output_tokens or len(self.token_times) < 2 or self.total_chars <= 0:
            return None
        assert self.first_token is not None and self.last_token is not None
        span_s = (self.last_token - self.first_token) / 1e9
        if span_s <= 0:
            return None
        after_first = output_tokens * (1 - self.first_chunk_chars / self.total_chars)
        return after_first / span_s if after_first > 0 else None

    def summary(self, output_tokens: int | None) -> dict[str, float | int | None]:
        """The timing columns of a ``ProbeResult``."""
        gaps = sorted(self.gaps_ms())
        return {
            "headers_ms": _ms(self.sent, self.headers),
            "ttft_ms": _ms(self.sent, self.first_token),
            "first_answer_ms": _ms(self.sent, self.first_answer),
            "last_token_ms": _ms(self.sent, self.last_token),
            "total_ms": _ms(self.sent, self.end),
            "itl_p50_ms": _quantile(gaps, 0.5) if gaps else None,
            "itl_p95_ms": _quantile(gaps, 0.95) if gaps else None,
            "itl_max_ms": gaps[-1] if gaps else None,
            "output_tokens_per_s": self.output_tokens_per_s(output_tokens),
            "chunks": len(self.token_times),
        }

"""What an adapter learns from one response, whatever the wire format.

``StreamState`` gathers answer and reasoning text, usage, finish reason, the reported model,
the upstream a router says served it and any error the provider signalled; ``Timeline``
marks when each content-bearing chunk arrived. The wire adapters only translate events
into calls on this object.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from probes.result import INT64_MAX
from probes.timing import Timeline, now_ns

__all__ = ["ProviderError", "StreamState", "ThinkSplitter", "Usage", "error_fields"]


@dataclass(slots=True)
class Usage:
    """Token counts as reported; cumulative reports are merged by taking the maximum.

    A count no int64 holds is not kept but named in ``out_of_range``: JSON integers have
    no size limit, a float cannot hold 400 digits (pricing and pacing multiply by one),
    and the row could not store it anyway (the runner flags it ``out_of_range:<name>``).
    """

    input_tokens: int | None = None  # the whole prompt, cached part included
    output_tokens: int | None = None
    cached_tokens: int | None = None
    reasoning_tokens: int | None = None
    cache_write_tokens: int | None = None  # prompt tokens written to a cache (billed higher)
    reported_cost: float | None = None  # OpenRouter's own figure, when present
    out_of_range: set[str] = field(default_factory=set)

    def merge(self, **values: int | None) -> None:
        for name, value in values.items():
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                continue
            if value > INT64_MAX:
                self.out_of_range.add(name)
                continue
            current = getattr(self, name)
            setattr(self, name, value if current is None else max(current, value))


@dataclass(slots=True)
class ProviderError:
    """An error the provider reported in a body or an in-stream event."""

    codes: tuple[str, ...]
    message: str


class ThinkSplitter:
    """Separates ``<think>…</think>`` reasoning from answer text, tags split across chunks
    included. ``open_missing``: text before a lone ``</think>`` was reasoning (MiniMax
    self-hosted templates drop the opening tag); fixed up in ``finish``."""

    _OPEN, _CLOSE = "<think>", "</think>"

    def __init__(self) -> None:
        self.inside = False
        self.seen_open = False
        self._pending = ""

    def feed(self, text: str) -> tuple[str, str]:
        """(reasoning, answer) parts of ``text``."""
        text, self._pending = self._pending + text, ""
        reasoning: list[str] = []
        answer: list[str] = []
        while text:
            tag = self._CLOSE if self.inside else self._OPEN
            at = text.find(tag)
            side = reasoning if self.inside else answer
            if at >= 0:
                side.append(text[:at])
                text = text[at + len(tag) :]
                self.seen_open = self.seen_open or not self.inside
                self.inside = not self.inside
                continue
            keep = _partial_suffix(text, tag)
            side.append(text[: len(text) - keep])
            self._pending = text[len(text) - keep :]
            break
        return "".join(reasoning), "".join(answer)

    def flush(self) -> tuple[str, str]:
        pending, self._pending = self._pending, ""
        return (pending, "") if self.inside else ("", pending)


def _partial_suffix(text: str, tag: str) -> int:
    """Length of the longest end of ``text`` that could begin ``tag``."""
    for size in range(min(len(tag) - 1, len(text)), 0, -1):
        if tag.startswith(text[-size:]):
            return size
    return 0


_SIM_FIRST_TOKEN = re.compile(r"first[-_ ]token[-_ ]ns\D{0,3}(\d+)", re.I)


@dataclass(slots=True)
class StreamState:
    """Everything gathered from one response."""

    think_tags: bool = False
    think_open_missing: bool = False
    usage_excludes_cache: bool = False
    timeline: Timeline = field(default_factory=Timeline)
    answer: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    finish_reason: str | None = None
    reported_model: str | None = None
    error: ProviderError | None = None
    done: bool = False  # a terminator ([DONE], message_stop) or a complete body was seen
    malformed: int = 0  # undecodable events
    malformed_detail: str | None = None
    comments: int = 0  # keep-alive comments and pings
    server_first_token_ns: int | None = None  # simulator's own first-token timestamp
    system_fingerprint: str | None = None  # OpenAI-style serving-stack identifier
    upstream_provider: str | None = None  # who served it behind a router (OpenRouter)
    # The first output token's top alternatives, (token, logprob), when logprobs were asked
    first_top_logprobs: tuple[tuple[str, float], ...] | None = None
    _splitter: ThinkSplitter = field(default_factory=ThinkSplitter)
    # With think tags: (offset in the joined answer, arrival) of each answer piece, so
    # ``texts`` can time the answer's real first character once the tags are resolved.
    _answer_marks: list[tuple[int, int]] = field(default_factory=list)
    _answer_chars: int = 0
    _fed_at: int | None = None

    def chunk(self, reasoning: str = "", answer: str = "", *, at: int | None = None) -> None:
        """One stream event's text; timed once if it carries any character."""
        at = now_ns() if at is None else at
        if answer and self.think_tags:
            extra_reasoning, answer = self._splitter.feed(answer)
            reasoning += extra_reasoning
            self._fed_at = at
        if reasoning:
            self.reasoning.append(reasoning)
        if answer:
            self._keep_answer(answer, at)
        if reasoning or answer:
            self.timeline.token(len(reasoning) + len(answer), answer=bool(answer), at=at)

    def _keep_answer(self, text: str, at: int | None) -> None:
        if self.think_tags and at is not None:
            self._answer_marks.append((self._answer_chars, at))
            self._answer_chars += len(text)
        self.answer.append(text)

    def comment(self, text: str) -> None:
        self.comments += 1
        match = _SIM_FIRST_TOKEN.search(text)
        # 19 digits hold any int64 of nanoseconds; int() refuses past 4,300 digits, and a
        # comment must never end the stream.
        if match and self.server_first_token_ns is None and len(match[1]) <= 19:
            self.server_first_token_ns = int(match[1])

    def bad_event(self, detail: str) -> None:
        self.malformed += 1
        self.malformed_detail = self.malformed_detail or detail[:200]

    def model(self, name: Any) -> None:
        if isinstance(name, str) and name and self.reported_model is None:
            self.reported_model = name

    def fingerprint(self, value: Any) -> None:
        if isinstance(value, str) and value and self.system_fingerprint is None:
            self.system_fingerprint = value

    def upstream(self, name: Any) -> None:
        """The first upstream a router names (OpenRouter's chunk ``provider``, §11)."""
        if isinstance(name, str) and name.strip() and self.upstream_provider is None:
            self.upstream_provider = name.strip()[:200]

    def top_logprobs(self, alternatives: Any) -> None:
        """Keep the first token's ``[{token, logprob}, ...]``; later tokens are ignored."""
        if self.first_top_logprobs is not None or not isinstance(alternatives, list):
            return
        pairs = tuple(
            (a["token"], float(a["logprob"]))
            for a in alternatives
            if isinstance(a, dict)
            and isinstance(a.get("token"), str)
            and isinstance(a.get("logprob"), (int, float))
            and not isinstance(a.get("logprob"), bool)
        )
        if pairs:
            self.first_top_logprobs = pairs

    def finish(self, reason: Any) -> None:
        if isinstance(reason, str) and reason:
            self.finish_reason = reason

    def terminate(self, name: str) -> None:
        """The stream's terminator. One before any finish signal and any text ends a stream
        that said nothing: no answer, so not ``empty`` (which is scored as the model's
        answer), but a stream that broke its own grammar (providers.md §1: the finish
        reason is the clean end, the terminator only framing)."""
        self.done = True
        if self.finish_reason is None and not self.answer and not self.reasoning:
            self.bad_event(f"{name} before any chunk with text or a finish reason")

    def fail(self, error: ProviderError) -> None:
        if self.error is None:
            self.error = error

    def texts(self) -> tuple[str, str]:
        """(answer, reasoning) with think-tag leftovers resolved.

        With think tags, the first-answer time is moved here to the chunk that carried the
        answer's first kept character: the line breaks after ``</think>`` are dropped from
        the answer, and text before a lone ``</think>`` turns out to be reasoning only now.
        """
        if not self.think_tags:
            return "".join(self.answer), "".join(self.reasoning)
        tail_reasoning, tail_answer = self._splitter.flush()
        if tail_reasoning:
            self.reasoning.append(tail_reasoning)
        if tail_answer:
            self._keep_answer(tail_answer, self._fed_at)
        answer, reasoning = "".join(self.answer), "".join(self.reasoning)
        start = 0
        if self.think_open_missing and not self._splitter.seen_open:
            head, sep, tail = answer.partition("</think>")
            if sep:
                reasoning, answer = reasoning + head, tail
                start = len(head) + len(sep)
        kept = answer.lstrip("\n")
        start += len(answer) - len(kept)
        found = self._answer_time(start)
        if not kept or found is not None:
            self.timeline.first_answer = found if kept else None
        return kept, reasoning

    def _answer_time(self, offset: int) -> int | None:
        """Arrival of the answer piece holding character ``offset``."""
        found = None
        for begins, at in self._answer_marks:
            if begins > offset:
                break
            found = at
        return found


def error_fields(body: Any) -> ProviderError | None:
    """The error in a decoded body of any provider's shape, or None if it holds none.

    Shapes: ``{"error": {code, type, status, message, details}}`` (OpenAI, Anthropic, Z.ai,
    DashScope, Gemini, OpenRouter, vLLM), the same wrapped in a list (Gemini's OpenAI route),
    flat ``{"object": "error", ...}`` (old vLLM), ``{"base_resp": {status_code}}`` (MiniMax,
    codes prefixed ``base_resp:``) and top-level ``{"code", "message"}`` (native DashScope).
    """
    if isinstance(body, list):
        body = body[0] if body and isinstance(body[0], dict) else None
    if not isinstance(body, dict):
        return None
    codes: list[str] = []
    message = ""
    err = body.get("error")
    if isinstance(err, dict):
        for key in ("code", "type", "status"):
            if err.get(key) is not None:
                codes.append(str(err[key]))
        details = err.get("details")
        for detail in details if isinstance(details, list) else [details]:
            if isinstance(detail, dict) and detail.get("error_code"):
                codes.insert(0, str(detail["error_code"]))
            if isinstance(detail, dict) and detail.get("reason"):  # google.rpc.ErrorInfo
                codes.append(str(detail["reason"]))
        message = str(err.get("message") or "")
    elif isinstance(err, str) and err:
        message = err
    elif body.get("object") == "error" or (body.get("code") and body.get("message")):
        codes += [str(body[k]) for k in ("code", "type") if body.get(k) is not None]
        message = str(body.get("message") or "")
    base = body.get("base_resp")
    if isinstance(base, dict) and base.get("status_code") not in (None, 0, "0"):
        codes.insert(0, f"base_resp:{base['status_code']}")
        message = message or str(base.get("status_msg") or "")
    if not codes and not message:
        return None
    return ProviderError(tuple(codes), message[:500])

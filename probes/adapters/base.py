"""The request an adapter builds, and the two functions every wire adapter provides."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from probes.adapters.presets import Preset
from probes.adapters.sse import Event
from probes.adapters.state import StreamState

__all__ = ["Request", "WireAdapter", "auth_headers"]


@dataclass(frozen=True, slots=True)
class Request:
    url: str
    headers: dict[str, str]
    body: dict[str, Any]
    stream: bool


class WireAdapter(Protocol):
    WIRE: str

    def build(
        self,
        *,
        base_url: str,
        model: str,
        prompt: str,
        max_tokens: int,
        temperature: float,
        stream: bool,
        preset: Preset,
        api_key: str | None,
        extra_headers: dict[str, str],
    ) -> Request: ...

    def on_event(self, event: Event, state: StreamState, at: int) -> None: ...

    def on_body(self, body: Any, state: StreamState) -> None: ...


def auth_headers(preset: Preset, wire: str, api_key: str | None) -> dict[str, str]:
    """The credential header for this preset (nothing when there is no key)."""
    if not api_key or preset.auth == "none":
        return {}
    scheme = preset.auth
    if scheme == "auto":
        scheme = "x-api-key" if wire == "anthropic" else "bearer"
    if scheme == "x-api-key":
        return {"x-api-key": api_key}
    return {"authorization": f"Bearer {api_key}"}

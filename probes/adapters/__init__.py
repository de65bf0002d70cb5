"""Wire adapters: turn (endpoint, prompt, params) into a request, and a response into a
``StreamState``. ``ADAPTERS`` maps a config's ``format`` to its module."""

from __future__ import annotations

from probes.adapters import anthropic, openai
from probes.adapters.base import Request, WireAdapter
from probes.adapters.presets import PRESETS, Preset, preset_for

__all__ = ["ADAPTERS", "PRESETS", "Preset", "Request", "WireAdapter", "preset_for"]

ADAPTERS: dict[str, WireAdapter] = {"openai": openai, "anthropic": anthropic}

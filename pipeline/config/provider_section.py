"""The ``[[providers]]`` tables: endpoint, model, wire format and preset, prices, and the
extra headers and body keys, with credentials refused wherever they could hide (URL, query,
header names) because the key belongs in the environment, not the file."""

from __future__ import annotations

import math
import re
from typing import Any

from pipeline.config.checker import Checker, did_you_mean, named_tables, type_name
from pipeline.config.model import (
    ProviderConfig,
)
from probes.adapters.presets import PRESETS

__all__ = ["build_providers"]


# Header names that carry credentials (x-api-key, x-goog-api-key, api-key, x-auth-token,
# ocp-apim-subscription-key, ...): the key belongs in the environment, not the file.
_SECRET_HEADER = re.compile(
    r"authorization|cookie|api[-_]?key|token|secret|password|subscription[-_]?key", re.I
)
# RFC 9110 field names are tokens; values are visible ASCII, space and tab (no CR/LF).
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_HEADER_VALUE = re.compile(r"[\t\x20-\x7e]*")
# Query parameters that carry credentials (?key=, ?api-key=, ?access_token=, ?sig=, ...).
_SECRET_QUERY = re.compile(r"[?&][^=&#]*(key|token|secret|password|sig)[^=&#]*=", re.I)


_PRICES = (
    "price_input_per_mtok",
    "price_output_per_mtok",
    "price_cached_per_mtok",
    "price_cache_write_per_mtok",
)


def build_providers(value: list[Any], c: Checker) -> tuple[ProviderConfig, ...]:
    out = []
    for p, t, name in named_tables(value, "providers", "provider", c):
        if t["format"] not in ("openai", "anthropic"):
            raise c.fail(f"{p}.format", f'expected "openai" or "anthropic", got {t["format"]!r}')
        url = t["base_url"]
        if not re.match(r"^https?://[^/\s]+", url):
            raise c.fail(f"{p}.base_url", f"expected an http(s) URL, got {url!r}")
        if re.match(r"^https?://[^/]*@", url) or _SECRET_QUERY.search(url):
            raise c.fail(
                f"{p}.base_url",
                "credentials in the URL; put the key in the environment and name it in api_key_env",
            )
        if t["api_key_env"] is not None:
            c.env(t["api_key_env"], f"{p}.api_key_env", f"the API key of provider {name!r}")
        preset = t["preset"] or t["format"]
        if preset not in PRESETS:
            extra = did_you_mean(preset, PRESETS)
            raise c.fail(f"{p}.preset", f"unknown preset {preset!r}{extra}")
        for key in ("max_context", "max_concurrency"):
            if t[key] <= 0:
                raise c.fail(f"{p}.{key}", f"expected a positive integer, got {t[key]}")
        for key in _PRICES:
            if t[key] is not None and t[key] < 0:
                raise c.fail(f"{p}.{key}", f"expected a price of 0 or more, got {t[key]}")
        if t["chars_per_token"] <= 0:
            raise c.fail(f"{p}.chars_per_token", "expected a positive number")
        out.append(
            ProviderConfig(
                name=name,
                format=t["format"],
                base_url=url.rstrip("/"),
                model=t["model"],
                api_key_env=t["api_key_env"],
                vendor=t["vendor"],
                plan=t["plan"],
                preset=preset,
                max_context=t["max_context"],
                price_input_per_mtok=t["price_input_per_mtok"],
                price_output_per_mtok=t["price_output_per_mtok"],
                price_cached_per_mtok=t["price_cached_per_mtok"],
                price_cache_write_per_mtok=t["price_cache_write_per_mtok"],
                max_concurrency=t["max_concurrency"],
                serialize_long_context=t["serialize_long_context"],
                chars_per_token=t["chars_per_token"],
                extra_headers=_headers(t["headers"], f"{p}.headers", c),
                extra_body=_body(t["body"], f"{p}.body", c),
            )
        )
    return tuple(out)


# Fields the probe sets itself: the row records them, so an override would make it lie.
_RESERVED_BODY = {
    "model",
    "messages",
    "stream",
    "stream_options",
    "prompt",
    "system",
    "max_tokens",
    "max_completion_tokens",
    "max_output_tokens",
    "temperature",
    "n",
}


def _body(value: dict[str, Any], path: str, c: Checker) -> dict[str, Any]:
    """Extra request fields; the probe's own fields cannot be overridden."""
    for key in value:
        if key in _RESERVED_BODY:
            raise c.fail(f"{path}.{key}", "the probe sets this field itself; remove it")
    _finite_numbers(value, path, c)
    return dict(value)


def _finite_numbers(value: object, path: str, c: Checker) -> None:
    """Refuse NaN and infinities anywhere in a body: JSON has no such numbers."""
    if isinstance(value, float) and not math.isfinite(value):
        raise c.fail(path, f"expected a finite number, got {value}")
    if isinstance(value, dict):
        for key, item in value.items():
            _finite_numbers(item, f"{path}.{key}", c)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _finite_numbers(item, f"{path}[{i}]", c)


def _headers(value: dict[str, Any], path: str, c: Checker) -> dict[str, str]:
    for key, header in value.items():
        if not _HEADER_NAME.fullmatch(key):
            raise c.fail(f"{path}.{key}", f"expected an HTTP header name, got {key!r}")
        if _SECRET_HEADER.search(key):
            raise c.fail(
                f"{path}.{key}",
                "secrets do not belong in the config; the API key "
                "comes from the variable named in api_key_env",
            )
        if not isinstance(header, str):
            raise c.fail(f"{path}.{key}", f"expected a string, got {type_name(header)}")
        if not _HEADER_VALUE.fullmatch(header):
            raise c.fail(
                f"{path}.{key}",
                "expected a header value of visible ASCII, spaces and tabs (no line breaks)",
            )
    return dict(value)

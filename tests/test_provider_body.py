"""A provider's `body` table (thinking or routing controls) reaches every request."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest

from pipeline.config import ConfigError, load_config
from probes.runner import run_probe

CONFIG = """\
[[providers]]
name = "glm"
format = "openai"
base_url = "http://127.0.0.1:9/v1"
model = "glm-x"
body = { thinking = { type = "disabled" }, provider = { order = ["a", "b"] } }

[[probes]]
name = "short"
task = "arithmetic"
every = "10m"
stream = false
"""


def test_body_fields_are_sent(tmp_path: Path) -> None:
    path = tmp_path / "nerfwatch.toml"
    path.write_text(CONFIG)
    config = load_config(path)
    seen: list[dict[str, object]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.content))
        return httpx.Response(200, json={"error": {"message": "nope", "type": "invalid_request"}})

    async def probe() -> str | None:
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
            row = await run_probe(config.providers[0], config.probes[0], client=client)
            return row.error_class

    assert asyncio.run(probe()) is not None
    assert seen and seen[0]["thinking"] == {"type": "disabled"}
    assert seen[0]["provider"] == {"order": ["a", "b"]}
    assert seen[0]["model"] == "glm-x"


def test_body_cannot_override_the_probe(tmp_path: Path) -> None:
    path = tmp_path / "nerfwatch.toml"
    path.write_text(CONFIG.replace("body = {", 'body = { model = "other",'))
    with pytest.raises(ConfigError, match=r"providers\[0\]\.body\.model"):
        load_config(path)

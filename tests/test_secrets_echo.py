"""A server that echoes the API key back never gets it stored, logged or shown.

The server is real HTTP on loopback. The keys are shaped like Gemini's (``AIza...``) and
Z.ai's (``id.secret``): no ``sk-``/``Bearer`` pattern catches them, only the exact value.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest

from pipeline.config import ProbeConfig, ProviderConfig
from pipeline.daemon.logs import setup_logging
from pipeline.report import IsoWeek, render_report
from pipeline.warehouse import Warehouse
from probes.result import ProbeResult
from probes.runner import run_probe
from probes.secrets import Secrets
from tests.support.http_server import QuietHandler, ThreadedServer
from tests.support.loopback import Reply, serving
from tests.support.probing import loopback_provider, probe_n, short_probe

GEMINI_KEY = "AIzaSyD-fakeGeminiKey_0123456789abcdefgh"
ZAI_KEY = "0f1e2d3c4b5a69788796a5b4c3d2e1f0.AbCdEfGhIjKlMnOp"
OPENAI_LIKE = "sk-proj-abcdefghijklmnop1234"


def _forms(key: str) -> list[str]:
    b64 = base64.b64encode(key.encode()).decode()
    return [
        key,
        quote(key, safe=""),
        b64,
        b64.rstrip("="),
        *[p for p in key.split(".") if len(p) >= 12],
    ]


class EchoServer(ThreadedServer):
    """Answers every chat request by echoing the bearer key in headers and the body."""

    def __init__(self, status: int) -> None:
        status_code = status

        class Handler(QuietHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length", "0")))
                key = self.headers.get("authorization", "").removeprefix("Bearer ")
                if status_code != 200:
                    body = json.dumps({"error": {"message": f"invalid key {key}", "type": "auth"}})
                    self._send(status_code, "application/json", body.encode(), key)
                    return
                chunk = {"id": "c1", "model": f"echo-{key}", "choices": [
                    {"index": 0, "delta": {"content": "42"}, "finish_reason": "stop"}]}  # fmt: skip
                usage = {"id": "c1", "choices": [], "usage": {
                    "prompt_tokens": 20, "completion_tokens": 1, "total_tokens": 21}}  # fmt: skip
                events = (
                    f"data: {json.dumps(chunk)}\n\ndata: {json.dumps(usage)}\n\ndata: [DONE]\n\n"
                )
                self._send(200, "text/event-stream", events.encode(), key)

            def _send(self, code: int, kind: str, body: bytes, key: str) -> None:
                self.send_response(code)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(body)))
                self.send_header("x-request-id", f"req_{key}")
                self.send_header("x-echo", key)
                self.send_header("x-echo-b64", base64.b64encode(key.encode()).decode())
                self.send_header("x-echo-url", quote(key, safe=""))
                self.end_headers()
                self.wfile.write(body)

        super().__init__(Handler)


def _probe(key: str, status: int, monkeypatch: pytest.MonkeyPatch) -> ProbeResult:
    monkeypatch.setenv("NW_ECHO_KEY", key)
    server = EchoServer(status)
    provider = ProviderConfig(
        name="echo", format="openai", base_url=server.base_url, model="m",
        api_key_env="NW_ECHO_KEY",
    )  # fmt: skip
    probe = ProbeConfig(
        name="t", task="arithmetic", context_tokens=1_000, every_s=60.0, cron=None,
        providers=("echo",), timeout_s=30.0, read_timeout_s=30.0,
    )  # fmt: skip

    async def go() -> ProbeResult:
        async with httpx.AsyncClient() as client:
            return await run_probe(provider, probe, client=client, seed=1)

    try:
        return asyncio.run(go())
    finally:
        server.close()


@pytest.mark.parametrize("key", [GEMINI_KEY, ZAI_KEY], ids=["gemini-shaped", "zai-shaped"])
@pytest.mark.parametrize("status", [200, 401])
def test_an_echoed_key_is_in_no_stored_field_or_log_line(
    key: str,
    status: int,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    setup_logging("DEBUG", secrets=[key])
    result = _probe(key, status, monkeypatch)
    logging.getLogger().handlers[0].flush()
    assert result.http_status == status
    stored = json.dumps(result.as_row(), default=str)
    logged = capsys.readouterr().err
    assert "x-request-id" in logged  # httpcore's DEBUG lines did carry the headers
    for form in _forms(key):
        assert form not in stored, form
        assert form not in logged, form
    assert result.request_id == "req_[redacted]"
    if status == 401:
        assert result.error_detail is not None and "[redacted]" in result.error_detail


def _echoed_as(where: str, key: str) -> Reply:
    if where == "error code":
        body = {"error": {"message": "refused", "code": key, "type": "authentication_error"}}
        return Reply(status=401, body=json.dumps(body).encode())
    chunk = {"choices": [{"index": 0, "delta": {"content": "42"}, "finish_reason": key}]}
    events = f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n"
    return Reply(body=events.encode(), headers={"content-type": "text/event-stream"})


@pytest.mark.parametrize("where", ["error code", "finish reason"])
def test_a_key_echoed_as_an_error_code_or_finish_reason_is_not_stored(
    where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Codes and finish reasons are short provider strings, stored as sent; a server that
    puts the key there must not get it into the row."""
    monkeypatch.setenv("NW_ECHO_KEY", ZAI_KEY)
    reply = _echoed_as(where, ZAI_KEY)
    with serving(lambda _n, _reused: reply) as srv:
        provider = loopback_provider(srv.port, api_key_env="NW_ECHO_KEY")
        (result,) = probe_n(provider, short_probe())
    stored = json.dumps(result.as_row(), default=str)
    assert all(form not in stored for form in _forms(ZAI_KEY)), stored
    if where == "error code":
        assert (result.error_class, result.error_code) == ("auth", "[redacted]")
    else:
        assert (result.error_class, result.finish_reason) == ("ok", "[redacted]")


def test_every_encoding_is_masked_and_short_values_are_left_alone() -> None:
    secrets = Secrets([ZAI_KEY, "short", None, "   "])
    text = " | ".join(_forms(ZAI_KEY)) + " | short"
    assert secrets.scrub(text) == " | ".join(["[redacted]"] * len(_forms(ZAI_KEY))) + " | short"


def test_the_report_masks_a_key_echoed_into_model_text(
    warehouse: Warehouse, tmp_path: Path
) -> None:
    now = datetime(2026, 11, 20, 12, tzinfo=UTC)
    row = {"run_id": str(uuid.uuid4()), "provider": "echo", "model": "m", "probe": "p",
           "task_family": "arithmetic", "context_class": "short", "source": "live",
           "started_at": now - timedelta(hours=1), "error_class": "ok", "ttft_ms": 200.0,
           "score_strict": "wrong",
           "response_text": f"your key is {ZAI_KEY} and also {OPENAI_LIKE}"}  # fmt: skip
    warehouse.insert_rows("probe_results", [row], key="run_id")
    stored = warehouse.query("SELECT response_text FROM probe_results")["response_text"][0]
    assert ZAI_KEY in stored  # model text is stored verbatim
    path = render_report(
        warehouse, tmp_path, week=IsoWeek(2026, 47), now=now, secrets=Secrets([ZAI_KEY])
    )
    html = path.read_text(encoding="utf-8")
    assert "your key is [redacted]" in html
    assert OPENAI_LIKE not in html  # key-shaped text is masked anyway
    assert all(form not in html for form in _forms(ZAI_KEY))

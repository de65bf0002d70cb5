"""Every fault mode, on demand, over real loopback HTTP, in both wire formats."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from probes.simulator import FAULTS, SimulatorHandle
from probes.tasks import FAMILIES

PROMPT = FAMILIES["arithmetic"].item(8, 200).prompt
TESTED: set[str] = set()


def _request(sim: SimulatorHandle, wire: str, stream: bool) -> tuple[str, dict[str, Any]]:
    if wire == "openai":
        body: dict[str, Any] = {"model": "m", "messages": [{"role": "user", "content": PROMPT}]}
        if stream:
            body |= {"stream": True, "stream_options": {"include_usage": True}}
        return sim.provider_url("nova") + "/chat/completions", body
    body = {"model": "m", "max_tokens": 256, "messages": [{"role": "user", "content": PROMPT}]}
    return sim.provider_url("sable") + "/messages", body | ({"stream": True} if stream else {})


def _data(raw: bytes) -> list[str]:
    return [line[5:].strip() for line in raw.decode().splitlines() if line.startswith("data:")]


def _wait_idle(sim: SimulatorHandle, timeout_s: float = 5.0) -> None:
    """The server notices the client left and counts the request done."""
    deadline = time.monotonic() + timeout_s
    while any(sim.state.inflight.values()):
        assert time.monotonic() < deadline, f"requests still in flight: {sim.state.inflight}"
        time.sleep(0.01)


def fault(name: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    TESTED.add(name)
    return pytest.mark.parametrize("wire", ["openai", "anthropic"])


def _post(sim: SimulatorHandle, wire: str, name: str, stream: bool, **kw: Any) -> httpx.Response:
    url, body = _request(sim, wire, stream)
    with httpx.Client(timeout=kw.pop("timeout", 10)) as client:
        return client.post(url, json=body, headers={"x-sim-fault": name}, **kw)


@fault("reset_before_headers")
def test_reset_before_headers(simulator: SimulatorHandle, wire: str) -> None:
    for stream in (True, False):
        with pytest.raises((httpx.ReadError, httpx.RemoteProtocolError)):
            _post(simulator, wire, "reset_before_headers", stream)
    _wait_idle(simulator)


@fault("reset_mid_stream")
def test_reset_mid_stream(simulator: SimulatorHandle, wire: str) -> None:
    url, body = _request(simulator, wire, True)
    received = b""
    headers = {"x-sim-fault": "reset_mid_stream"}
    with (
        httpx.Client(timeout=10) as client,
        pytest.raises((httpx.ReadError, httpx.RemoteProtocolError)),
        client.stream("POST", url, json=body, headers=headers) as r,
    ):
        assert r.status_code == 200
        for chunk in r.iter_bytes():
            received += chunk
    assert _data(received)  # some events arrived before the reset
    with pytest.raises((httpx.ReadError, httpx.RemoteProtocolError)):
        _post(simulator, wire, "reset_mid_stream", False)
    _wait_idle(simulator)


@fault("stall")
def test_stall_until_the_client_gives_up(simulator: SimulatorHandle, wire: str) -> None:
    url, body = _request(simulator, wire, True)
    timeout = httpx.Timeout(10, read=0.5)
    received = b""
    with (
        httpx.Client(timeout=timeout) as client,
        pytest.raises(httpx.ReadTimeout),
        client.stream("POST", url, json=body, headers={"x-sim-fault": "stall"}) as r,
    ):
        for chunk in r.iter_bytes():
            received += chunk
    assert _data(received) and b"[DONE]" not in received and b"message_stop" not in received
    with pytest.raises(httpx.ReadTimeout):
        _post(simulator, wire, "stall", False, timeout=timeout)
    _wait_idle(simulator)


@fault("slow_drip")
def test_slow_drip_never_trips_a_read_timeout(simulator: SimulatorHandle, wire: str) -> None:
    url, body = _request(simulator, wire, True)
    timeout = httpx.Timeout(10, read=0.5)  # drip interval is 1 s x time_scale = 10 ms
    received, reads = b"", 0
    deadline = time.monotonic() + 1.5
    headers = {"x-sim-fault": "slow_drip"}
    with (
        httpx.Client(timeout=timeout) as client,
        client.stream("POST", url, json=body, headers=headers) as r,
    ):
        for chunk in r.iter_bytes():
            received += chunk
            reads += 1
            if time.monotonic() > deadline:
                break
    assert reads > 20  # bytes kept coming, one at a time
    assert b"[DONE]" not in received and b"message_stop" not in received
    _wait_idle(simulator)


@fault("malformed_json")
def test_malformed_json_event(simulator: SimulatorHandle, wire: str) -> None:
    raw = _post(simulator, wire, "malformed_json", True).content
    bad = 0
    for data in _data(raw):
        if data == "[DONE]":
            continue
        try:
            json.loads(data)
        except json.JSONDecodeError:
            bad += 1
    assert bad == 1
    assert raw.rstrip().endswith((b"[DONE]", b'{"type": "message_stop"}'))
    whole = _post(simulator, wire, "malformed_json", False)
    with pytest.raises(json.JSONDecodeError):
        json.loads(whole.content)


@fault("no_done")
def test_no_done(simulator: SimulatorHandle, wire: str) -> None:
    raw = _post(simulator, wire, "no_done", True).content
    data = _data(raw)
    assert "[DONE]" not in data and b"message_stop" not in raw
    if wire == "openai":
        finish = [json.loads(d)["choices"] for d in data]
        assert any(c and c[0]["finish_reason"] == "stop" for c in finish)
        assert json.loads(data[-1])["usage"]["completion_tokens"] > 0
    else:
        assert json.loads(data[-1])["type"] == "message_delta"


@fault("truncated")
def test_truncated_clean_eof_mid_content(simulator: SimulatorHandle, wire: str) -> None:
    raw = _post(simulator, wire, "truncated", True).content
    data = _data(raw)
    assert data and "[DONE]" not in data
    if wire == "openai":
        assert all(json.loads(d)["choices"][0]["finish_reason"] is None for d in data)
    else:
        assert b"message_delta" not in raw


@fault("html_502")
def test_html_502(simulator: SimulatorHandle, wire: str) -> None:
    for stream in (True, False):
        r = _post(simulator, wire, "html_502", stream)
        assert r.status_code == 502 and r.headers["content-type"].startswith("text/html")
        assert "<html>" in r.text


@fault("wrong_content_type")
def test_wrong_content_type(simulator: SimulatorHandle, wire: str) -> None:
    for stream in (True, False):
        r = _post(simulator, wire, "wrong_content_type", stream)
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")


@fault("redirect")
def test_redirect(simulator: SimulatorHandle, wire: str) -> None:
    r = _post(simulator, wire, "redirect", True)
    assert r.status_code == 302 and r.headers["location"].endswith("/_sim/moved")
    assert httpx.get(r.headers["location"]).headers["content-type"].startswith("text/html")


@fault("huge_chunk")
def test_huge_chunk(simulator: SimulatorHandle, wire: str) -> None:
    raw = _post(simulator, wire, "huge_chunk", True).content
    longest = max(raw.split(b"\n"), key=len)
    assert len(longest) > simulator.scenario.fault_timing.huge_chunk_bytes
    event = json.loads(longest[5:])
    text = event["choices"][0]["delta"]["content"] if wire == "openai" else event["delta"]["text"]
    item = FAMILIES["arithmetic"].item(8, 200)
    assert FAMILIES["arithmetic"].score(item, text).strict == "correct"
    assert len(_post(simulator, wire, "huge_chunk", False).content) > 1_000_000


@fault("keepalive_minute")
def test_keepalive_comments_before_the_first_token(simulator: SimulatorHandle, wire: str) -> None:
    started = time.perf_counter()
    raw = _post(simulator, wire, "keepalive_minute", True).content
    elapsed = time.perf_counter() - started
    timing = simulator.scenario.fault_timing
    assert elapsed >= timing.keepalive_s * simulator.scenario.time_scale * 0.9
    text = raw.decode()
    first_token = text.index("content_block_delta" if wire == "anthropic" else '"content": "')
    assert text[:first_token].count(": keep-alive") >= 5
    whole = _post(simulator, wire, "keepalive_minute", False)
    assert whole.content.startswith(b"\n") and json.loads(whole.content)


def test_every_fault_is_tested() -> None:
    assert set(FAULTS) == TESTED


def test_scenario_fault_probability(
    simulator_factory: Callable[..., SimulatorHandle], tmp_path: Path
) -> None:
    scenario = tmp_path / "faulty.toml"
    scenario.write_text(
        '[[providers]]\nname = "flaky"\nvendor = "Flaky"\nformat = "openai"\nmodel = "f-1"\n'
        "faults = { html_502 = 1.0 }\n",
        encoding="utf-8",
    )
    sim = simulator_factory(scenario, quiet=False)
    url = sim.provider_url("flaky") + "/chat/completions"
    body = {"model": "f", "messages": [{"role": "user", "content": "hi"}]}
    assert httpx.post(url, json=body).status_code == 502
    clean = httpx.post(url, json=body, headers={"x-sim-fault": "none"})
    assert clean.status_code == 200

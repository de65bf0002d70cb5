"""Wire transcripts (tests/fixtures/transcripts/loopback/*.toml), each served as raw bytes
by a real loopback HTTP/1.1 server through ``run_probe``, asserting the classified row:
rate-limit headers, usage fields, in-stream errors and finish reasons of OpenRouter and
Gemini (providers.md §10, §11), and the in-stream error and usage shapes of DashScope,
MiniMax, DeepSeek and Moonshot (§6-§9) that had been replayed only over MockTransport,
which skips the socket, the status line and the header parsing these exercise.

The wall clock is frozen at 2026-11-20T09:00:00Z (time_machine; the monotonic clock the
client times and waits with is not moved) so a reset sent as an absolute time reads as an
exact wait whatever today's date is.
"""

from __future__ import annotations

import tomllib
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import time_machine

from probes.result import ProbeResult
from tests.support.loopback import Reply, serving
from tests.support.probing import loopback_provider, probe_n, short_probe

HERE = Path(__file__).parent / "fixtures" / "transcripts" / "loopback"
NOW = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)  # Unix 1795165200, as the README says


def _load(name: str) -> dict[str, Any]:
    return tomllib.loads((HERE / f"{name}.toml").read_text())


def _cases() -> list[Any]:
    out = []
    for path in sorted(HERE.glob("*.toml")):
        for case in _load(path.stem).get("case", []):
            out.append(pytest.param(path.stem, case, id=f"{path.stem}: {case['name']}"))
    return out


def _replay(provider_file: str, case: dict[str, Any]) -> ProbeResult:
    meta = _load(provider_file)
    reply = Reply(
        status=case.get("status", 200),
        body=case["body"].encode(),
        headers=case.get("headers", {"content-type": "text/event-stream"}),
        close_after=case.get("close", False),
    )
    with serving(lambda _n, _reused: reply) as srv:
        provider = loopback_provider(srv.port, meta["format"], preset=meta["preset"])
        provider = replace(provider, model=meta["model"], name=provider_file)
        probe = short_probe(
            providers=(provider_file,),
            stream=case.get("stream", True),
            timeout_s=4.0,
            read_timeout_s=2.0,
        )
        with time_machine.travel(NOW, tick=False):
            (result,) = probe_n(provider, probe)
    return result


def test_both_providers_are_replayed() -> None:
    assert {p.stem for p in HERE.glob("*.toml")} >= {"openrouter", "gemini"}


@pytest.mark.parametrize(("provider_file", "case"), _cases())
def test_loopback_transcript(provider_file: str, case: dict[str, Any]) -> None:
    result = _replay(provider_file, case)
    for key, value in case["expect"].items():
        actual = getattr(result, key)
        if isinstance(value, float):
            assert actual == pytest.approx(value, rel=1e-9), (key, actual)
        else:
            assert actual == value, f"{key}: {actual!r} != {value!r} ({result.error_detail})"
    assert result.run_status == "done"
    assert result.streamed == case.get("stream", True)

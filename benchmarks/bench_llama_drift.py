"""Border-input and logprob tracking against real llama.cpp: power and false alarms over runs.

The tiny random-weight model (tests/support/tiny_model.py) is served by llama-server at
f16, q8_0 and q4_0 under one model name, three servers side by side. Each run has its own
seed salt: border inputs are discovered on f16 (40 candidates x 3 calls at temperature
0.03, seeded per call), 8 are kept with a 40-call reference, 4 days are sampled on f16
(80 calls a day), then 3 more days on each arm. Border-input power: the alarm rule fires by
the third day of the arm. Logprob tracking: 30 calls of "x" on the arm vs 30 on f16, p <
0.01. llama-server is deterministic, so the f16 arm's logprob rows equal the reference.

Run: .venv/bin/python benchmarks/bench_llama_drift.py [--runs 5]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import httpx

from pipeline.analysis.logprob_tracking import logprob_test
from pipeline.config import ProviderConfig
from pipeline.drift.baseline import Baseline, DriftSettings
from pipeline.drift.check import check_baseline
from pipeline.drift.collect import discover, logprob_window, sample_day
from tests.support.llama_server import LlamaServer, start_llama_server, stop
from tests.support.quantized import quantize
from tests.support.tiny_model import N_CTX, write_tiny_model

ARMS = ("F16", "Q8_0", "Q4_0")
FIRST = date(2026, 3, 2)


def _provider(server: LlamaServer) -> ProviderConfig:
    return ProviderConfig(
        name="llama", format="openai", base_url=server.base_url, model="tiny",
        api_key_env=None, preset="llamacpp", max_context=N_CTX,
    )  # fmt: skip


async def _run(servers: dict[str, LlamaServer], salt: str) -> dict[str, tuple[bool, float]]:
    """arm -> (border-input alarm by the 3rd day, logprob p)."""
    settings = DriftSettings(
        candidates=40, inputs=8, reference_calls=40, per_input=10, temperature=0.03,
        seed_salt=salt,
    )  # fmt: skip
    f16 = _provider(servers["F16"])
    out = {}
    async with httpx.AsyncClient() as client:
        base = await discover(f16, client, settings, accepted_at=datetime(2026, 3, 1, tzinfo=UTC))
        for i in range(4):
            base.add_day(await sample_day(f16, client, base, FIRST + timedelta(i)))
        reference = await logprob_window(f16, client, 30, top_k=10, phase=f"{salt}ref")
        for arm, server in servers.items():
            trial = Baseline(
                base.provider, base.model, base.accepted_at, base.settings, base.discovery,
                base.reference, list(base.days),
            )  # fmt: skip
            for i in range(4, 7):
                day = FIRST + timedelta(i)
                trial.add_day(await sample_day(_provider(server), client, trial, day))
            alarm = bool(check_baseline(trial, runs=20).alarm_days)
            window = await logprob_window(_provider(server), client, 30, top_k=10, phase=salt)
            out[arm] = (alarm, logprob_test(reference, window, seed=1, permutations=999).p_value)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    began = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        source = write_tiny_model(folder / "tiny-f32.gguf")
        servers: dict[str, LlamaServer] = {}
        try:
            for arm in ARMS:
                model = quantize(source, folder / f"tiny-{arm}.gguf", arm)
                servers[arm] = start_llama_server(folder, model, alias="tiny")
            results = [asyncio.run(_run(servers, f"run{r} ")) for r in range(runs)]
        finally:
            for server in servers.values():
                stop(server)
    print(f"{runs} runs; 80 one-token calls a day; 30 logprob calls a window")
    print("arm   | border-input alarm by day 3 | logprob p < 0.01")
    for arm in ARMS:
        alarms = sum(r[arm][0] for r in results)
        lt = sum(r[arm][1] < 0.01 for r in results)
        print(f"{arm:5} | {alarms}/{runs} {'':>20}| {lt}/{runs}")
    print("(the F16 row is the false-alarm rate: the unchanged model)")
    print(f"{time.perf_counter() - began:.0f} s")


if __name__ == "__main__":
    main()

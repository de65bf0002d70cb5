"""Hostile servers against one probe: peak memory and wall time with the caps on.

Each case is a real HTTP server on loopback; each probe runs in a fresh interpreter whose
peak RSS is read from its own ``VmHWM`` (``ru_maxrss`` survives exec on Linux and would
report the parent's, which holds the bomb). The probe has a 20 s deadline, a 10 s read timeout and
the default 8 MB byte cap. Before the caps: a flood reached 7.5 GB RSS in 160 s, a gzip
bomb 4.3 GB and 62.6 s past a 20 s deadline, an endless line 1.28 GB.

    .venv/bin/python benchmarks/bench_hostile_server.py
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.loopback import Reply, serving  # noqa: E402

STREAM = {"content-type": "text/event-stream"}
_EVENT = json.dumps({"choices": [{"index": 0, "delta": {"content": "x" * 1000}}]})

_PROBE = """
import asyncio, json, sys, time
import httpx
from pipeline.config import ProbeConfig, ProviderConfig
from probes.runner import run_probe
provider = ProviderConfig(name="p", format="openai", base_url=f"http://127.0.0.1:{sys.argv[1]}/v1",
                          model="m", api_key_env=None, preset="openai")
probe = ProbeConfig(name="t", task="arithmetic", context_tokens=1000, every_s=60.0, cron=None,
                    providers=("p",), timeout_s=20.0, read_timeout_s=10.0)
async def go():
    async with httpx.AsyncClient() as client:
        return await run_probe(provider, probe, client=client, seed=1)
started = time.monotonic()
row = asyncio.run(go())
hwm = next(l for l in open("/proc/self/status") if l.startswith("VmHWM"))  # this process only
print(json.dumps({"class": row.error_class, "s": time.monotonic() - started,
                  "rss_mb": int(hwm.split()[1]) / 1024}))
"""


def _cases() -> dict[str, Reply]:
    bomb = gzip.compress(b"\0" * 1_000_000_000, compresslevel=9)  # 1 GB from about 1 MB
    lie = {**STREAM, "content-length": str(2 * 1024**3)}
    return {
        "flood (200 MB of content)": Reply(
            body=f"data: {_EVENT}\n\n".encode() * 200_000, headers=STREAM
        ),
        "gzip bomb (1 GB decoded)": Reply(
            body=bomb, headers={**STREAM, "content-encoding": "gzip"}
        ),
        "endless line (200 MB)": Reply(body=b"data: " + b"x" * 200_000_000, headers=STREAM),
        "2 GB content-length lie": Reply(body=b": hello\n\n", headers=lie),
        "keep-alive flood (100 MB)": Reply(body=b": keep-alive\n\n" * 7_000_000, headers=STREAM),
    }


def main() -> None:
    print(f"{'case':30} {'class':20} {'wall s':>7} {'peak RSS MB':>12}")
    for name, reply in _cases().items():
        with serving(lambda _n, _reused, r=reply: r) as srv:  # type: ignore[misc]
            started = time.monotonic()
            done = subprocess.run(
                [sys.executable, "-c", _PROBE, str(srv.port)],
                cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
            )  # fmt: skip
            wall = time.monotonic() - started
        if done.returncode != 0:
            print(f"{name:30} failed: {done.stderr.strip()[-300:]}")
            continue
        out = json.loads(done.stdout.strip().splitlines()[-1])
        print(f"{name:30} {out['class']:20} {wall:7.1f} {out['rss_mb']:12.0f}")


if __name__ == "__main__":
    main()

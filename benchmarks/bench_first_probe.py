"""First probe of a process versus the rest: does lazy setup land inside the first TTFT?

A loopback server answers every request after a fixed delay; each run starts a fresh
interpreter that sends N probes back to back through ``run_probe`` and reports TTFTs. Per
run we print the first probe's TTFT minus the delay, the median of probes 2..N minus the
delay, and their difference (the first probe's excess). Target: excess within 2 ms on an
idle machine. Before the transport warm-up the excess was 85 ms idle, 220-400 ms on a loaded
2-core machine.

    uv run python benchmarks/bench_first_probe.py [--runs 10] [--probes 10] [--delay-ms 50]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.loopback import openai_answer, serving  # noqa: E402


def _run(port: int, probes: int) -> list[float]:
    done = subprocess.run(
        [sys.executable, "-m", "tests.support.first_probe", str(port), str(probes)],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=True,
    )  # fmt: skip
    ttfts = json.loads(done.stdout)
    if None in ttfts:
        raise SystemExit(f"a probe failed: {ttfts}")
    return [float(t) for t in ttfts]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=10, help="fresh processes")
    parser.add_argument("--probes", type=int, default=10, help="probes per process")
    parser.add_argument("--delay-ms", type=float, default=50.0, help="server's fixed delay")
    args = parser.parse_args()
    delayed = replace(openai_answer(), delay_s=args.delay_ms / 1000)
    excesses = []
    print(f"{'run':>4} {'first ms':>9} {'median 2..N ms':>15} {'excess ms':>10}  (minus delay)")
    with serving(lambda _n, _reused: delayed) as srv:
        for run in range(1, args.runs + 1):
            ttfts = [t - args.delay_ms for t in _run(srv.port, args.probes)]
            rest = statistics.median(ttfts[1:])
            excesses.append(ttfts[0] - rest)
            print(f"{run:>4} {ttfts[0]:>9.2f} {rest:>15.2f} {excesses[-1]:>10.2f}")
    print(
        f"excess over {args.runs} runs: median {statistics.median(excesses):.2f} ms, "
        f"min {min(excesses):.2f}, max {max(excesses):.2f}"
    )


if __name__ == "__main__":
    main()

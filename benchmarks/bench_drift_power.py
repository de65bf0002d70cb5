"""Detection power of border-input and logprob tracking vs shift size and calls per day.

The model is the simulator's own first-token model (probes.simulator.first_token):
prompt-seeded logits over 12 tokens, per-call serving noise (sd 0.15), and a quantized
shift of sd 2 x q logits along a prompt-seeded direction. Calls are drawn in-process (no
HTTP), so the figures measure the statistics, not the server.

Per run (seeded): discovery over 200 candidates at temperature 0 (3 calls each), the most
balanced border inputs get a 100-call reference; then 10 unchanged days and 3 days at shift
q. Border-input power: the alarm rule (|TV - mean| > max(0.2, 4 sd), 3 days in a row) fires
by the third shifted day. False alarms: alarms on the 10 unchanged days (and on 3 more
unchanged days in place of the shift). Logprob power: the permutation test on 50 vs 50
calls of one fixed prompt at p < 0.01; its false-alarm rate at q = 0.

Run: .venv/bin/python benchmarks/bench_drift_power.py [--runs 40]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from pipeline.analysis.border_inputs import (
    candidate_prompts,
    counts,
    day_distance,
    select_border_inputs,
)
from pipeline.analysis.drift_alarm import judge_series, simulate_null
from pipeline.analysis.logprob_tracking import logprob_test
from probes.simulator.first_token import Sampling, first_token, greedy_tokens

SHIFTS = (0.0, 0.02, 0.04, 0.06, 0.08, 0.1, 0.15)  # the scenario's "quantized" values
BUDGETS = ((10, 10), (20, 10), (20, 20))  # (border inputs, calls per input) per day
UNCHANGED_DAYS, SHIFTED_DAYS = 10, 3
LT_CALLS, LT_ALPHA = 50, 0.01


def _day(
    ref: dict[str, dict[str, int]], q: float, per_input: int, rng: np.random.Generator
) -> float:
    distance = day_distance(ref, {p: counts(greedy_tokens(p, q, per_input, rng)) for p in ref})
    return 0.0 if distance is None else distance


def border_run(seed: int, q: float, inputs: int, per_input: int) -> tuple[bool, int, int, int]:
    """(detected by the 3rd shifted day, false alarms before, false alarms if unchanged,
    border inputs found)."""
    rng = np.random.default_rng(seed)
    found = {p: greedy_tokens(p, 0.0, 3, rng) for p in candidate_prompts(200)}
    ref = {p: counts(greedy_tokens(p, 0.0, 100, rng)) for p in select_border_inputs(found, inputs)}
    null = simulate_null(ref, per_input, seed=seed)
    before = [_day(ref, 0.0, per_input, rng) for _ in range(UNCHANGED_DAYS)]
    after = [_day(ref, q, per_input, rng) for _ in range(SHIFTED_DAYS)]
    still = [_day(ref, 0.0, per_input, rng) for _ in range(SHIFTED_DAYS)]
    shifted = judge_series([*before, *after], null)
    unchanged = judge_series([*before, *still], null)
    early = sum(v.alarm for v in shifted[:UNCHANGED_DAYS])
    late = sum(v.alarm for v in unchanged[UNCHANGED_DAYS:])
    return any(v.alarm for v in shifted[UNCHANGED_DAYS:]), early, late, len(ref)


def lt_run(seed: int, q: float) -> float:
    rng = np.random.default_rng(seed)
    asked = Sampling(temperature=0.0, top_logprobs=5)

    def window(shift: float) -> list[dict[str, float]]:
        return [dict(first_token("x", shift, asked, rng)[1]) for _ in range(LT_CALLS)]

    return logprob_test(window(0.0), window(q), seed=seed, permutations=499).p_value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    runs = parser.parse_args().runs
    began = time.perf_counter()
    print(f"border inputs, alarm by the 3rd shifted day ({runs} runs per cell)")
    print("shift q (logit sd) | " + " | ".join(f"{i}x{c}={i * c}/day" for i, c in BUDGETS))
    false_days = false_total = 0
    found: dict[int, list[int]] = {}
    for q in SHIFTS:
        cells = []
        for inputs, per_input in BUDGETS:
            results = [border_run(1000 * r + 7, q, inputs, per_input) for r in range(runs)]
            power = sum(r[0] for r in results) / runs
            false_days += sum(r[1] + r[2] for r in results)
            false_total += runs * (UNCHANGED_DAYS + SHIFTED_DAYS)
            found.setdefault(inputs, []).extend(r[3] for r in results)
            cells.append(f"{power:5.2f}")
        print(f"{q:5.2f} ({2 * q:4.2f})       | " + " | ".join(f"{c:>14}" for c in cells))
    print(
        f"false alarms on unchanged days: {false_days} in {false_total} "
        f"(per-day rate {false_days / false_total:.4f}; the q = 0 row is the alarm rate "
        "within 3 unchanged days)"
    )
    for inputs, sizes in found.items():
        print(f"border inputs kept when {inputs} were asked: mean {np.mean(sizes):.1f}")
    print(f"\nlogprob tracking, {LT_CALLS} vs {LT_CALLS} calls of one prompt, p < {LT_ALPHA}")
    for q in SHIFTS:
        ps = [lt_run(500 + r, q) for r in range(runs)]
        print(f"{q:5.2f}: {np.mean(np.array(ps) < LT_ALPHA):.2f}")
    print(f"\n{time.perf_counter() - began:.1f} s")


if __name__ == "__main__":
    main()

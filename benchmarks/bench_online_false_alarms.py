"""Online (CUSUM) false alarms on changeless hourly series, through ``change_rows``.

Each series is 40 days of hourly log TTFT: the median of ``--per-hour`` probes (log-normal,
sd 0.25, 1 % Pareto(1.5) tails, 0.2 % 10x outliers, the planted daily and weekday rhythm),
deseasonalised as the analysis does. Counts the online alarms per monitored hour (after
the baseline) against the target run length ``ONLINE_ARL0_HOURS``, and those whose stored
effect reaches the 5 % a report verdict shows.

Measured (40 series each; alarms per 2160 monitored h, target 1; in brackets those with
|effect| >= 5 %, what a report verdict shows):
  before ('after' level = start..alarm): 1 probe/h 7.42 (7.42); 12/h 1.77 (1.43)
  now ('after' level = a week from the start): 1 probe/h 7.43 (0.93); 12/h 1.77 (0.08)
The CUSUM itself is still above its target: with one probe an hour a single 10x outlier
takes it past the threshold (residuals clipped at 3 sd: 2.70 alarms, but the planted +30 %
step's median delay in bench_analysis_accuracy Part 2 went 1.5 -> 2.0 h, so not done), and
the baseline's estimated level, scale and AR(1) (320 h here) and the 48-hour re-learning
after an alarm add the rest (i.i.d. N(0,1), no rhythm: 2.4 per 2160 h).

Run: uv run python benchmarks/bench_online_false_alarms.py [--series N] [--per-hour K]
"""

from __future__ import annotations

import argparse

import numpy as np

from pipeline.analysis.metric_rows import ONLINE_ARL0_HOURS, change_rows
from pipeline.analysis.rows import ResultRows
from pipeline.analysis.seasonality import decompose

MONDAY = np.datetime64("2026-01-05T00", "h")
DAYS = 40


def changeless(per_hour: int, rng: np.random.Generator) -> np.ndarray:
    n = DAYS * 24 * per_hour
    t = np.arange(n) / per_hour
    rhythm = np.sin(2 * np.pi * (t % 24 - 9) / 24) + 0.4 * ((t // 24) % 7 < 5) - 0.2
    y = np.log(1400) + 0.3 * rhythm + rng.normal(0, 0.25, n)
    tail = rng.random(n) < 0.01
    y[tail] += np.log(rng.pareto(1.5, tail.sum()) + 1)
    y[rng.random(n) < 0.002] += np.log(10)
    return np.asarray(np.median(y.reshape(-1, per_hour), axis=1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--series", type=int, default=40)
    parser.add_argument("--per-hour", type=int, default=1)
    args = parser.parse_args()
    alarms = shown = monitored = 0
    for seed in range(args.series):
        y = changeless(args.per_hour, np.random.default_rng(seed))
        hours = MONDAY + np.arange(y.size)
        c = ResultRows({})
        change_rows(c, ("p", "m", "short"), "ttft_p50_ms", hours, decompose(hours, y).adjusted, 0)
        rows = [r for r in c.rows.get("change_points", []) if r["detector"] == "online"]
        alarms += len(rows)
        shown += sum(abs(r["effect"]) >= 0.05 for r in rows)
        monitored += y.size - min(24 * 28, max(24 * 7, y.size // 3))  # change_rows' baseline
    per = ONLINE_ARL0_HOURS / monitored
    print(
        f"{args.series} changeless series, {args.per_hour} probe(s)/h: {alarms * per:.2f} "
        f"online alarms per {ONLINE_ARL0_HOURS} monitored h (target 1); "
        f"{shown * per:.2f} with |effect| >= 5 %"
    )


if __name__ == "__main__":
    main()

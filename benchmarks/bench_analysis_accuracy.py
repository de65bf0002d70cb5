"""Accuracy of the analysis on synthetic histories with planted phases.

Part 1: 20+ histories from the simulator's history generator (bundled training_cycle
scenario, 180 days on a pinned clock starting 2026-01-05 with a fixed seed per history, so
two runs print identical figures; 10-minute cadence to keep the run short), each with different
noise, heavy tails, seasonality strength, gaps, outliers and step sizes. Truth comes from
the planted phases (synthetic_phases) and releases. Scores per history and overall:

* onset F1: a detected onset (start of a degraded phase after a stable one) matches a planted
  onset (a non-stable stage after a stable one) within +-24 h (also shown for +-72 h);
* offline onset error: detected - planted onset (hours), median over matched onsets (72 h);
* online delay: first upward CUSUM alarm on deseasonalized short-context TTFT after the
  planted onset, minus the onset (hours), median;
* false phases per 180 stable days: detected degraded phases starting inside planted
  stable time (outside the first ramp of the stable stage and 24 h from any planted change);
* lead-time error: detected minus planted release lead time (days);
* false relapses: detected degraded phases that follow a recovering one and start inside a
  planted recovery or stable stage (24 h from its edges): a recovery read as a new
  degradation;
* onset interval coverage: share of matched onsets whose planted time lies inside the phase's
  95 % onset interval (phases.start_lo/start_hi, +-1 h for hourly resolution).

Part 2: the 30 % step target: abrupt +30 % in hourly median short-context TTFT (our own small
planted generator, tests/support/planted.py), 20 seeds: offline onset error and online delay.

Part 3: gradual onsets on our own generator (so the onset dating is not judged on one
generator only): one provider, a ramp of 0-10 days to +6..20 % short / +20..40 % long TTFT,
varied noise; onset error, +-24 h hits, and the onset interval's coverage.

Run: uv run python benchmarks/bench_analysis_accuracy.py [--histories N] [--misses]
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import statistics
import sys
import tempfile
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import numpy as np
import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import itertools

from pipeline.analysis.orchestrate import run_analysis
from pipeline.warehouse import Warehouse
from probes.simulator import bundled_scenario, configure
from probes.simulator.store import write_history
from tests.support.planted import START, PlantedPhase, PlantedProvider, generate

H = timedelta(hours=1)
PAIR = ("stable", "degraded")
CLOCK_START = date(2026, 1, 5)  # day 0 of the scenario: pinned, so runs are reproducible
DAYS = 180


def variants(n: int) -> list[dict[str, float]]:
    """A deterministic spread of generator options (cycled combinations)."""
    noise = [0.7, 1.0, 1.5, 1.0, 2.0]
    tails = [0.01, 0.03, 0.005, 0.05]
    season = [1.0, 0.3, 2.0, 0.0, 1.5]
    gaps = [1.0, 3.0, 0.0, 6.0]
    outliers = [0.002, 0.01, 0.0, 0.005, 0.02, 0.001, 0.003]
    steps = [1.0, 0.7, 1.5, 1.0, 0.5, 1.2]
    return [
        {
            "noise": noise[i % len(noise)],
            "heavy_tail": tails[i % len(tails)],
            "seasonality": season[i % len(season)],
            "gaps_per_month": gaps[i % len(gaps)],
            "outliers": outliers[i % len(outliers)],
            "step_scale": steps[i % len(steps)],
        }
        for i in range(n)
    ]


def truth(wh: Warehouse) -> tuple[dict[str, list[datetime]], dict[str, list[tuple]], datetime]:
    """Planted onsets and stable intervals per provider, and the data start."""
    ph = wh.query("SELECT * FROM synthetic_phases ORDER BY provider, start_at")
    start = wh.query("SELECT min(started_at) AS t FROM probe_results")["t"][0]
    onsets: dict[str, list[datetime]] = {}
    stable: dict[str, list[tuple]] = {}
    for (provider,), part in ph.group_by(["provider"], maintain_order=True):
        rows = part.rows(named=True)
        onsets[provider] = [
            r["start_at"]
            for prev, r in itertools.pairwise(rows)
            if prev["stage"] == "stable" and r["stage"] != "stable" and r["start_at"] > start
        ]
        stable[provider] = [
            (r["start_at"] + timedelta(days=r["ramp_days"] or 0) + 24 * H, r["end_at"] - 24 * H)
            for r in rows
            if r["stage"] == "stable"
        ]
    return onsets, stable, start


def calm_intervals(wh: Warehouse) -> dict[str, list[tuple]]:
    """Planted recovery and stable stages per provider, 24 h in from each edge."""
    ph = wh.query(
        "SELECT provider, start_at, end_at FROM synthetic_phases "
        "WHERE stage IN ('recovery', 'stable') ORDER BY provider, start_at"
    )
    out: dict[str, list[tuple]] = {}
    for provider, lo, hi in ph.rows():
        out.setdefault(provider, []).append((lo + 24 * H, hi - 24 * H))
    return out


def match(found: list[datetime], planted: list[datetime], margin: timedelta) -> list[tuple]:
    """Greedy one-to-one matching by closeness within ``margin``."""
    pairs = sorted(
        ((abs(f - p), f, p) for f in found for p in planted if abs(f - p) <= margin),
        key=lambda x: x[0],
    )
    used_f: set[datetime] = set()
    used_p: set[datetime] = set()
    out = []
    for _, f, p in pairs:
        if f not in used_f and p not in used_p:
            used_f.add(f)
            used_p.add(p)
            out.append((f, p))
    return out


def score_history(wh: Warehouse, aid: str) -> dict[str, float | list[float]]:
    onsets, stable, data_start = truth(wh)
    phases = wh.query(
        "SELECT provider, phase_no, label, start_at, start_lo, start_hi FROM phases "
        "WHERE analysis_id = ? ORDER BY provider, phase_no",
        [aid],
    )
    online = wh.query(
        "SELECT provider, detected_at FROM change_points WHERE analysis_id = ? AND "
        "detector = 'online' AND metric = 'ttft_p50_ms' AND context_class = 'short' AND effect > 0",
        [aid],
    )
    data_end = wh.query("SELECT max(started_at) AS t FROM probe_results")["t"][0]
    res: dict[str, float | list[float]] = {
        "tp24": 0, "tp72": 0, "n_found": 0, "n_true": 0, "false": 0,
        "stable_days": 0.0, "err": [], "delay": [], "lead_err": [], "misses": [],
        "covered": [], "width": [], "relapses": 0, "recoveries": 0,
    }  # fmt: skip
    calm = calm_intervals(wh)
    for provider, planted in onsets.items():
        rows = phases.filter(pl.col("provider") == provider).rows(named=True)
        found = [
            r["start_at"]
            for prev, r in itertools.pairwise(rows)
            if prev["label"] == "stable" and r["label"] == "degraded"
        ]
        degraded_starts = [r["start_at"] for r in rows if r["label"] != "stable"]
        res["recoveries"] += sum(r["label"] == "recovering" for r in rows)  # type: ignore[operator]
        res["relapses"] += sum(  # type: ignore[operator]
            prev["label"] == "recovering"
            and r["label"] == "degraded"
            and any(lo <= r["start_at"] <= hi for lo, hi in calm.get(provider, []))
            for prev, r in itertools.pairwise(rows)
        )
        res["n_found"] += len(found)  # type: ignore[operator]
        res["n_true"] += len(planted)  # type: ignore[operator]
        hits = match(found, planted, 24 * H)
        res["tp24"] += len(hits)  # type: ignore[operator]
        interval = {r["start_at"]: (r["start_lo"], r["start_hi"]) for r in rows}
        for p in set(planted) - {q for _, q in hits}:
            res["misses"].append(describe_miss(provider, p, found, interval))  # type: ignore[union-attr]
        for f, p in match(found, planted, 72 * H):
            res["tp72"] += 1  # type: ignore[operator]
            res["err"].append((f - p) / H)  # type: ignore[union-attr]
            lo, hi = interval[f]
            if lo is not None and hi is not None:
                res["covered"].append(float(lo - H <= p <= hi + H))  # type: ignore[union-attr]
                res["width"].append((hi - lo) / H)  # type: ignore[union-attr]
        alarms = online.filter(pl.col("provider") == provider)["detected_at"].to_list()
        for p in planted:
            after = [a for a in alarms if p <= a <= p + timedelta(days=30)]
            if after:
                res["delay"].append((min(after) - p) / H)  # type: ignore[union-attr]
        for lo, hi in stable[provider]:
            lo, hi = max(lo, data_start + 3 * 24 * H), min(hi, data_end)
            if hi <= lo:
                continue
            res["stable_days"] += (hi - lo) / (24 * H)  # type: ignore[operator]
            res["false"] += sum(lo <= s <= hi for s in degraded_starts)  # type: ignore[operator]
    res["lead_err"] = lead_errors(wh, aid, onsets)
    return res


def describe_miss(
    provider: str, planted: datetime, found: list[datetime], interval: dict[datetime, tuple]
) -> str:
    """Diagnostic line: the nearest detected onset and its 95 % interval, relative to the
    planted onset (a wide interval says the data cannot date this onset to a day)."""
    if not found:
        return f"{provider} {planted:%m-%d}: none found"
    near = min(found, key=lambda f: abs(f - planted))
    text = f"{provider} {planted:%m-%d}: nearest {(near - planted) / H:+.0f} h"
    lo, hi = interval.get(near, (None, None))
    if lo is not None and hi is not None:
        text += f" (interval {(lo - planted) / H:+.0f}..{(hi - planted) / H:+.0f} h)"
    return text


def lead_errors(wh: Warehouse, aid: str, onsets: dict[str, list[datetime]]) -> list[float]:
    rc = wh.query(
        "SELECT provider, release_date, lead_days FROM release_cycles "
        "WHERE analysis_id = ? AND lead_days IS NOT NULL",
        [aid],
    )
    out = []
    for provider, rdate, lead in rc.rows():
        rel = (
            datetime(rdate.year, rdate.month, rdate.day, tzinfo=onsets[provider][0].tzinfo)
            if onsets.get(provider)
            else None
        )
        planted = [
            o
            for o in onsets.get(provider, [])
            if rel and timedelta(0) <= rel - o <= timedelta(days=120)
        ]
        if rel and planted:
            out.append(lead - (rel - max(planted)) / (24 * H))
    return out


def f1(tp: float, found: float, true: float) -> float:
    p = tp / found if found else 1.0
    r = tp / true if true else 1.0
    return 2 * p * r / (p + r) if p + r else 0.0


def med(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def part1(n: int, show_misses: bool = False) -> None:
    sim = configure(bundled_scenario(), start=CLOCK_START)
    end = datetime(CLOCK_START.year, CLOCK_START.month, CLOCK_START.day, tzinfo=UTC)
    end += timedelta(days=DAYS)
    print(f"Part 1: {n} simulator histories (180 days, 10-min cadence, training_cycle)")
    head = "  # noise tail  seas gaps outl step | F1@24h F1@72h err_h delay_h false/180d"
    head += " lead_err_d  secs"
    print(head)
    total: dict[str, float | list[float]] = {}
    for i, v in enumerate(variants(n)):
        opts = dataclasses.replace(sim.history, cadence_minutes=10.0, **v)
        with tempfile.TemporaryDirectory() as d:
            wh = Warehouse(Path(d) / "bench.duckdb")
            wh.migrate()
            write_history(wh, sim, days=DAYS, end=end, seed=100 + i, options=opts)
            t0 = time.perf_counter()
            aid = run_analysis(wh, source="synthetic")
            secs = time.perf_counter() - t0
            r = score_history(wh, aid)
        for k, val in r.items():
            if isinstance(val, list):
                total.setdefault(k, []).extend(val)  # type: ignore[union-attr]
            else:
                total[k] = total.get(k, 0) + val  # type: ignore[operator]
        fa = r["false"] / r["stable_days"] * 180 if r["stable_days"] else float("nan")  # type: ignore[operator]
        print(
            f"{i:3d} {v['noise']:5.1f} {v['heavy_tail']:.3f} {v['seasonality']:4.1f} "
            f"{v['gaps_per_month']:4.0f} {v['outliers']:.3f} {v['step_scale']:4.1f} | "
            f"{f1(r['tp24'], r['n_found'], r['n_true']):6.2f} "  # type: ignore[arg-type]
            f"{f1(r['tp72'], r['n_found'], r['n_true']):6.2f} "  # type: ignore[arg-type]
            f"{med(r['err']):6.1f} {med(r['delay']):7.1f} {fa:10.2f} "  # type: ignore[arg-type]
            f"{med([abs(x) for x in r['lead_err']]):10.1f} {secs:5.1f}",  # type: ignore[union-attr]
            flush=True,
        )
        if show_misses and r["misses"]:
            print("      missed at +-24 h: " + "; ".join(r["misses"]))  # type: ignore[arg-type]
    fa = total["false"] / total["stable_days"] * 180  # type: ignore[operator]
    lead = total["lead_err"]
    within = sum(abs(x) <= 7 for x in lead) / len(lead) if lead else float("nan")  # type: ignore[union-attr, arg-type]
    print(
        f"ALL: onsets planted {total['n_true']}, found {total['n_found']}; "
        f"F1@24h {f1(total['tp24'], total['n_found'], total['n_true']):.2f} (target >= 0.9), "  # type: ignore[arg-type]
        f"F1@72h {f1(total['tp72'], total['n_found'], total['n_true']):.2f}; "  # type: ignore[arg-type]
        f"median onset error {med(total['err']):.1f} h; "  # type: ignore[arg-type]
        f"median online delay {med(total['delay']):.1f} h; "  # type: ignore[arg-type]
        f"false phases {fa:.2f} per 180 stable days (target <= 1); "
        f"lead-time error median |{med([abs(x) for x in lead]):.1f}| d, "  # type: ignore[union-attr]
        f"{within:.0%} within +-7 d; the onset's 95 % interval (+-1 h) holds the planted "
        f"onset for {statistics.fmean(total['covered']):.0%} of matched onsets, median width "  # type: ignore[arg-type]
        f"{med(total['width']):.0f} h; false relapses {total['relapses']} "
        f"(recovering phases {total['recoveries']})"
    )


def part2(seeds: int) -> None:
    print(f"\nPart 2: abrupt +30 % step in short-context TTFT, {seeds} seeds (5-min cadence)")
    errs, delays, found = [], [], 0
    for s in range(seeds):
        prov = PlantedProvider("p", "V", [PlantedPhase(30, 99, 1.3, 1.3)], gaps=1)
        with tempfile.TemporaryDirectory() as d:
            wh = Warehouse(Path(d) / "step.duckdb")
            wh.migrate()
            wh.insert_frame("probe_results", generate([prov], 40, seed=s))
            aid = run_analysis(wh)
            onset = START + timedelta(days=30)
            ph = wh.query(
                "SELECT start_at FROM phases WHERE analysis_id = ? AND label = 'degraded'", [aid]
            )["start_at"].to_list()
            al = wh.query(
                "SELECT detected_at FROM change_points WHERE analysis_id = ? AND detector = "
                "'online' AND context_class = 'short' AND metric = 'ttft_p50_ms' AND effect > 0 "
                "AND detected_at >= ?",
                [aid, onset],
            )["detected_at"].to_list()
        if ph:
            found += 1
            errs.append(min((p - onset for p in ph), key=abs) / H)
        if al:
            delays.append((min(al) - onset) / H)
    print(
        f"degraded phase found in {found}/{seeds}; median offline onset error "
        f"{med(errs):.1f} h (max |{max(map(abs, errs), default=float('nan')):.1f}| h); "
        f"online alarm in {len(delays)}/{seeds}, median delay {med(delays):.1f} h "
        f"(max {max(delays, default=float('nan')):.1f} h; target <= 24 h)"
    )


def part3(seeds: int) -> None:
    """Gradual onsets on our own generator (not the simulator): ramps of 0-10 days."""
    print(f"\nPart 3: planted ramps (tests/support/planted.py), {seeds} seeds (10-min cadence)")
    errs: list[float] = []
    covered: list[float] = []
    widths: list[float] = []
    early = 0
    for s in range(seeds):
        rng = np.random.default_rng(1000 + s)
        ramp = float(rng.choice([0, 3, 5, 7, 10]))
        day = float(rng.uniform(40, 60))
        short, long = float(rng.choice([1.06, 1.1, 1.2])), float(rng.choice([1.2, 1.4]))
        noise = float(rng.choice([0.15, 0.25, 0.4]))
        phase = PlantedPhase(day, 999, short, long, 1.3, 0.0, ramp)
        prov = PlantedProvider("p", "V", [phase], noise=noise, seasonality=0.3, gaps=2)
        with tempfile.TemporaryDirectory() as d:
            wh = Warehouse(Path(d) / "ramp.duckdb")
            wh.migrate()
            wh.insert_frame("probe_results", generate([prov], 90, cadence_min=10.0, seed=s))
            aid = run_analysis(wh)
            ph = wh.query(
                "SELECT label, start_at, start_lo, start_hi FROM phases WHERE analysis_id = ? "
                "ORDER BY phase_no",
                [aid],
            ).rows(named=True)
        onset = START + timedelta(days=day)
        found = [b for a, b in itertools.pairwise(ph) if (a["label"], b["label"]) == PAIR]
        early += sum(1 for r in ph if r["label"] != "stable" and r["start_at"] < onset - 24 * H)
        if found:
            best = min(found, key=lambda r: abs(r["start_at"] - onset))
            errs.append((best["start_at"] - onset) / H)
            if best["start_lo"] is not None and best["start_hi"] is not None:
                covered.append(float(best["start_lo"] - H <= onset <= best["start_hi"] + H))
                widths.append((best["start_hi"] - best["start_lo"]) / H)
    print(
        f"onset found in {len(errs)}/{seeds}; within +-24 h {sum(abs(e) <= 24 for e in errs)}, "
        f"within +-72 h {sum(abs(e) <= 72 for e in errs)}; median error {med(errs):.1f} h; "
        f"95 % interval holds the planted onset for {statistics.fmean(covered or [math.nan]):.0%}"
        f" (median width {med(widths):.0f} h); degraded phases starting > 24 h early: {early}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--histories", type=int, default=20)
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--ramps", type=int, default=24, help="planted-ramp seeds (part 3)")
    parser.add_argument("--misses", action="store_true", help="list onsets missed at +-24 h")
    args = parser.parse_args()
    t0 = time.perf_counter()
    part1(args.histories, args.misses)
    part2(args.seeds)
    part3(args.ramps)
    print(f"\ntotal {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()

"""A candidate detect() against a committed one, by the guards set before any judge looks.

A change to ``pipeline.analysis.changepoints`` is judged on a batch kept apart only if it
first passes every guard here, each against the same sets scored for the base:

* **development** (``development_set``), **documented blind** (27 series annotated from the
  historical record before any detector ran), **historical** (9, looked at) and **fresh**
  (constructed series from seeds development never used, 30 per kind): mean F1 + cover may
  fall by at most 0.005 on each;
* **the 500** (the series annotated by eye and looked at while developing, as
  ``bench_changepoints.py --by-length`` bands them): F1 + cover may fall by at most 0.01 in
  each length band;
* **false alarms** on changeless AR(1) noise (``--false-alarms``' cells, read once and as a
  monitor): the mean count per series may rise by at most 0.02 in each cell;
* **cost**: the candidate's CPU time on the development set at most 2x that of ruptures'
  binary segmentation (l2, 3 ln T, noise-scaled), as the issue asks.

The candidate is the working tree's package; the base is the package as committed at
``--base`` (default ``HEAD``), extracted with ``git archive`` into a temporary folder under
a module name of its own (its imports rewritten), so that both run in one process against
the same ``periodicity`` and data. ``--count BATCH ...`` then prints, for batches kept
apart, only how many series' outputs the candidate changes: no annotation is read and no
score computed, so counting spends nothing. ``--show`` lists the looked-at series whose
outputs changed, with both scores. The exit status is 1 when a guard fails.

Run: .venv/bin/python benchmarks/bench_changepoint_guards.py [--base REV] [--show]
[--count visual_unseen_26 visual_unseen_28 visual_unseen_29]   (about 2 to 4 minutes on two cores)
"""

from __future__ import annotations

import argparse
import importlib
import io
import re
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import ruptures as rpt

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import changepoint_devset
from benchmarks.bench_changepoints import (
    FRESH_SEED,
    LENGTH_BANDS,
    ruptures_detector,
    score,
    the_500,
)
from benchmarks.changepoint_devset import Series, noise
from benchmarks.changepoint_scores import covering, f_measure

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "pipeline/analysis/changepoints"
WORKTREE = "worktree"
FRESH_PER_KIND = 30
SET_LIMIT = 0.005  # largest fall in mean F1 + cover on a guard set
BAND_LIMIT = 0.01  # ... in one length band of the 500
ALARM_LIMIT = 0.02  # largest rise in false changes per series, per cell
CPU_LIMIT = 2.0
ALARM_SEEDS = 100
ALARM_CELLS = tuple((n, rho) for n in (40, 200, 1000) for rho in (0.0, 0.5, 0.8))


def fresh() -> list[Series]:
    return list(changepoint_devset.constructed(FRESH_PER_KIND, first_seed=FRESH_SEED))


GUARD_SETS: dict[str, Callable[[], list[Series]]] = {
    "development": changepoint_devset.development_set,
    "documented blind": changepoint_devset.documented_blind,
    "historical": changepoint_devset.historical,
    "fresh": fresh,
    "the 500": the_500,
}


def snapshot(rev: str, into: Path) -> str:
    """The change-point package as committed at ``rev``, importable from ``into`` under a
    module name of its own; that name."""
    sha = subprocess.run(
        ["git", "rev-parse", "--short=10", rev], cwd=ROOT, capture_output=True, text=True
    )
    if sha.returncode != 0:
        raise SystemExit(f"--base: git knows no revision {rev!r}")
    name = f"changepoints_at_{sha.stdout.strip()}"
    archive = subprocess.run(["git", "archive", rev, PACKAGE], cwd=ROOT, capture_output=True)
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(into, filter="data")
    (into / PACKAGE).rename(into / name)
    for source in (into / name).glob("*.py"):
        text = source.read_text()
        source.write_text(re.sub(r"\bpipeline\.analysis\.changepoints\b", name, text))
    return name


def load(module: str, folder: str) -> Callable[..., list[int]]:
    """``detect`` of the working tree (``WORKTREE``) or of a snapshot module in ``folder``."""
    if module == WORKTREE:
        from pipeline.analysis.changepoints import detect

        return detect
    if folder not in sys.path:
        sys.path.insert(0, folder)
    found: Callable[..., list[int]] = importlib.import_module(module).detect
    return found


@dataclass(frozen=True)
class Outputs:
    """What one detector reported on one set, series by series, and its CPU time."""

    found: list[list[int]]
    cpu: float


def run_set(module: str, folder: str, set_name: str) -> Outputs:
    """One detector over one guard set (a worker's task)."""
    detect = load(module, folder)
    found, cpu = [], 0.0
    for s in GUARD_SETS[set_name]():
        t0 = time.process_time()
        found.append(detect(s.values))
        cpu += time.process_time() - t0
    return Outputs(found, cpu)


def run_alarms(module: str, folder: str) -> dict[tuple[int, float, bool], float]:
    """Mean false changes per series on changeless AR(1) noise, per (n, rho, monitor)."""
    detect = load(module, folder)
    means = {}
    for n, rho in ALARM_CELLS:
        series = [
            noise(np.random.default_rng(7000 + s), n, 1.0, rho=rho) for s in range(ALARM_SEEDS)
        ]
        for monitor in (False, True):
            means[n, rho, monitor] = float(
                np.mean([len(detect(x, monitor=monitor)) for x in series])
            )
    return means


def run_batch(module: str, folder: str, batch: str) -> list[list[int]]:
    """One detector's outputs on a batch kept apart: values only, annotations unread."""
    detect = load(module, folder)
    return [detect(s.values) for s in getattr(changepoint_devset, batch)()]


def binseg_cpu() -> float:
    """ruptures' binary segmentation's CPU time on the development set (the cost yardstick)."""
    return score(ruptures_detector(rpt.Binseg), changepoint_devset.development_set())[2]


def scores(series: list[Series], found: list[list[int]]) -> np.ndarray:
    """F1 and cover of each series (rows)."""
    return np.array(
        [
            (f_measure(s.annotators(), f), covering(s.annotators(), f, s.values.size))
            for s, f in zip(series, found, strict=True)
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="HEAD", help="the committed revision to guard (HEAD)")
    parser.add_argument("--count", nargs="+", default=[], metavar="BATCH",
                        help="batches kept apart: count changed outputs only")  # fmt: skip
    parser.add_argument("--show", action="store_true", help="list looked-at series that changed")
    args = parser.parse_args()
    for batch in args.count:
        if not changepoint_devset.kept_apart(batch):
            parser.error(f"--count: no batch kept apart is called {batch!r}")
    with tempfile.TemporaryDirectory() as folder:
        base = snapshot(args.base, Path(folder))
        failures = guard(base, folder, args.count, args.show)
    print("guards: all pass" if not failures else "guards failed: " + "; ".join(failures))
    sys.exit(1 if failures else 0)


def guard(base: str, folder: str, batches: list[str], show: bool) -> list[str]:
    """Run both detectors on every guard set (two worker processes); print each guard's
    figures; the guards that failed."""
    who = {"base": base, "candidate": WORKTREE}
    with ProcessPoolExecutor(max_workers=2) as pool:
        sets = {(w, name): pool.submit(run_set, m, folder, name)
                for name in GUARD_SETS for w, m in who.items()}  # fmt: skip
        alarms = {w: pool.submit(run_alarms, m, folder) for w, m in who.items()}
        counted = {
            (w, b): pool.submit(run_batch, m, folder, b) for b in batches for w, m in who.items()
        }
        yardstick = pool.submit(binseg_cpu)
        failures = _print_sets({key: f.result() for key, f in sets.items()}, show)
        failures += _print_alarms({w: f.result() for w, f in alarms.items()})
        cpu = sets["candidate", "development"].result().cpu
        ratio = cpu / max(yardstick.result(), 1e-9)
    print(f"\nCPU on development: candidate {cpu:.2f} s, {ratio:.2f}x binary segmentation "
          f"(limit {CPU_LIMIT:g}x)")  # fmt: skip
    if ratio > CPU_LIMIT:
        failures.append(f"CPU {ratio:.2f}x")
    for b in batches:
        before, after = counted["base", b].result(), counted["candidate", b].result()
        changed = sum(x != y for x, y in zip(before, after, strict=True))
        print(f"{b}: the candidate changes {changed} of {len(before)} outputs (nothing scored)")
    return failures


def _print_sets(outputs: dict[tuple[str, str], Outputs], show: bool) -> list[str]:
    failures = []
    print(f"{'set':<28} {'series':>6} | {'base F1 / cover':>15} | {'candidate':>15} | "
          f"{'change':>7} {'limit':>6} | changed (better/worse)")  # fmt: skip
    for name, make in GUARD_SETS.items():
        series = make()
        before, after = outputs["base", name].found, outputs["candidate", name].found
        a, b = scores(series, before), scores(series, after)
        bands = LENGTH_BANDS if name == "the 500" else (("", 0, 10**9),)
        limit = BAND_LIMIT if name == "the 500" else SET_LIMIT
        for band, lo, hi in bands:
            mask = np.array([lo <= s.values.size < hi for s in series])
            change = float(b[mask].sum(axis=1).mean() - a[mask].sum(axis=1).mean())
            gain = b[mask].sum(axis=1) - a[mask].sum(axis=1)
            moved = sum(x != y for x, y, m in zip(before, after, mask, strict=True) if m)
            ok = change >= -limit
            label = f"{name}, {band}" if band else name
            print(f"{label:<28} {int(mask.sum()):6d} | {_pair(a[mask])} | {_pair(b[mask])} | "
                  f"{change:+7.4f} {limit:6.3f} | {moved} ({int((gain > 0).sum())}/"
                  f"{int((gain < 0).sum())}){'' if ok else '  FAIL'}")  # fmt: skip
            if not ok:
                failures.append(f"{label} {change:+.4f}")
        if show:
            _print_changed(series, before, after, a, b)
    return failures


def _pair(fc: np.ndarray) -> str:
    return f"{fc[:, 0].mean():.4f} / {fc[:, 1].mean():.4f}"


def _print_changed(
    series: list[Series],
    before: list[list[int]],
    after: list[list[int]],
    a: np.ndarray,
    b: np.ndarray,
) -> None:
    for s, x, y, sa, sb in zip(series, before, after, a, b, strict=True):
        if x != y:
            shown = f"{x} {_pair(sa[None])} -> {y} {_pair(sb[None])}"
            print(f"    {s.name} (n={s.values.size}): {shown}")


def _print_alarms(means: dict[str, dict[tuple[int, float, bool], float]]) -> list[str]:
    failures = []
    print(f"\nFalse changes per series on changeless AR(1) noise ({ALARM_SEEDS} seeds a cell; "
          f"limit +{ALARM_LIMIT})")  # fmt: skip
    for cell, before in means["base"].items():
        after = means["candidate"][cell]
        n, rho, monitor = cell
        ok = after - before <= ALARM_LIMIT + 1e-12
        print(f"  {n:5d} points, rho {rho:.1f}, {'monitor' if monitor else 'once':<7}: "
              f"{before:.2f} -> {after:.2f}{'' if ok else '  FAIL'}")  # fmt: skip
        if not ok:
            failures.append(f"false alarms {n}/{rho}/{'monitor' if monitor else 'once'}")
    return failures


if __name__ == "__main__":
    main()

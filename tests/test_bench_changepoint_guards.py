"""The guard benchmark's parts: a committed revision's change-point package loads beside the
working tree's as a module of its own, and what it cannot guard is refused in one line
(benchmarks/bench_changepoint_guards.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from benchmarks.bench_changepoint_guards import load, scores, snapshot
from benchmarks.changepoint_devset import Series

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "benchmarks" / "bench_changepoint_guards.py"
needs_git = pytest.mark.skipif(not (ROOT / ".git").exists(), reason="needs a git checkout")


@needs_git
def test_a_snapshot_is_the_committed_package_under_its_own_name(tmp_path: Path) -> None:
    name = snapshot("HEAD", tmp_path)
    sources = sorted((tmp_path / name).glob("*.py"))
    assert {p.name for p in sources} >= {"__init__.py", "confirm.py", "search.py"}
    assert not any("pipeline.analysis.changepoints" in p.read_text() for p in sources)
    detect = load(name, str(tmp_path))
    assert detect.__module__ == name
    step = np.r_[np.zeros(60), np.full(60, 8.0)] + np.random.default_rng(3).normal(0, 1, 120)
    assert detect(step) == [60]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--count", "visual_holdout"], "no batch kept apart is called 'visual_holdout'"),
        (["--base", "no-such-revision-here"], "git knows no revision 'no-such-revision-here'"),
    ],
)
@needs_git
def test_what_cannot_be_guarded_is_refused_in_one_line(args: list[str], message: str) -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH), *args], capture_output=True, text=True, timeout=120
    )
    assert done.returncode != 0
    assert done.stderr.strip().splitlines()[-1].endswith(message)
    assert done.stdout == ""


def test_scores_are_per_series_f1_and_cover() -> None:
    """A perfect answer scores 1 / 1; no answer on a marked series loses both."""
    marked = Series("s", "eye", np.zeros(100), [50], ([50], [50]))
    got = scores([marked, marked], [[50], []])
    assert got.shape == (2, 2)
    assert got[0].tolist() == [1.0, 1.0]
    assert got[1, 0] < 1.0
    assert got[1, 1] < 1.0

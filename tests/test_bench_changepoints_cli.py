"""The change-point benchmark's judgement option refuses what it cannot judge, in one line
(benchmarks/bench_changepoints.py --judge)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_changepoints.py"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--judge", "visual_holdout"], "no batch kept apart is called 'visual_holdout'"),
        (["--judge", "visual_unseen_99"], "no batch kept apart is called 'visual_unseen_99'"),
        (["--judge", "visual_unseen_19"], "give the candidate with --detect-from FILE"),
    ],
)
def test_a_judgement_needs_a_batch_kept_apart_and_a_candidate(
    args: list[str], message: str
) -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH), *args], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1].endswith(message)
    assert done.stdout == ""

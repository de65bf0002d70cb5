"""The change-point benchmark's options: a judgement refuses what it cannot judge, in one
line (--judge); the false-alarm count is of the detect it is given (--false-alarms
--detect-from); benchmarks/bench_changepoints.py."""

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
        (["--judge", "documented_blind_2"], "give the candidate with --detect-from FILE"),
        (["--judge", "documented_blind"], "no batch kept apart is called 'documented_blind'"),
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


def test_the_false_alarm_count_is_of_the_detect_it_is_given(tmp_path: Path) -> None:
    """--false-alarms --detect-from FILE counts that file's detect (here one that always
    reports one change, whoever reads: 1.00 per series, in every series)."""
    always = tmp_path / "always.py"
    always.write_text(
        "def detect(values, timestamps=None, *, level=None, monitor=False):\n    return [5]\n"
    )
    done = subprocess.run(
        [sys.executable, str(BENCH), "--false-alarms", "--detect-from", str(always)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    rows = [line for line in done.stdout.splitlines() if "|" in line][1:]
    assert len(rows) == 9
    assert all(row.split("|")[1].split() == ["1.00", "1.00"] for row in rows)
    assert all(row.split("|")[2].split() == ["1.00", "1.00"] for row in rows)

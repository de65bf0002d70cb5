"""The kit for batches annotated by eye (benchmarks/visual_batch.py): a batch packs into the
format the benchmark reads, marks outside a series are refused with the series named, and
the profile scores annotators against each other as the benchmark scores a detector."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.visual_batch import pack, profile

ROOT = Path(__file__).resolve().parent.parent


def _batch(folder: Path, marks: dict[str, list[list[int]]]) -> None:
    series = {"a00": [1.0, 1.0, None, 5.0, 5.0, 5.0], "a01": [2.0, 3.0, 2.0, 3.0, 2.0, 3.0]}
    (folder / "series.json").write_text(json.dumps(series))
    (folder / "sources.json").write_text(json.dumps({"a00": "pkg::one$x", "a01": "pkg::two$y"}))
    for i, letter in enumerate("PQR"):
        answer = {name: per_annotator[i] for name, per_annotator in marks.items()}
        (folder / f"ann_{letter}.json").write_text(json.dumps(answer))


def test_a_batch_packs_into_the_benchmark_format(tmp_path: Path) -> None:
    _batch(tmp_path, {"a00": [[3], [3], [4]], "a01": [[], [], []]})
    out = tmp_path / "visual_test.json"
    pack(tmp_path, ["P", "Q", "R"], out)
    batch = json.loads(out.read_text())
    assert batch["a00"] == {
        "source": "pkg::one$x",
        "annotations": [[3], [3], [4]],
        "values": [1.0, 1.0, None, 5.0, 5.0, 5.0],
    }
    assert batch["a01"]["annotations"] == [[], [], []]


def test_a_mark_outside_the_series_is_refused_naming_it(tmp_path: Path) -> None:
    _batch(tmp_path, {"a00": [[3], [6], [4]], "a01": [[], [], []]})
    run = subprocess.run(
        [sys.executable, "benchmarks/visual_batch.py", "pack", str(tmp_path), "P,Q,R",
         str(tmp_path / "out.json")],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert run.returncode != 0
    assert "a00" in run.stderr and "[6]" in run.stderr
    assert not (tmp_path / "out.json").exists()


def test_the_profile_scores_annotators_against_each_other(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Identical annotators agree perfectly; "no change points" misses the one mark."""
    _batch(tmp_path, {"a00": [[3], [3], [3]], "a01": [[], [], []]})
    pack(tmp_path, ["P", "Q", "R"], tmp_path / "b.json")
    capsys.readouterr()
    profile(tmp_path / "b.json")
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "2 series, 1 with a mark, 0.5 marks per annotator and series"
    assert lines[1] == "agreement, one annotator against the others: F1 1.000, cover 1.000"
    assert lines[2].startswith("no change points: F1 0.833")

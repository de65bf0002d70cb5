"""The kit for a batch of real series annotated by eye (the ``visual_*.json`` files in
``tests/data/changepoints``; protocol in the README there).

A batch lives in a scratch folder ``DIR`` holding ``series.json`` (``{id: [values]}``, ids
anonymous, ``null`` for a missing value) and ``sources.json`` (``{id: "package::item$column"}``,
kept away from the annotators). Then:

* ``plot DIR`` draws every series to ``DIR/plots/ID.png``, and ``plot DIR ID START END``
  a zoom to ``DIR/zoom/ID_START_END.png`` (annotators ask for these);
* ``instructions DIR`` writes ``DIR/INSTRUCTIONS.md`` for the annotators (the wording every
  batch so far was given), each of whom writes ``DIR/ann_X.json`` (``{id: [marks]}``);
* ``pack DIR X,Y,Z OUT`` joins the series, sources and the three annotations into a
  ``visual_*.json`` file;
* ``profile FILE`` prints what the data README records of a batch: how many series carry a
  mark, marks per annotator, agreement (each annotator scored against the other two, as
  the benchmark scores a detector) and the score of "no change points". No detector runs.

Choose series by metadata only (titles, documentation, column names, row counts), never by
looking at values, and leave out any table used in another batch or in the documented
sets. Plots use the x axis as the 0-based point index, gridlines, and dots up to 250
points.

Run: .venv/bin/python benchmarks/visual_batch.py plot|instructions|pack|profile ...
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

import matplotlib
import numpy as np

from benchmarks.changepoint_scores import covering, f_measure

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.ticker import MultipleLocator

DOTS_UP_TO = 250
INSTRUCTIONS = """# Annotating change points by eye

You are one of several independent annotators. {count} time series are plotted in
`{folder}/plots/ID.png` (x axis = point index, 0-based). For each series, mark every
point where you judge that the **behaviour of the series changes abruptly**:

- a change in **level** (the mean jumps or drops and stays there),
- a change in **trend** (the slope changes: growth starts, stops or reverses sharply),
- a change in **variance** (the series becomes markedly noisier or calmer),
- a change in the **pattern** (a seasonal/periodic pattern starts, stops or changes shape).

Do not mark: smooth, gradual evolution (a curve that bends gently), single isolated
outliers/spikes that return at once, or the regular swings of a cycle or season. If you see
no abrupt change, mark none: an empty list is a valid and common answer.

Position: give the index of the **first point of the new behaviour**. Precision matters
(answers are scored within a few points), so for any mark you are unsure of, zoom:
`.venv/bin/python benchmarks/visual_batch.py plot {folder} ID START END` writes
`{folder}/zoom/ID_START_END.png` showing points START..END; view that image.

Rules:
- Judge by eye from the plots only. Do not compute statistics, fit models, or run any
  change-point or segmentation code, and do not print or inspect the raw values.
- Do not open any other file in `{folder}` (in particular not other annotators' files and
  not `sources.json`), and do not try to find out what the series are.
- Annotate all {count} series (the ids are the file names in `{folder}/plots`). Work
  through them in order of the ids.

Write your answer as JSON to the file you were given, mapping each id to a sorted list of
integer indices, e.g. `{example}`; then reply with one line per series: id, marks, and a
few words on why.
"""


def _series(folder: Path) -> dict[str, list[float | None]]:
    series: dict[str, list[float | None]] = json.loads((folder / "series.json").read_text())
    return series


def draw(values: list[float | None], name: str, lo: int, hi: int, path: Path) -> None:
    """One plot of points ``lo`` to ``hi - 1``, with the index gridded for precise marks."""
    y = np.array([np.nan if v is None else v for v in values], dtype=np.float64)
    lo, hi = max(0, lo), min(y.size, hi)
    x = np.arange(lo, hi)
    span = hi - lo
    fig, ax = plt.subplots(figsize=(18, 5), dpi=100)
    ax.plot(x, y[lo:hi], "-", lw=1, color="tab:blue")
    if span <= DOTS_UP_TO:
        ax.plot(x, y[lo:hi], ".", ms=4, color="tab:blue")
    major = 5 if span <= 60 else 10 if span <= 200 else 50 if span <= 600 else 100
    ax.xaxis.set_major_locator(MultipleLocator(major))
    ax.xaxis.set_minor_locator(MultipleLocator(max(1, major // 5)))
    ax.grid(which="major", color="0.6", lw=0.8)
    ax.grid(which="minor", color="0.88", lw=0.5)
    ax.set_xlim(lo - 0.5, hi - 0.5)
    ax.set_title(f"{name}  (n = {y.size}; points {lo}..{hi - 1}; x = point index)")
    ax.tick_params(axis="x", labelsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)


def plot(folder: Path, name: str | None = None, lo: int = 0, hi: int = 0) -> None:
    series = _series(folder)
    if name is None:
        for key, values in sorted(series.items()):
            draw(values, key, 0, len(values), folder / "plots" / f"{key}.png")
        print(f"drew {len(series)} plots in {folder / 'plots'}")
        return
    path = folder / "zoom" / f"{name}_{lo}_{hi}.png"
    draw(series[name], name, lo, hi + 1, path)
    print(path)


def instructions(folder: Path) -> None:
    ids = sorted(_series(folder))
    example = json.dumps({ids[0]: [], ids[1]: [23], ids[2]: [40, 97]})
    text = INSTRUCTIONS.format(count=len(ids), folder=folder, example=example)
    (folder / "INSTRUCTIONS.md").write_text(text)
    print(folder / "INSTRUCTIONS.md")


def pack(folder: Path, letters: list[str], out: Path) -> None:
    """The batch as a ``visual_*.json`` file: one line per series, marks per annotator."""
    series = _series(folder)
    sources = json.loads((folder / "sources.json").read_text())
    marks = [json.loads((folder / f"ann_{letter}.json").read_text()) for letter in letters]
    lines = []
    for name, values in sorted(series.items()):
        per_annotator = [sorted({int(c) for c in answer[name]}) for answer in marks]
        bad = [c for m in per_annotator for c in m if not 0 < c < len(values)]
        if bad:
            sys.exit(f"{name}: marks {bad} outside 1..{len(values) - 1}")
        item = {"source": sources[name], "annotations": per_annotator, "values": values}
        lines.append(f"  {json.dumps(name)}: " + json.dumps(item, separators=(",", ":")))
    out.write_text("{\n" + ",\n".join(lines) + "\n}\n")
    print(f"{len(lines)} series -> {out}")


def profile(file: Path) -> None:
    batch = json.loads(file.read_text())
    agree_f1, agree_cover, none_f1, none_cover = [], [], [], []
    marked = marks = answers = 0
    for item in batch.values():
        annotations, n = item["annotations"], len(item["values"])
        marked += any(annotations)
        marks += sum(len(a) for a in annotations)
        answers += len(annotations)
        none_f1.append(f_measure(annotations, []))
        none_cover.append(covering(annotations, [], n))
        for i, own in enumerate(annotations):
            others = annotations[:i] + annotations[i + 1 :]
            agree_f1.append(f_measure(others, own))
            agree_cover.append(covering(others, own, n))
    count = len(batch)
    print(f"{count} series, {marked} with a mark, {marks / answers:.1f} marks "
          f"per annotator and series")  # fmt: skip
    print(f"agreement, one annotator against the others: F1 {statistics.mean(agree_f1):.3f}, "
          f"cover {statistics.mean(agree_cover):.3f}")  # fmt: skip
    print(f"no change points: F1 {statistics.mean(none_f1):.3f}, "
          f"cover {statistics.mean(none_cover):.3f}")  # fmt: skip


def main() -> None:
    args = sys.argv[1:]
    usage = (
        "usage: visual_batch.py plot DIR [ID START END] | instructions DIR"
        " | pack DIR X,Y,Z OUT | profile FILE"
    )
    if not args:
        sys.exit(usage)
    command, rest = args[0], args[1:]
    if command == "plot" and len(rest) in (1, 4):
        if len(rest) == 1:
            plot(Path(rest[0]))
        else:
            plot(Path(rest[0]), rest[1], int(rest[2]), int(rest[3]))
    elif command == "instructions" and len(rest) == 1:
        instructions(Path(rest[0]))
    elif command == "pack" and len(rest) == 3:
        pack(Path(rest[0]), rest[1].split(","), Path(rest[2]))
    elif command == "profile" and len(rest) == 1:
        profile(Path(rest[0]))
    else:
        sys.exit(usage)


if __name__ == "__main__":
    main()

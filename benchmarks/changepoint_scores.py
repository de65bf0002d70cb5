"""Change-point scores as defined by TCPDBench (van den Burg & Williams, 2020), written anew.

* **F1 with a margin**: the start index 0 counts as a change point in both the truth and the
  prediction. A true change point is matched by at most one predicted point within
  ``margin`` positions and each prediction matches at most one truth. Precision is
  matches / predictions (against the union of all annotators), recall is the mean over
  annotators of matches / their change points, F1 their harmonic mean.
* **Cover**: each annotator's segments ``A`` are weighted by their length and scored by the
  best Jaccard overlap with a predicted segment; ``sum |A| max J(A, A') / n``, averaged over
  annotators.

``paired_interval`` (ours): the mean of two detectors' per-series score differences and its
95 % t interval, so a lead on a few dozen series is shown with its uncertainty.
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Iterable, Sequence

from scipy import stats

MARGIN = 5  # TCPDBench's margin for F1 (positions)


def true_positives(truth: Iterable[int], predicted: Iterable[int], margin: int = MARGIN) -> int:
    """Truths matched by a distinct prediction within ``margin`` (nearest unused first)."""
    unused = set(predicted)
    hits = 0
    for tau in sorted(set(truth)):
        close = [p for p in unused if abs(p - tau) <= margin]
        if close:
            unused.remove(min(close, key=lambda p: (abs(p - tau), p)))
            hits += 1
    return hits


def f_measure(
    annotations: Sequence[Sequence[int]], predicted: Iterable[int], margin: int = MARGIN
) -> float:
    """F1 of ``predicted`` against one or more annotators (index 0 added to all)."""
    pred = {0, *predicted}
    users = [{0, *a} for a in annotations]
    union = set().union(*users)
    precision = true_positives(union, pred, margin) / len(pred)
    recall = sum(true_positives(u, pred, margin) / len(u) for u in users) / len(users)
    if precision + recall == 0:
        return 0.0
    return 2 * precision * recall / (precision + recall)


def _segments(breaks: Iterable[int], n: int) -> list[tuple[int, int]]:
    edges = sorted({0, n, *(b for b in breaks if 0 < b < n)})
    return list(itertools.pairwise(edges))


def _jaccard(a: tuple[int, int], b: tuple[int, int]) -> float:
    inter = max(0, min(a[1], b[1]) - max(a[0], b[0]))
    union = max(a[1], b[1]) - min(a[0], b[0])
    return inter / union if union else 0.0


def covering(annotations: Sequence[Sequence[int]], predicted: Iterable[int], n: int) -> float:
    """Segmentation cover of ``predicted`` for a series of ``n`` points, mean over annotators."""
    pred = _segments(predicted, n)
    scores = []
    for ann in annotations:
        truth = _segments(ann, n)
        total = sum((b - a) * max(_jaccard((a, b), p) for p in pred) for a, b in truth)
        scores.append(total / n)
    return sum(scores) / len(scores)


def paired_interval(ours: list[float], theirs: list[float]) -> tuple[float, float]:
    """Mean paired difference ``ours - theirs`` over series and the half-width of its 95 %
    t interval (series taken as independent draws; NaN half-width below two series)."""
    diffs = [a - b for a, b in zip(ours, theirs, strict=True)]
    if len(diffs) < 2:
        return statistics.mean(diffs), float("nan")
    sem = statistics.stdev(diffs) / len(diffs) ** 0.5
    return statistics.mean(diffs), float(stats.t.ppf(0.975, len(diffs) - 1)) * sem

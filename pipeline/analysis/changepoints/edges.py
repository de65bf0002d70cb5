"""A monitor's newest change, dated where the data put it rather than where the search may.

The search keeps ``min_size`` points on each side of a change, so a step in the last
``min_size`` points of a series can only be placed ``min_size`` points before its end: a
busy-error rate that jumps on the last of 60 days reads as a change five days earlier, and
its level after blends four quiet days with the new one. A reader of a whole history
(``reading.SERIES``) is not asked about a change that fresh; a monitor is asked about
nothing else. So, for a monitor (``Reading.date_at_edges``), a change found at that limit
is moved to the split of two levels with the least squared error among the positions the
limit ruled out (its own included, so a step that is exactly there stays). Symmetrically
at the start of the series. Which changes exist is not touched: only their dates.
"""

from __future__ import annotations

import numpy as np

from pipeline.analysis.changepoints.noise import FloatArray

__all__ = ["dated_at_edges"]


def dated_at_edges(x: FloatArray, breaks: list[int], min_size: int) -> list[int]:
    """``breaks`` (sorted positions in ``x``) with a first or last change that sits at the
    search's limit re-dated within the points the limit kept it from (see the module)."""
    if not breaks:
        return breaks
    out = list(breaks)
    n = x.size
    if n - out[-1] <= min_size:
        lo = out[-2] if len(out) > 1 else 0
        out[-1] = lo + _best_split(x[lo:], range(out[-1] - lo, n - lo))
    if out[0] <= min_size:
        hi = out[1] if len(out) > 1 else n
        out[0] = _best_split(x[:hi], range(1, out[0] + 1))
    return out


def _best_split(y: FloatArray, positions: range) -> int:
    """Among ``positions``, where two means fit ``y`` with the least squared error (the
    earliest on a tie)."""
    k = np.asarray(positions, dtype=np.int64)
    total = np.concatenate([[0.0], np.cumsum(y)])
    squares = np.concatenate([[0.0], np.cumsum(y * y)])
    left = squares[k] - total[k] ** 2 / k
    rest = y.size - k
    right = (squares[-1] - squares[k]) - (total[-1] - total[k]) ** 2 / rest
    return int(k[int(np.argmin(left + right))])

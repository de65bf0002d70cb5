"""Log-probability tracking (LT): did the first token's top-k logprobs of a fixed prompt move?

Each call returns the top-k alternatives of the first output token with their logprobs.
A token missing from one call's top k is imputed as that call's smallest logprob (it was
at most that likely). The statistic is the L1 distance between the two windows' per-token
mean logprobs; its p-value comes from permuting the window labels (exchangeable calls under
"nothing changed": it assumes the calls of both windows are independent draws from one
serving stack). A deterministic server returns identical rows, so any change in any
logprob gives the smallest p-value the permutations allow, and no change gives p = 1.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["LogprobTest", "imputed_matrix", "logprob_test"]

Row = Mapping[str, float]


@dataclass(frozen=True, slots=True)
class LogprobTest:
    statistic: float  # sum over tokens of |mean logprob (recent) - mean logprob (reference)|
    p_value: float
    n_reference: int
    n_recent: int
    tokens: int
    permutations: int


def imputed_matrix(rows: Sequence[Row]) -> tuple[list[str], np.ndarray]:
    """(tokens, calls x tokens matrix); missing entries set to the row's minimum."""
    tokens = sorted({token for row in rows for token in row})
    matrix = np.empty((len(rows), len(tokens)))
    for i, row in enumerate(rows):
        floor = min(row.values())
        matrix[i] = [row.get(token, floor) for token in tokens]
    return tokens, matrix


def _distance(matrix: np.ndarray, in_recent: np.ndarray) -> np.ndarray:
    """L1 distance of the group means, for each row of boolean labels ``in_recent``."""
    recent = in_recent.astype(float)
    mean_recent = recent @ matrix / recent.sum(axis=1, keepdims=True)
    mean_ref = (1 - recent) @ matrix / (1 - recent).sum(axis=1, keepdims=True)
    return np.abs(mean_recent - mean_ref).sum(axis=1)


def logprob_test(
    reference: Sequence[Row], recent: Sequence[Row], *, seed: int, permutations: int = 2000
) -> LogprobTest:
    """Two-sample permutation test; p = (1 + #{permuted >= observed}) / (1 + permutations),
    ties counted against a change (so identical windows give p = 1)."""
    rows = [row for row in [*reference, *recent] if row]
    n_ref = sum(1 for row in reference if row)
    if n_ref == 0 or n_ref == len(rows):
        raise ValueError("both windows need at least one call with logprobs")
    tokens, matrix = imputed_matrix(rows)
    labels = np.arange(len(rows)) >= n_ref
    observed = float(_distance(matrix, labels[None, :])[0])
    rng = np.random.default_rng(seed)
    shuffled = np.array([rng.permutation(labels) for _ in range(permutations)])
    permuted = _distance(matrix, shuffled)
    exceed = int(np.sum(permuted >= observed - 1e-12))
    p_value = (1 + exceed) / (1 + permutations)
    return LogprobTest(observed, p_value, n_ref, len(rows) - n_ref, len(tokens), permutations)

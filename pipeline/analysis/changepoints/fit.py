"""The least-squares fit that every test of a change is built from."""

from __future__ import annotations

import numpy as np

from pipeline.analysis.changepoints.noise import FloatArray


def least_squares(design: FloatArray, y: FloatArray) -> tuple[float, FloatArray]:
    """Residual sum of squares and residuals of ``y`` regressed on ``design``."""
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    resid = y - design @ coef
    return float(resid @ resid), resid

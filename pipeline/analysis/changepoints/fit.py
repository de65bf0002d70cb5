"""The least-squares fits that every test of a change is built from: ordinary, and
generalised for AR(1) noise."""

from __future__ import annotations

import numpy as np
from scipy import stats

from pipeline.analysis.changepoints.noise import FloatArray, prewhitened


def least_squares(design: FloatArray, y: FloatArray) -> tuple[float, FloatArray]:
    """Residual sum of squares and residuals of ``y`` regressed on ``design``."""
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    resid = y - design @ coef
    return float(resid @ resid), resid


def prewhitened_pvalue(y: FloatArray, null: FloatArray, alt: FloatArray, rho: float) -> float:
    """F test of ``alt``'s extra columns beyond ``null`` by generalised least squares for
    AR(1) noise (Prais-Winsten, ``rho`` estimated from the alternative's residuals, one
    degree of freedom charged for it); NaN where the window is too short to test."""
    extra = alt.shape[1] - null.shape[1]
    dof = y.size - alt.shape[1] - 1
    if dof < 2:
        return np.nan  # too few points to test: no verdict, which is not "no evidence"
    white_y = prewhitened(y, rho)
    rss0 = least_squares(prewhitened(null, rho), white_y)[0]
    rss1 = least_squares(prewhitened(alt, rho), white_y)[0]
    if rss1 >= rss0:
        return 1.0
    if rss1 <= 0:
        return 0.0
    f = ((rss0 - rss1) / extra) / (rss1 / dof)
    return float(stats.f.sf(f, extra, dof))

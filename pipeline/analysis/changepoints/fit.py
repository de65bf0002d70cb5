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


def prewhitened_pvalue(
    y: FloatArray, null: FloatArray, alt: FloatArray, rho: float, hac: bool = False
) -> float:
    """F test of ``alt``'s extra columns beyond ``null`` by generalised least squares for
    AR(1) noise (Prais-Winsten, ``rho`` estimated from the alternative's residuals, one
    degree of freedom charged for it), checked for the dependence the model left if
    ``hac`` (``left_dependence``); NaN where the window is too short to test."""
    dof = y.size - alt.shape[1] - 1
    if dof < 2:
        return np.nan  # too few points to test: no verdict, which is not "no evidence"
    white = prewhitened(y, rho), prewhitened(null, rho), prewhitened(alt, rho)
    return f_pvalue(*white, dof, hac)


def f_pvalue(
    y: FloatArray, null: FloatArray, alt: FloatArray, dof: int, hac: bool = False
) -> float:
    """Ordinary least-squares F test of ``alt``'s extra columns beyond ``null`` with ``dof``
    residual degrees of freedom, the statistic divided by ``left_dependence`` if ``hac``."""
    extra = alt.shape[1] - null.shape[1]
    rss0 = least_squares(null, y)[0]
    rss1, resid = least_squares(alt, y)
    if rss1 >= rss0:
        return 1.0
    if rss1 <= 0:
        return 0.0
    f = ((rss0 - rss1) / extra) / (rss1 / dof)
    if hac:
        f /= left_dependence(resid)
    return float(stats.f.sf(f, extra, dof))


def left_dependence(white_resid: FloatArray) -> float:
    """How much dependence the AR(1) model left in the prewhitened residuals: their
    long-run variance (Bartlett kernel, Newey-West bandwidth ``4 (m / 100)^(2/9)`` lags)
    over their variance, at least 1. The F statistic is divided by it: the prewhitened
    HAC estimator of Andrews and Monahan (1992), so that structure the model does not
    describe (a curve not quite smooth, noise with longer memory) is not read as a change."""
    from statsmodels.stats.sandwich_covariance import S_hac_simple  # slow import: on use

    m = white_resid.size
    lags = min(int(4.0 * (m / 100.0) ** (2.0 / 9.0)), m - 1)
    e = white_resid - white_resid.mean()
    variance = float(e @ e)
    if variance <= 0 or lags < 1:
        return 1.0
    long_run = float(S_hac_simple(e[:, None], nlags=lags)[0, 0])  # Bartlett weights
    return max(1.0, long_run / variance)

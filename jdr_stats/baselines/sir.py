"""Sliced inverse regression (Li 1991), matching R's ``dr`` (method "sir")."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import pandas as pd

from ..runtime._validation import check_choice, check_int
from ._base import SDRModel, SDRResults, standardize, wcov
from ._moments import slice_moments
from ._tables import (
    CoordinateTest,
    DimensionTests,
    chi2_sf,
    coordinate_bases,
    dim_row_labels,
)

__all__ = ["SIR", "SIRResults"]

_APPROX = {"bx": "Bentler-Xie", "wood": "Wood F"}


class SIR(SDRModel):
    """Sliced inverse regression.

    Parameters
    ----------
    endog : array_like, shape (n,)
        The response (continuous or with few values; a categorical response
        coded as numbers gets one slice per value).
    exog : array_like, shape (n, p)
        Predictors; a DataFrame's columns name them.
    missing : {"none", "drop", "raise"}
        Rows with NaN: ``"drop"`` removes them (with a warning), otherwise a
        ``ValueError``.
    weights : array_like, optional
        Positive case weights (for instance weights toward elliptical
        symmetry, the use ``dr`` documents), rescaled to mean one; see
        ``docs/theory/baselines.md`` for how they enter.

    Notes
    -----
    With ``z_i = L^{-1}(x_i - xbar)`` (``Sigma_hat = L L^T``, divisor n), the
    response sliced into ``H`` slices of weight fractions ``f_k`` and z-scale
    slice means ``m_k``, the kernel is ``M = sum_k f_k m_k m_k^T``.  Its
    leading eigenvectors ``v_j`` estimate the central subspace in the
    z-scale, ``beta_j = L^{-T} v_j`` (unit length) in the original one.
    Under the linearity condition ``E[z | P z]`` linear, ``E[z | y]`` lies in
    the central subspace (Li 1991).

    References
    ----------
    Li, K.-C. (1991). Sliced inverse regression for dimension reduction.
    JASA 86, 316-327.
    Weisberg, S. (2002). Dimension reduction regression in R. Journal of
    Statistical Software 7(1).

    Examples
    --------
    >>> import numpy as np
    >>> from jdr_stats.baselines import SIR
    >>> rng = np.random.default_rng(0)
    >>> x = rng.standard_normal((500, 4))
    >>> y = x[:, 0] + 0.1 * rng.standard_normal(500)
    >>> res = SIR(y, x).fit(n_slices=8)
    >>> res.slices.sizes.tolist()  # dr's rule: floor(500/8) = 62 per slice
    [62, 62, 62, 62, 62, 62, 62, 62, 4]
    >>> bool(abs(res.directions[0, 0]) > 0.99)
    True
    """

    _method = "sir"

    def fit(
        self,
        n_slices: int | None = None,
        *,
        rank: int | None = None,
        slice_method: Literal["dr", "arc"] = "dr",
        chi2approx: Literal["bx", "wood"] = "bx",
    ) -> SIRResults:
        """Estimate the directions.

        Parameters
        ----------
        n_slices : int, optional
            Requested number of slices; default ``max(8, p + 3)`` (as ``dr``).
            Slices are formed by :func:`~jdr_stats.baselines.dr_slices`, so
            the number realised can differ.
        slice_method : {"dr", "arc"}
            ``"dr"``: :func:`~jdr_stats.baselines.dr_slices` (``dr``'s
            default); ``"arc"``: :func:`~jdr_stats.baselines.arc_slices`
            (``dr.slices.arc``).
        chi2approx : {"bx", "wood"}
            Approximation of the weighted chi-square p-values of the tests
            (Bentler-Xie, or Wood's three-moment F), as ``dr``'s argument.
        rank : int, optional
            Directions shown by ``summary``, used by ``transform`` and
            tested by ``rank_tests`` by default (R ``dr``'s ``numdir``):
            default 4, capped at p.

        Returns
        -------
        SIRResults
        """
        nd, approx = self._options(rank, chi2approx)
        h, slices = self._slice(n_slices, slice_method)
        w = self._weights()
        mom, sm = slice_moments(self.exog, w, slices, second=False)
        std = standardize(self.exog, w, self.exog_names, mom, slices.order)
        mz = std.vec_to_z(sm.means.T)  # p x H z-scale slice means
        kernel = (mz * sm.f) @ mz.T
        return SIRResults(
            self, std, kernel, rank=nd,
            settings={"method": "sir", "n_slices": h, "slice_method": slice_method,
                      "chi2approx": approx},
            slices=slices, extras={"f": sm.f, "slice_means": mz},
        )


class SIRResults(SDRResults):
    """Results of :meth:`SIR.fit` (read-only)."""

    _title = "Sliced Inverse Regression Results"

    def _method_line(self) -> str:
        return f"sir with {self._slice_info.n_slices} slices, n = {self.nobs}."

    def dimension_tests(self, rank: int | None = None) -> DimensionTests:
        """Li's (1991) marginal dimension tests, as ``dr.test``.

        Parameters
        ----------
        rank : int, optional
            Number of rows (hypotheses ``0..rank-1``); default :attr:`rank`.

        Returns
        -------
        DimensionTests
            ``table`` with index ``"kD vs >= (k+1)D"`` and columns
            ``statistic, df, pvalue`` (``dr.test``'s ``Stat, df, p.value``).

        Notes
        -----
        ``Lambda_k = n sum_{j > k} lambda_j`` (all p eigenvalues, including
        those that are zero because rank(M) <= H - 1), referred to
        chi-square with ``(p - k)(H - k - 1)`` df; valid when x is normal
        (Li 1991, Theorem 5.3).  Where ``df <= 0`` there is no test and the
        p-value is NaN (``dr`` prints 0 or 1 there, depending on the sign of
        rounding error in a zero statistic).
        """
        return self._dimension_table(rank)

    def _dimension_tests(self, k: int) -> DimensionTests:
        p = self._evals.shape[0]
        n = self.nobs
        h = self._slice_info.n_slices
        m = np.arange(k)
        tail = np.cumsum(self._evals[::-1])[::-1]  # sum_{j >= m} lambda_j
        stat = n * tail[m]
        df = (p - m) * (h - m - 1)
        table = pd.DataFrame(
            {"statistic": stat, "df": df.astype(float), "pvalue": chi2_sf(stat, df)},
            index=pd.Index(dim_row_labels(k), name="Hypothesis"),
        )
        return DimensionTests(
            table, "SIR marginal dimension tests", "chi2",
            [
                "H0: the central subspace has dimension k (row kD) vs more; "
                "Stat = n * sum of the p - k smallest eigenvalues, chi-square "
                "with (p - k)(H - k - 1) df (x normal).",
            ],
            method_label="Li (1991) chi-square",
        )

    def coordinate_test(
        self,
        drop: Any,
        *,
        pval: Literal["general", "restricted"] = "general",
        d: int | None = None,
        dr_weights: bool = False,
    ) -> CoordinateTest:
        """Test that the dropped predictors do not enter the central subspace.

        Parameters
        ----------
        drop : list of str or int
            Predictors (names or column indices) of the hypothesis
            ``span(beta)`` contained in the span of the others.
        pval : {"general", "restricted"}
            Reference distribution (Cook 2004): the general test (default)
            or the restricted one, which assumes the linearity and constant
            covariance conditions.  **``dr`` 3.0.11 swaps the two**: its
            default ``pval="general"`` reports the restricted p-value.  Both
            are in the table.
        d : int, optional
            Dimension assumed for the central subspace; default
            ``min(H, p)`` (``dr``'s ``d = NULL``): no assumption on the
            dimension.
        dr_weights : bool
            Use ``dr`` 3.0.11's chi-square weights unchanged.  When
            ``d >= min(p, H - 1)`` the statistic equals ``n tr(H^T M H)``,
            whose limit has ``(H - 1) r`` chi-square terms, but ``dr`` keeps
            only ``min(d, H - 1) r`` (restricted) and ``min(d, H) r``
            (general) of them: with ``p < H - 1`` (e.g. the default
            ``H = max(8, p + 3)``) its p-values are too small (study:
            ``studies/study_baselines_size.py``).  The default uses all
            terms; the two agree when ``p >= H - 1``.

        Returns
        -------
        CoordinateTest
            One row with ``statistic``, ``df`` (NaN: a weighted chi-square),
            ``pvalue`` (the one chosen by ``pval``; ``dr``'s ``P.value``),
            ``pvalue_general`` and ``pvalue_restricted``.

        Notes
        -----
        With ``QH`` an orthonormal basis of the hypothesis in z-scale
        (``span(L^T gamma)``), ``H`` of its complement (r = number dropped):
        ``T = n sum_{j<=d} lambda_j(M) - n sum_{j<=min(d,p-r)} lambda_j(QH^T M QH)``.
        It is asymptotically ``sum c_j chi2_1``; the weights are
        ``1 - lambda_j`` (``j <= H - 1`` when ``d >= min(p, H - 1)``, with
        ``lambda_j = 0`` for ``j > p``; else ``j <= d``; each r times) for the
        restricted test and the positive eigenvalues of the covariance of
        ``vec(Phi^T eps_i z_i^T H)`` for the general test, where
        ``eps_ik = (1{i in k} - f_k - f_k z_i^T m_k) / sqrt(f_k)`` and ``Phi``
        holds the first ``min(d, H)`` right singular vectors of the p x H
        matrix of slice means ``(m_1, ..., m_H)`` (as ``dr``; all H of them
        when ``d >= min(p, H - 1)``).  P-values by Bentler and Xie's approximation (or Wood's, see
        ``fit(chi2approx=)``).
        """
        check_choice(pval, "pval", ("general", "restricted"))
        std = self._std
        p = self._evals.shape[0]
        n = self.nobs
        hs = self._slice_info.n_slices
        if d is None:
            d = min(hs, p)
        else:
            d = check_int(d, "d", low=1, high=p)
        qh, hm, dropped = coordinate_bases(std, self._model.exog_names, drop)
        r = hm.shape[1]
        sub = qh.T @ self._kernel @ qh
        sub_vals = np.sort(np.linalg.eigvalsh((sub + sub.T) / 2))[::-1]
        stat = n * float(np.sum(self._evals[:d])) - n * float(
            np.sum(sub_vals[: min(d, p - r)])
        )
        # Number of chi-square terms.  If d >= min(p, H - 1) the statistic is
        # n tr(H^T M H) = n sum_k f_k |H^T m_k|^2: H - 1 terms per dropped
        # predictor (eigenvalues beyond p are zero); dr truncates at d.
        marginal = d >= min(p, hs - 1) and not dr_weights
        n_restricted = hs - 1 if marginal else min(d, hs - 1)
        n_phi = hs if marginal else min(d, hs)
        lam = np.r_[self._evals, np.zeros(max(0, hs - 1 - p))]
        # restricted weights
        coef_r = np.repeat(1.0 - lam[:n_restricted], r)
        p_restricted = self._wchi2(coef_r, stat)
        # general weights
        f = self._extras["f"]
        mz = self._extras["slice_means"]  # p x H
        z = std.z
        ind = np.repeat(np.arange(hs), self._slice_info.sizes)  # rows sorted by y
        eps = -(f + (z @ mz) * f)
        eps[np.arange(n), ind] += 1.0
        eps /= np.sqrt(f)
        _, _, vt = np.linalg.svd(mz, full_matrices=False)
        if n_phi >= hs:
            phi = np.eye(hs)  # all H directions: no rotation needed
        else:
            phi = vt.T[:, :n_phi]
        g = (eps @ phi)[:, :, None] * (z @ hm)[:, None, :]
        cov = wcov(g.reshape(n, -1), std.weights, ddof=0)
        ev = np.linalg.eigvalsh(cov)
        coef_g = ev[ev > 0]
        p_general = self._wchi2(coef_g, stat)
        chosen = p_general if pval == "general" else p_restricted
        table = pd.DataFrame(
            {
                "statistic": [stat],
                "df": [np.nan],
                "pvalue": [chosen],
                "pvalue_general": [p_general],
                "pvalue_restricted": [p_restricted],
            },
            index=pd.Index(["Test"], name="Coordinate test"),
        )
        return CoordinateTest(
            table, "SIR coordinate test", pval,
            [
                f"H0: {dropped} do not enter the central subspace (given the "
                "other predictors); d = "
                f"{d}.",
                "dr 3.0.11 reports these two p-values swapped (its default "
                "pval='general' returns the restricted one)"
                + ("." if not dr_weights else "; dr's truncated weights (dr_weights=True)."),
            ],
            method_label=f"Cook (2004), {pval} weights, {_APPROX[self.chi2approx]}",
            pvalue_columns=("pvalue_general", "pvalue_restricted"),
        )

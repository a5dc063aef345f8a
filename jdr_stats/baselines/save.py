"""Sliced average variance estimation (Cook and Weisberg 1991), as R's ``dr``."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import pandas as pd

from ._base import SDRModel, SDRResults, standardize
from ._moments import slice_moments
from ._tables import (
    CoordinateTest,
    DimensionTests,
    chi2_sf,
    coordinate_bases,
    cov_of_products,
    dim_row_labels,
)

__all__ = ["SAVE", "SAVEResults"]


class SAVE(SDRModel):
    """Sliced average variance estimation.

    Parameters
    ----------
    endog : array_like, shape (n,)
    exog : array_like, shape (n, p)
    missing : {"none", "drop", "raise"}
    weights : array_like, optional
        Positive case weights (for instance weights toward elliptical
        symmetry, the use ``dr`` documents), rescaled to mean one; see
        ``docs/theory/baselines.md`` for how they enter.

    Notes
    -----
    With z-scale slice covariances ``V_k`` (divisor: the slice weight, as
    ``dr``'s ``wvar``) and slice fractions ``f_k``, the kernel is
    ``M = sum_k f_k (I - V_k)^2``.  Under the linearity and constant
    covariance conditions its column space lies in the central subspace
    (Cook and Weisberg 1991); unlike SIR it also sees directions in which
    only the variance of x given y changes (even links).

    References
    ----------
    Cook, R. D. and Weisberg, S. (1991). Discussion of Li (1991). JASA 86,
    328-332.
    Shao, Y., Cook, R. D. and Weisberg, S. (2007). Marginal tests with sliced
    average variance estimation. Biometrika 94, 285-296.

    Examples
    --------
    >>> import numpy as np
    >>> from jdr_stats.baselines import SAVE
    >>> rng = np.random.default_rng(0)
    >>> x = rng.standard_normal((2000, 4))
    >>> y = x[:, 1] ** 2 + 0.1 * rng.standard_normal(2000)
    >>> res = SAVE(y, x).fit(n_slices=10)
    >>> bool(abs(res.directions[1, 0]) > 0.95)
    True
    """

    _method = "save"

    def fit(
        self,
        n_slices: int | None = None,
        *,
        rank: int | None = None,
        slice_method: Literal["dr", "arc"] = "dr",
        chi2approx: Literal["bx", "wood"] = "bx",
    ) -> SAVEResults:
        """Estimate the directions.

        Parameters
        ----------
        n_slices : int, optional
            Requested number of slices; default ``max(8, p + 3)`` (as ``dr``).
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
        SAVEResults
        """
        p = self.exog.shape[1]
        nd, approx = self._options(rank, chi2approx)
        h, slices = self._slice(n_slices, slice_method)
        w = self._weights()
        mom, sm = slice_moments(self.exog, w, slices, second=True)
        std = standardize(self.exog, w, self.exog_names, mom, slices.order)
        assert sm.covs is not None  # second=True keeps each slice's covariance
        a_mats = np.eye(p) - std.to_z(sm.covs)  # I - V_k, all slices at once
        kernel = np.sum(sm.f[:, None, None] * (a_mats @ a_mats), axis=0)
        return SAVEResults(
            self, std, kernel, rank=nd,
            settings={"method": "save", "n_slices": h, "slice_method": slice_method,
                      "chi2approx": approx},
            slices=slices, extras={"f": sm.f, "I_minus_V": a_mats},
        )


class SAVEResults(SDRResults):
    """Results of :meth:`SAVE.fit` (read-only)."""

    _title = "Sliced Average Variance Estimation Results"

    def _method_line(self) -> str:
        return f"save with {self._slice_info.n_slices} slices, n = {self.nobs}."

    def _general_traces(self, basis: np.ndarray) -> tuple[float, float]:
        """``tr(S)`` and ``tr(S^2)`` for ``S = Cov(vec(u u^T)) / 2``, ``u = B^T z``.

        ``vec(u u^T)`` repeats each off-diagonal product twice, so the
        covariance of the ``q(q+1)/2`` distinct products (divisor n - 1),
        ``C``, with multiplicities ``k_P`` (1 on the diagonal, 2 off it)
        gives ``tr(S) = sum_P k_P C_PP / 2`` and
        ``tr(S^2) = sum_PQ k_P k_Q C_PQ^2 / 4`` at a quarter of the cost.
        """
        u = self._std.z @ basis
        q = u.shape[1]
        ia, ib = np.triu_indices(q)
        mult = np.where(ia == ib, 1.0, 2.0)
        c = cov_of_products(u, u, self._std.weights, ddof=1, pairs=(ia, ib))
        tr1 = float(mult @ np.diag(c)) / 2
        tr2 = float(mult @ (c**2) @ mult) / 4
        return tr1, tr2

    def dimension_tests(self, rank: int | None = None) -> DimensionTests:
        """Shao, Cook and Weisberg's (2007) marginal dimension tests (``dr.test``).

        Returns
        -------
        DimensionTests
            Columns ``statistic, df, pvalue`` (normal theory; ``dr.test``'s
            ``Stat, df(Nor), p.value(Nor)``), ``pvalue_general``
            (``p.value(Gen)``), ``statistic_general`` and ``df_general``
            (computed but not printed by ``dr``).

        Notes
        -----
        ``Theta_k`` = z-scale eigenvectors of the ``p - k`` smallest
        eigenvalues;
        ``T_k = (n/2) sum_h f_h ||Theta_k^T (I - V_h) Theta_k||_F^2``.
        Normal predictors: ``T_k ~ chi2((H-1)(p-k)(p-k+1)/2)``.  General
        predictors: with ``S = Cov(vec(u u^T)) / 2``, ``u = Theta_k^T z``,
        ``T_k`` is approximated by
        ``T_k tr(S) / tr(S^2) ~ chi2((H-1) tr(S)^2 / tr(S^2))``.
        """
        return self._dimension_table(rank)

    def _dimension_tests(self, k: int) -> DimensionTests:
        p = self._evals.shape[0]
        n = self.nobs
        hs = self._slice_info.n_slices
        f = self._extras["f"]
        amats = self._extras["I_minus_V"]
        rows = []
        for m in range(k):
            theta = self._raw[:, m:]
            q = p - m
            proj = np.einsum("ia,kij,jb->kab", theta, amats, theta)
            t = n / 2 * float(np.sum(f * np.sum(proj**2, axis=(1, 2))))
            df_n = (hs - 1) * q * (q + 1) / 2
            tr1, tr2 = self._general_traces(theta)
            df_g = tr1**2 / tr2 * (hs - 1)
            t_g = t * tr1 / tr2
            rows.append((t, df_n, chi2_sf(t, df_n)[()], chi2_sf(t_g, df_g)[()], t_g, df_g))
        table = pd.DataFrame(
            rows,
            columns=["statistic", "df", "pvalue", "pvalue_general", "statistic_general",
                     "df_general"],
            index=pd.Index(dim_row_labels(k), name="Hypothesis"),
        )
        return DimensionTests(
            table, "SAVE marginal dimension tests", "normal",
            [
                "H0: the central subspace has dimension k (row kD) vs more. "
                "Normal: chi-square with (H-1)(p-k)(p-k+1)/2 df (x normal); "
                "General: scaled chi-square with moment-matched df.",
            ],
            method_label="Shao, Cook and Weisberg (2007), normal and general",
            pvalue_columns=("pvalue_general",),
        )

    def coordinate_test(self, drop: Any) -> CoordinateTest:
        """Test that the dropped predictors do not enter the central subspace.

        Parameters
        ----------
        drop : list of str or int
            Predictors (names or column indices) to test.

        Returns
        -------
        CoordinateTest
            One row with ``statistic``, ``df`` (NaN: a weighted chi-square),
            ``pvalue`` (the general test; ``dr.coordinate.test``'s
            ``p.val(Gen)``), ``df_normal`` and ``pvalue_normal`` (its
            ``df(Nor)`` and ``p.val(Nor)``).

        Notes
        -----
        With ``H`` an orthonormal z-scale basis of the complement of the
        hypothesis (r columns), ``T = (n/2) sum_k f_k ||H^T (I - V_k) H||_F^2``
        (Shao, Cook and Weisberg 2007).  Normal predictors:
        ``chi2((H_s - 1) r (r + 1) / 2)``; general: ``sum c_j chi2_1`` with
        the eigenvalues of ``Cov(vec(H^T z z^T H)) / 2`` (divisor n), each
        repeated ``H_s - 1`` times, by Bentler and Xie's (or Wood's) approximation.
        """
        std = self._std
        n = self.nobs
        hs = self._slice_info.n_slices
        f = self._extras["f"]
        amats = self._extras["I_minus_V"]
        _, hm, dropped = coordinate_bases(std, self._model.exog_names, drop)
        r = hm.shape[1]
        proj = np.einsum("ia,kij,jb->kab", hm, amats, hm)
        t = n / 2 * float(np.sum(f * np.sum(proj**2, axis=(1, 2))))
        df_n = (hs - 1) * r * (r + 1) / 2
        p_n = chi2_sf(t, df_n)[()]
        u = std.z @ hm
        cov = cov_of_products(u, u, std.weights, ddof=0) / 2
        coef = np.repeat(np.linalg.eigvalsh(cov), hs - 1)
        p_g = self._wchi2(coef, t)
        table = pd.DataFrame(
            {"statistic": [t], "df": [np.nan], "pvalue": [p_g], "df_normal": [df_n],
             "pvalue_normal": [p_n]},
            index=pd.Index(["Test"], name="Coordinate test"),
        )
        return CoordinateTest(
            table, "SAVE coordinate test", "general",
            [f"H0: {dropped} do not enter the central subspace (given the other predictors).",
             "pvalue: general test (weighted chi-square); pvalue_normal: chi-square with "
             "df_normal df (x normal)."],
            method_label="Shao, Cook and Weisberg (2007), normal and general ("
            + ("Wood F" if self.chi2approx == "wood" else "Bentler-Xie") + ")",
            pvalue_columns=("pvalue_normal",),
        )

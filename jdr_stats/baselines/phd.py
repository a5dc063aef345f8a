"""Principal Hessian directions (Li 1992), as R's ``dr`` (phdy, phdres)."""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd

from ..runtime._validation import check_bool
from ._base import SDRModel, SDRResults, standardize
from ._moments import design_moments, residual_gram
from ._tables import DimensionTests, chi2_sf, cov_of_products, dim_row_labels

__all__ = ["PHD", "PHDResults"]


class PHD(SDRModel):
    """Principal Hessian directions.

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
    ``M = (1/n) sum_i w_i r_i z_i z_i^T`` with ``r = y - ybar`` (``dr``'s
    "phdy") or the OLS residuals of y on x ("phdres").  For normal x,
    ``E[(y - Ey) z z^T]`` is the average Hessian of ``E[y | z]`` (Stein's
    lemma), whose range lies in the central subspace (Li 1992).  The kernel
    is symmetric but indefinite; eigenvalues are ordered by absolute value.
    pHd cannot see a direction whose Hessian averages to zero, e.g. a
    regression odd in that direction (the first block of the paper's
    bilinear link; see ``docs/theory/baselines.md``).

    References
    ----------
    Li, K.-C. (1992). On principal Hessian directions for data visualization
    and dimension reduction. JASA 87, 1025-1039.
    Cook, R. D. (1998). Principal Hessian directions revisited. JASA 93,
    84-94.

    Examples
    --------
    >>> import numpy as np
    >>> from jdr_stats.baselines import PHD
    >>> rng = np.random.default_rng(0)
    >>> x = rng.standard_normal((2000, 4))
    >>> y = x[:, 2] ** 2 + 0.1 * rng.standard_normal(2000)
    >>> res = PHD(y, x).fit()
    >>> bool(abs(res.directions[2, 0]) > 0.95)
    True
    """

    _categorical_ok = False
    _method = "phd"

    def fit(
        self,
        residuals: bool = False,
        *,
        rank: int | None = None,
        chi2approx: Literal["bx", "wood"] = "bx",
    ) -> PHDResults:
        """Estimate the directions.

        Parameters
        ----------
        residuals : bool
            ``False``: ``r = y - ybar`` (``dr`` method "phdy");
            ``True``: OLS residuals of y on x (method "phdres", which also
            gives Cook's general and independence tests).
        rank : int, optional
            Directions shown by ``summary``, used by ``transform`` and
            tested by ``rank_tests`` by default (R ``dr``'s ``numdir``):
            default 4, capped at p.
        chi2approx : {"bx", "wood"}
            Approximation of the weighted chi-square p-values (general and
            independence tests): Bentler-Xie or Wood's three-moment F.

        Returns
        -------
        PHDResults
        """
        residuals = check_bool(residuals, "residuals")
        nd, approx = self._options(rank, chi2approx)
        w = self._weights()
        x = self.exog
        n = x.shape[0]
        # a response of extreme units near unit size (exact); the kernel and
        # its eigenvalues are folded back into y's units, the tests use it
        y, c = self.data.rows("pHd", unit=True)[0], self.data.response_unit
        r = y - (y.mean() if w is None else (w @ y) / n)
        wr = r if w is None else w * r
        if residuals:
            mom, _, xty = design_moments(x, w, r=wr)
            assert xty is not None  # r= was given
            std = standardize(x, w, self.exog_names, mom)
            beta = std.to_x(std.vec_to_z(xty / n))
            mx, r = residual_gram(x, mom.mean, r, beta, w)
        else:
            mom, gram, _ = design_moments(x, w, q=wr)
            assert gram is not None  # q= was given
            mx = gram
            std = standardize(x, w, self.exog_names, mom)
        mx = mx / n
        kernel = std.to_z(mx) / c
        method = "phdres" if residuals else "phdy"
        return PHDResults(
            self, std, kernel, rank=nd,
            settings={"method": method, "residuals": bool(residuals),
                      "chi2approx": approx},
            extras={"r": r, "y_scale": c},
        )


class PHDResults(SDRResults):
    """Results of :meth:`PHD.fit` (read-only)."""

    _title = "Principal Hessian Directions Results"

    @property
    def residuals(self) -> bool:
        return self._settings["residuals"]

    def _var_r(self) -> float:
        r = self._extras["r"]
        w = self._std.weights
        n = r.shape[0]
        if w is None:
            return float(np.var(r, ddof=1))
        rb = (w @ r) / n
        return float(w @ (r - rb) ** 2) / (n - 1)

    def dimension_tests(self, rank: int | None = None) -> DimensionTests:
        """Li's (1992) tests, and for residuals Cook's (1998) general and
        independence tests (``dr.test``).

        Returns
        -------
        DimensionTests
            Columns ``statistic, df, pvalue`` ("phdy"; ``dr.test``'s ``Stat,
            df, p.value``), or ``statistic, df, pvalue, pvalue_indep,
            pvalue_general`` ("phdres"; ``dr.test``'s ``Stat, df, Normal
            theory, Indep. test, General theory``; ``pvalue`` is the normal
            theory one and the independence test is on the first row only).

        Notes
        -----
        ``Lambda_k = n sum_{j > k} lambda_j^2 / (2 var(r))`` over the
        eigenvalues ordered by absolute value (``var`` with divisor n - 1).
        Normal theory: ``chi2((p-k)(p-k+1)/2)``.  For residuals, with
        ``v_i = z_i``'s coordinates on the eigenvectors and the
        ``p(p+1)/2`` vectors ``e_i = (v_ia^2 - 1, sqrt(2) v_ia v_ib)_{a<b}``:
        the general test refers ``Lambda_k`` to ``sum c_j chi2_1`` with ``c``
        the eigenvalues of ``Cov(r_i e_i) / (2 var(r))`` restricted to the
        pairs with ``a, b > k``; the independence test (y independent of x)
        uses ``c`` = eigenvalues of ``Cov(e_i) / 2``.  Bentler-Xie (or Wood)
        approximation.
        """
        return self._dimension_table(rank)

    def _dimension_tests(self, k: int) -> DimensionTests:
        p = self._evals.shape[0]
        n = self.nobs
        var_r = self._var_r()  # of the response near unit size, as the eigenvalues:
        lam2 = (self._evals * self._extras.get("y_scale", 1.0)) ** 2
        tail = np.cumsum(lam2[::-1])[::-1]
        m = np.arange(k)
        stat = n * tail[m] / (2 * var_r)
        df = (p - m) * (p - m + 1) / 2
        p_norm = chi2_sf(stat, df)
        if not self.residuals:
            table = pd.DataFrame(
                {"statistic": stat, "df": df, "pvalue": p_norm},
                index=pd.Index(dim_row_labels(k), name="Hypothesis"),
            )
            notes = [
                "H0: dimension k (row kD) vs more; Stat = n sum of the smallest "
                "(p-k) squared eigenvalues / (2 var(y)), chi-square with "
                "(p-k)(p-k+1)/2 df (x normal, Li 1992)."
            ]
            return DimensionTests(table, "pHd marginal dimension tests", "chi2", notes,
                                  method_label="Li (1992) chi-square")
        v = self._std.z @ self._raw  # z-scale coordinates on the eigenvectors
        ia, ib = np.triu_indices(p)
        scale = np.where(ia == ib, 1.0, np.sqrt(2.0))
        w = self._std.weights
        r = self._extras["r"]
        rc = r - (r.mean() if w is None else (w @ r) / n)
        # e_i = scale * (v_ia v_ib - delta_ab); the shift matters only when
        # the entries are multiplied by the centred residuals
        delta = np.where(ia == ib, 1.0, 0.0)
        c_ind = cov_of_products(v, v, w, ddof=0, pairs=(ia, ib), scale=scale)
        c_gen = cov_of_products(v, v, w, ddof=0, pairs=(ia, ib), shift=delta,
                                scale=scale, mult=rc)
        p_ind = np.full(k, np.nan)
        p_ind[0] = self._wchi2(0.5 * np.linalg.eigvalsh(c_ind), stat[0])
        p_gen = np.empty(k)
        for j in range(k):
            sel = (ia >= j) & (ib >= j)
            ev = np.linalg.eigvalsh(c_gen[np.ix_(sel, sel)])
            p_gen[j] = self._wchi2(ev / (2 * var_r), stat[j])
        table = pd.DataFrame(
            {"statistic": stat, "df": df, "pvalue": p_norm, "pvalue_indep": p_ind,
             "pvalue_general": p_gen},
            index=pd.Index(dim_row_labels(k), name="Hypothesis"),
        )
        notes = [
            "H0: dimension k (row kD) vs more. Normal theory: chi-square with "
            "(p-k)(p-k+1)/2 df (pvalue); General theory: weighted chi-square "
            "(Cook 1998; pvalue_general); independence test (pvalue_indep, row 0 "
            "only): H0 y independent of x."
        ]
        return DimensionTests(table, "pHd (residuals) marginal dimension tests", "chi2", notes,
                              method_label="Li (1992); Cook (1998) general and independence",
                              pvalue_columns=("pvalue_indep", "pvalue_general"))

"""The joint estimator and the classical baselines side by side.

:func:`compare` fits each requested method to ``(y, a, b)`` and reports, for
each block, how far its estimated subspace is from the truth (simulations) or
from the other methods (real data).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from statsmodels.iolib.summary2 import Summary

from ._data import MissingPolicy, ModelData
from ._estimate import check_rank
from ._export import ExportMixin, records
from ._linalg import orthonormal_basis, principal_angles
from .baselines import PHD, SAVE, SIR
from .fit_measures import fit_measures
from .metrics import nsee, subspace_error
from .model import JointDimReduction
from .summary import SummaryMixin, build_summary, json_safe

__all__ = ["Comparison", "compare", "split_joint_subspace"]

_METHODS = ("jdr", "sir", "phd", "save")
#: R-squared values closer than this are reported as explaining y equally well.
TIE = 0.01


def split_joint_subspace(
    basis: np.ndarray, n1: int, rank: int
) -> tuple[np.ndarray, np.ndarray]:
    """Split a subspace of the concatenated ``[a, b]`` into an a- and a b-part.

    Parameters
    ----------
    basis : ndarray, shape (n1 + n2, k)
        Any basis of the subspace estimated on ``x = [a, b]`` (k = 2 rank
        in :func:`compare`).
    n1 : int
        Width of block a.
    rank : int
        Dimension of each part.

    Returns
    -------
    (ndarray, ndarray)
        Orthonormal bases, shapes (n1, rank) and (n2, rank).

    Notes
    -----
    With ``Q`` an orthonormal basis of the subspace, ``Q_a`` its first n1 rows
    and ``Q_b`` the others, each part is spanned by the top ``rank`` left
    singular vectors of ``Q_a`` (resp. ``Q_b``): the ``rank``-dimensional
    subspace of block a that the joint subspace covers best
    (``Q_a Q_a^T = P_a`` restricted to block a, so the choice does not depend
    on the basis given).  If y depends on ``(U^T a, V^T b)`` the central
    subspace of ``[a, b]`` is ``span(U) x span(V)``, whose parts are exactly
    ``span(U)`` and ``span(V)``.

    Examples
    --------
    >>> import numpy as np
    >>> w = np.zeros((5, 2)); w[0, 0] = 1.0; w[3, 1] = 2.0
    >>> ua, vb = split_joint_subspace(w, 2, 1)
    >>> np.abs(ua).ravel().tolist(), np.abs(vb).ravel().tolist()
    ([1.0, 0.0], [0.0, 1.0, 0.0])
    """
    q = orthonormal_basis(basis)
    parts = []
    for block in (q[:n1], q[n1:]):
        u, _, _ = np.linalg.svd(block, full_matrices=False)
        parts.append(u[:, :rank])
    return parts[0], parts[1]


class Comparison(ExportMixin, SummaryMixin):
    """Output of :func:`compare` (read-only).

    Attributes
    ----------
    table : DataFrame
        With ``truth``: one row per fitted variant (``"jdr"``,
        ``"sir (blocks)"``, ``"sir ([a, b])"``, ...) and columns ``nsee``,
        ``error a``, ``error b`` (``||U_perp^T orth(U_hat)||_F / sqrt(r)``)
        and the principal angles in degrees per block.  Without it: one row
        per pair of variants with the largest and mean principal angles
        (degrees) between their subspaces, per block.
    fit : DataFrame
        One row per variant: ``rsquared`` and ``rsquared adj`` of the
        bilinear regression of y on the variant's 2r reduced features
        (``a U_hat``, ``b V_hat`` and their ``r^2`` products; the measure the
        joint fit reports as ``rsquared``), in-sample.
    best : str
        The variant with the largest ``rsquared``.
    estimates : dict
        Variant name -> (basis of the a-subspace, basis of the b-subspace).
    """

    def __init__(self, table: pd.DataFrame, estimates: dict[str, tuple[np.ndarray, np.ndarray]],
                 info: dict[str, Any], fit: pd.DataFrame | None = None) -> None:
        self._table = table
        self._estimates = estimates
        self._info = dict(info)
        self._fit = fit if fit is not None else pd.DataFrame(
            index=pd.Index(list(estimates), name="variant"),
            columns=["rsquared", "rsquared adj"], dtype=float)

    @property
    def table(self) -> pd.DataFrame:
        return self._table.copy()

    @property
    def fit(self) -> pd.DataFrame:
        return self._fit.copy()

    @property
    def best(self) -> str:
        return str(self._fit["rsquared"].idxmax())

    def conclusion(self) -> str:
        """One sentence: which variant's reduced features explain y best."""
        r2 = self._fit["rsquared"].sort_values(ascending=False, kind="stable")
        if len(r2) == 1:
            return f"{r2.index[0]}: R-squared {r2.iloc[0]:.3f}."
        n_tied = int((r2.iloc[0] - r2 < TIE).sum())  # sorted: the first n_tied
        if n_tied > 1:
            tied = [str(name) for name in r2.index[:n_tied]]
            return (f"{', '.join(tied[:-1])} and {tied[-1]} explain y about equally well "
                    f"(R-squared {r2.iloc[0]:.3f} to {r2.iloc[n_tied - 1]:.3f}; differences "
                    f"below {TIE:g} are not told apart).")
        return (f"{r2.index[0]} explains y best (R-squared {r2.iloc[0]:.3f}; next "
                f"{r2.index[1]}, {r2.iloc[1]:.3f}).")

    @property
    def estimates(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        return {k: (a.copy(), b.copy()) for k, (a, b) in self._estimates.items()}

    @property
    def rank(self) -> int:
        return self._info["Rank:"]

    def to_dict(self) -> dict[str, Any]:
        """The comparison as plain JSON types: ``endog``, ``nobs``, ``n1``,
        ``n2``, ``rank``, ``methods``, ``truth`` (bool) and ``table`` (one
        record per row of :attr:`table`, its ``variant`` first; keys without
        spaces, e.g. ``error_a``, ``angle_a1``).  The bases in
        :attr:`estimates` are not included (``save`` keeps them)."""
        n1, n2 = (int(v) for v in str(self._info["n1, n2:"]).split(","))
        return {
            "endog": self._info["Dependent variable:"],
            "nobs": json_safe(self._info["No. observations:"]),
            "n1": n1, "n2": n2, "rank": json_safe(self.rank),
            "methods": self._info["Methods:"].split(", "),
            "truth": self._info["Truth:"] == "given",
            "table": records(self._table),
            "fit": records(self._fit),
            "best": self.best,
        }

    def summary(self) -> Summary:
        notes = [
            "Baselines are fitted on each block alone (y on a, y on b; 'blocks') and on "
            "the concatenated [a, b] ('[a, b]'; its 2r-dimensional subspace is split into "
            "the top-r left singular subspaces of the a-rows and the b-rows of an "
            "orthonormal basis).",
        ]
        if self._info["Truth:"] == "given":
            notes.append("nsee = max(error a, error b); angles in degrees.")
        else:
            notes.append("Principal angles (degrees) between the variants' subspaces.")
        notes.append(
            "R-squared: the bilinear regression of y on each variant's 2r reduced "
            "features and their products (the joint fit's rsquared); every variant has "
            "r features per block, so they compare at equal numbers of features, "
            "in-sample (optimistic for all: directions and regression use the same "
            "rows). " + self.conclusion()
        )
        return build_summary("Comparison of dimension reduction methods", self._info,
                             [("method", self._fit, "fit measures"),
                              ("variant", self._table)], notes)


def _check_methods(methods: Any) -> list[str]:
    if isinstance(methods, str):
        methods = [methods]
    try:
        out = [str(m) for m in methods]
    except TypeError:
        raise TypeError(f"methods must be a sequence of names; got {methods!r}") from None
    bad = [m for m in out if m not in _METHODS]
    if bad or not out:
        raise ValueError(f"methods must be a non-empty subset of {_METHODS}; got {methods!r}")
    if len(set(out)) != len(out):
        raise ValueError(f"methods lists a method twice: {out}")
    return out


def _check_truth(truth: Any, n1: int, n2: int) -> tuple[np.ndarray, np.ndarray] | None:
    if truth is None:
        return None
    try:
        u, v = truth
    except (TypeError, ValueError):
        raise TypeError("truth must be a pair (U, V) of bases") from None
    u = np.asarray(u, dtype=float)
    v = np.asarray(v, dtype=float)
    u = u[:, None] if u.ndim == 1 else u
    v = v[:, None] if v.ndim == 1 else v
    if u.shape[0] != n1 or v.shape[0] != n2:
        raise ValueError(
            f"truth: U must have {n1} rows and V {n2} rows (the block widths); got "
            f"{u.shape} and {v.shape}"
        )
    return u, v


def compare(
    endog: Any,
    exog_a: Any,
    exog_b: Any,
    rank: int,
    *,
    methods: Sequence[str] = _METHODS,
    truth: tuple[Any, Any] | None = None,
    n_slices: int | None = None,
    residuals: bool = False,
    missing: MissingPolicy = "none",
) -> Comparison:
    """Fit the joint estimator and the baselines and compare their subspaces.

    Parameters
    ----------
    endog, exog_a, exog_b : array_like
        Response and the two blocks.
    rank : int
        Dimension r of each subspace, ``1 <= r <= min(n1, n2)``.
    methods : sequence of {"jdr", "sir", "phd", "save"}
        Methods to fit.  Each baseline is fitted two ways: on each block
        alone (r directions for a from y on a, r for b from y on b) and on
        the concatenated ``[a, b]`` (2r directions, split by
        :func:`split_joint_subspace`).
    truth : (U, V), optional
        True bases: report each variant's NSEE, subspace errors and
        principal angles per block.  Without it, the angles between variants.
    n_slices : int, optional
        Slices for SIR and SAVE (default as ``dr``).
    residuals : bool
        pHd on OLS residuals (``"phdres"``) instead of y.
    missing : {"none", "drop", "raise"}

    Returns
    -------
    Comparison

    Examples
    --------
    >>> import jdr_stats as jdr
    >>> from jdr_stats.compare import compare
    >>> sim = jdr.simulate.bilinear(3000, 5, 4, 2, seed=3)
    >>> out = compare(sim.y, sim.a, sim.b, 2, truth=(sim.U, sim.V))
    >>> out.table.index.tolist()[:3]
    ['jdr', 'sir (blocks)', 'sir ([a, b])']
    >>> bool(out.table.loc["jdr", "nsee"] < 0.3)
    True
    """

    meths = _check_methods(methods)
    data = ModelData.from_inputs(
        endog, {"exog_a": (exog_a, "a"), "exog_b": (exog_b, "b")}, missing=missing
    )
    y, a, b = data.rows("compare")
    n1, n2 = a.shape[1], b.shape[1]
    rank = check_rank(rank, n1, n2)
    true = _check_truth(truth, n1, n2)

    def directions(cls, x, k) -> np.ndarray:
        if cls is PHD:
            res = cls(y, x).fit(residuals=residuals)
        else:
            res = cls(y, x).fit(n_slices=n_slices)
        return np.asarray(res.directions)[:, :k]

    est: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    classes = {"sir": SIR, "phd": PHD, "save": SAVE}
    for m in meths:
        if m == "jdr":
            fit = JointDimReduction(y, a, b).fit(rank)
            est["jdr"] = (fit.estimate.dir_a, fit.estimate.dir_b)
            continue
        cls = classes[m]
        est[f"{m} (blocks)"] = (directions(cls, a, rank), directions(cls, b, rank))
        joint = directions(cls, np.hstack([a, b]), 2 * rank)
        est[f"{m} ([a, b])"] = split_joint_subspace(joint, n1, rank)

    fit = pd.DataFrame.from_dict(
        {name: _rsquared(y, a, b, ua, vb, data.nobs) for name, (ua, vb) in est.items()},
        orient="index", columns=["rsquared", "rsquared adj"])
    fit.index.name = "variant"
    deg = np.degrees
    if true is not None:
        u, v = true
        rows = {}
        for name, (ua, vb) in est.items():
            row = {
                "nsee": nsee(u, ua, v, vb),
                "error a": subspace_error(u, ua),
                "error b": subspace_error(v, vb),
            }
            for blk, t, e in (("a", u, ua), ("b", v, vb)):
                for j, ang in enumerate(deg(principal_angles(t, e))):
                    row[f"angle {blk}{j + 1}"] = ang
            rows[name] = row
        table = pd.DataFrame.from_dict(rows, orient="index")
    else:
        rows = {}
        names = list(est)
        for i, n_i in enumerate(names):
            for n_j in names[i + 1 :]:
                ang_a = deg(principal_angles(est[n_i][0], est[n_j][0]))
                ang_b = deg(principal_angles(est[n_i][1], est[n_j][1]))
                rows[f"{n_i} vs {n_j}"] = {
                    "max angle a": ang_a.max(), "mean angle a": ang_a.mean(),
                    "max angle b": ang_b.max(), "mean angle b": ang_b.mean(),
                }
        table = pd.DataFrame.from_dict(
            rows, orient="index",
            columns=["max angle a", "mean angle a", "max angle b", "mean angle b"],
        )
    table.index.name = "variant"
    info = {
        "Dependent variable:": data.endog_name,
        "No. observations:": data.nobs,
        "n1, n2:": f"{n1}, {n2}",
        "Rank:": rank,
        "Methods:": ", ".join(meths),
        "Truth:": "given" if true is not None else "none",
    }
    return Comparison(table, est, info, fit)


def _rsquared(y: np.ndarray, a: np.ndarray, b: np.ndarray, ua: np.ndarray, vb: np.ndarray,
              nobs: int) -> tuple[float, float]:
    """R-squared and adjusted R-squared of y on the bilinear features of ``(ua, vb)``."""
    fm = fit_measures([(y, a, b, None)], ua, vb, nobs=nobs)
    return fm.rsquared, fm.rsquared_adj

"""Inference of a K-block fit under its own estimator: the association
test, the variables' tests (``drop1``, ``test_variables``) and the
bootstrap (pairs or Poisson, intervals, ``n_jobs``, gap diagnostics).

:class:`KBlockInferenceMixin` is mixed into
:class:`jdr_stats.fitting._kfit.KBlockFit`; the numerics are in
:mod:`jdr_stats.inference.kblock_association`,
:mod:`jdr_stats.inference.kblock_coord` and
:mod:`jdr_stats.inference.kblock_bootstrap`.  Every procedure reads the
fit's whitening (per block or across blocks, its kind), its pieces (main
effects pooled or not, the K-way piece Hermite-corrected under the joint
estimator) and its route (the sketch's test vectors): the tests and the
bootstrap are those of the estimator fitted.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, Literal, get_args

import numpy as np
import pandas as pd

from .. import config
from ..core._linalg import unit_columns
from ..core.kestimate import KBlockFactors, stacked_pieces
from ..inference._boot_results import BootstrapResults
from ..inference._metric import covariance_metric_angles
from ..inference.hypotheses import TestResult, TestTable, fdr_qvalues
from ..inference.kblock_association import KBlockAssociation, kblock_association_test
from ..inference.kblock_bootstrap import (
    KBLOCK_BOOT_METHODS,
    KBlockBootMethod,
    Replicate,
    draw_resamples,
    kblock_results,
    warn_weak_gap,
)
from ..inference.kblock_coord import combined_wald, group_wald
from ..inference.kblock_influence import joint_influences, mapped_influences
from ..resampling._engine import n_workers, worker_pool
from ..resampling._progress import ProgressArg, check_progress, progress_bar
from ..runtime._validation import check_int, check_memory, normalize_seed
from ..support._cv import complementary_halves
from ._kwhiten import _aligned, _cross_cov, _whiten_arrays
from ._rank_zero import check_rank_positive

__all__ = ["KBlockInferenceMixin"]

_VariableTest = Literal["combined", "conditional", "marginal"]
_VARIABLE_TESTS: tuple[str, ...] = get_args(_VariableTest)


def _check_variable_test(test: object) -> None:
    """A clear error for a variable test that is not one of :data:`_VARIABLE_TESTS`."""
    if test not in _VARIABLE_TESTS:
        raise ValueError(f'test must be "combined", "conditional" or "marginal"; '
                         f"got {test!r}")


_VARIABLES_H0 = ("the named variables' rows of their blocks' directions are zero: none of "
                 "them enters its block's subspace")


def _centred(white: Any, blocks: Sequence[np.ndarray], wn: np.ndarray) -> list[np.ndarray]:
    """Whitened rows centred at the weighted mean (as the fit's whitening)."""
    return [z - wn @ z for z in white.rows(blocks)]


def resampled_model(model: Any, idx: np.ndarray) -> Any:
    """A copy of ``model`` whose data are its rows ``idx`` (unlabelled), for
    a refit on a resample or a subsample."""
    data = model._data
    rep = copy.copy(model)
    rep._data = replace(data, endog=data.endog[idx],
                        blocks={k: x[idx] for k, x in data.blocks.items()},
                        weights=None if data.weights is None else data.weights[idx],
                        row_index=None, is_pandas=False)
    return rep


def _refit_batch(refit: Callable[..., Any], model: Any, batch: Sequence[np.ndarray],
                 ranks: dict[str, int], kwargs: dict[str, Any],
                 base: list[np.ndarray], scales: list[Any], covs: list[np.ndarray],
                 fit_values: list[np.ndarray]) -> list[Replicate]:
    """The replicates of one batch of resamples: each block's principal
    angles to the fit (radians, in the block's covariance metric ``covs``),
    its combined-Gram eigenvalues, its directions (original coordinates,
    the fit's rank) and, for a sparse fit, its kept variables; NaN (and no
    selection) for a refit that fails (a resample with a singular block)."""
    names = list(ranks)
    widths = [len(v) for v in fit_values]
    sparse = kwargs.get("sparsity") is not None
    out: list[Replicate] = []
    for idx in batch:
        try:
            res = refit(resampled_model(model, idx), ranks, **kwargs)
        except (ValueError, np.linalg.LinAlgError):
            out.append(([np.full(b.shape[1], np.nan) for b in base],
                        [np.full(n, np.nan) for n in widths],
                        [np.full(b.shape, np.nan) for b in base], None))
            continue
        raw = [res.directions[n].to_numpy()[:, :b.shape[1]] for n, b in zip(names, base,
                                                                          strict=True)]
        dirs = [d if s is None else unit_columns(d / s[:, None]) for d, s in zip(raw, scales,
                                                                               strict=True)]
        eig = [np.asarray(res._fac.values[k], float) for k in range(len(names))]
        kept = None
        if sparse:
            kept = [np.isin([str(v) for v in res.directions[n].index],
                            [str(v) for v in res.support[n]]) for n in names]
        out.append(([covariance_metric_angles(b, d, c) if b.shape[1]
                     else np.empty(0)  # a rank-0 block: nothing to bound
                     for b, d, c in zip(base, dirs, covs, strict=True)], eig, raw, kept))
    return out


class KBlockInferenceMixin:
    """The association test, variables' tests and bootstrap of a K-block fit."""

    _model: Any
    _fac: KBlockFactors
    _white: Any
    _full_white: Any
    _ranks: dict[str, int]
    _settings: dict[str, Any]
    _names: tuple[str, ...]
    _supports: dict[str, np.ndarray] | None
    #: the K-block fit (set by the results class: its refit on a resample)
    _refit: Callable[..., Any]

    # the class provides these
    directions: Any
    eigenvalues: Any

    def _labels(self, k: int) -> list[str]:  # pragma: no cover - the class defines it
        raise NotImplementedError

    def _per_block_whitening(self) -> Any:  # pragma: no cover - the class defines it
        raise NotImplementedError

    def _near_unit(self, k: int, d: np.ndarray) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    # -- support ----------------------------------------------------------------
    def selection_stability(self, n_sub: int = 100, *,
                            seed: int | np.random.Generator | None = None) -> pd.DataFrame:
        """How often each variable is selected on subsamples of half the rows.

        The fit (its ranks, whitening, estimator and pieces, and each
        block's kept count) repeated on ``n_sub`` subsamples of ``m // 2``
        rows, drawn as complementary pairs (the two halves of a random
        split), as stability selection does and as
        :meth:`JDRResults.selection_stability` does for two blocks (theory
        page "Support selection", "Selection stability").

        Parameters
        ----------
        n_sub : int
            Subsamples (at least 2).
        seed : int, Generator or None
            Seed of the splits (same seed, same frequencies).

        Returns
        -------
        DataFrame
            Indexed by ``(block, variable)`` for every variable, columns
            ``selected`` (in this fit's support) and ``frequency`` (share of
            subsamples that selected it); within each block the selected
            variables first, then by decreasing frequency.

        Notes
        -----
        Needs a sparse fit and the rows in memory, no case weights.  A
        rank-0 block keeps all its variables, on every subsample.  A
        subsample the estimator cannot fit (a singular block on half the
        rows) raises a ValueError naming it.
        """
        n_sub = check_int(n_sub, "n_sub", low=2)
        if self.sparsity is None:  # type: ignore[attr-defined]
            raise ValueError("selection_stability() needs a sparse fit; got sparsity=None "
                             "(fit with sparsity= an int, a dict by block, \"cv\" or "
                             "\"auto\")")
        data = self._model._data
        data.rows("selection_stability()")
        if data.weighted:
            raise ValueError("selection_stability() does not handle case weights yet; the "
                             "model has weights")
        m = int(data.nobs)
        if m < 6:
            raise ValueError(f"selection_stability() needs at least 6 rows; got {m}")
        names = list(self._names)
        labels = [self._labels(k) for k in range(len(names))]
        counts = [np.zeros(len(lab)) for lab in labels]
        refit, kwargs = type(self)._refit, self._refit_kwargs()
        for part in complementary_halves(m, n_sub, normalize_seed(seed)):
            try:
                res = refit(resampled_model(self._model, part), dict(self._ranks), **kwargs)
            except (ValueError, np.linalg.LinAlgError) as exc:
                raise ValueError(
                    f"selection_stability(): the fit fails on a half of the rows "
                    f"({part.size} of {m}): {exc}") from exc
            for c, lab, n in zip(counts, labels, names, strict=True):
                c += np.isin(lab, res.support[n])
        chosen = self.support  # type: ignore[attr-defined]
        frames = []
        for n, lab, c in zip(names, labels, counts, strict=True):
            frame = pd.DataFrame(
                {"selected": np.isin(lab, chosen[n]), "frequency": c / n_sub},
                index=pd.MultiIndex.from_product([[n], lab], names=["block", "variable"]))
            frames.append(frame.sort_values(["selected", "frequency"], ascending=False,
                                            kind="stable"))
        return pd.concat(frames)

    # -- shared -----------------------------------------------------------------
    def _refit_kwargs(self) -> dict[str, Any]:
        """The fit's settings for :attr:`_refit` on a resample or subsample:
        its whitening, estimator, sparsity (the kept counts) and pieces."""
        return {"whitening": self._settings["whitening"],
                "independent_blocks": self._settings["estimator"] == "per-block",
                "sparsity": getattr(self, "sparsity", None), "rank_method": "auto",
                "alpha": 0.05, "seed": None,
                "main_effects": bool(self._settings.get("main_effects", False)),
                # an orthogonal fit's replicates re-estimate y's residual
                "interactions": self._settings.get("interactions", "stein")}

    def _fit_rows(self, what: str) -> tuple[np.ndarray, list[np.ndarray], np.ndarray | None,
                                            np.ndarray]:
        """``(y, blocks, weights, normalised weights)`` of the fit's rows."""
        data = self._model._data
        data.rows(what)
        y = data.unit_endog  # every use is invariant to its unit
        blocks = [np.asarray(x, float) for x in data.blocks.values()]
        w = data.weights
        m = y.shape[0]
        wn = np.full(m, 1.0 / m) if w is None else np.asarray(w, float) / np.sum(w)
        return y, blocks, w, wn

    def _joint(self) -> bool:
        return self._settings["estimator"] == "joint"

    def _cross_cov_of(self, zs: Sequence[np.ndarray], wn: np.ndarray) -> Any:
        """The Hermite correction's cross covariances, where the fit uses them."""
        return _cross_cov(zs, wn) if self._joint() and len(zs) >= 3 else None

    # -- association --------------------------------------------------------------
    def association_test(self, n_perm: int = 199, *,
                         seed: int | np.random.Generator | None = None,
                         statistic: str = "combined") -> TestResult:
        """Permutation test of no association, ``H0: y`` independent of the
        blocks, under the fit's estimator: valid at any width and any K.

        The combined statistic of the two-block test over K blocks
        (:mod:`jdr_stats.inference.kblock_association`): each interaction
        piece of the fit (every pair, the K-way piece) formed as the fit
        forms it (its whitening, per block or across blocks; the Hermite
        correction of the joint K-way piece; the sketch of a sketched
        route), each block's first moment (its rows whitened as
        ``independent_blocks=True`` whitens them), and the largest
        correlation of the response with one variable of each block and one
        product of each pair; the parts' logarithms standardised over the
        permutations and the largest referred to its permutation
        distribution.  Exact: the whitenings do not depend on ``y``.  Size
        and power: ``studies/study_kblock_inference.py``.

        Parameters
        ----------
        n_perm : int
            Permutations of the response's rows (default 199).
        seed : int, Generator or None
            Seed of the permutations (same seed, same p-value).
        statistic : {"combined"}
            The combined statistic above (the two-block test's ``"dense"``
            and ``"sparse"`` parts alone are two-block only: refused).

        Returns
        -------
        TestResult
            ``statistic`` the observed largest standardised part, ``df``
            None (a permutation reference), ``pvalue``
            ``(1 + #{Z* >= Z}) / (n_perm + 1)``.

        Notes
        -----
        Not with covariates (residuals on them are not exchangeable); needs
        the rows in memory.  A sparse fit is tested on all its variables.

        Examples
        --------
        >>> import numpy as np, jdr_stats as jdr
        >>> rng = np.random.default_rng(0)
        >>> x = [rng.normal(size=(80, 3)) for _ in range(3)]
        >>> y = x[0][:, 0] * x[1][:, 0] + rng.normal(size=80)
        >>> res = jdr.JointDimReduction.from_blocks(y, x).fit(1)
        >>> t = res.association_test(99, seed=1)
        >>> t.pvalue == res.association_test(99, seed=1).pvalue, t.method
        (True, 'association')
        """
        if statistic != "combined":
            raise ValueError(f'statistic must be "combined" for the K-block engine (its '
                             f'combined statistic over every piece; "dense" and "sparse" '
                             f'are parts of the two-block test); got {statistic!r}')
        data = self._model._data
        if getattr(getattr(data, "adjustment", None), "p", 0):
            raise ValueError(
                "association_test() does not run with covariates: permuting the response's "
                "residuals on the covariates is not exact (the residuals are not "
                "exchangeable); fit without covariates to test the association of y with "
                "the blocks")
        return kblock_association_test(self._fit_rows("association_test()")[0],
                                       self._association_statistic(), n_perm=n_perm,
                                       seed=seed, estimator=self._settings["estimator"])

    def _association_statistic(self) -> KBlockAssociation:
        """The statistic of :meth:`association_test`, the fit's rows held."""
        _, blocks, _, wn = self._fit_rows("association_test()")
        zs = _centred(self._full_white, blocks, wn)
        main_white = self._per_block_whitening()
        main = ([x - wn @ x for x in blocks] if main_white is None
                else _centred(main_white, blocks, wn))
        tests = self._fac.tests if self._supports is None else None
        return KBlockAssociation(zs, main, blocks, wn, cross_cov=self._cross_cov_of(zs, wn),
                                 tests=tests)

    # -- variables -----------------------------------------------------------------
    def _coordinate_input(self, jackknife: bool = False
                          ) -> tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]]:
        """``(M_k, A_k, influences on G_k = A_k M_k)`` of every block (module
        :mod:`jdr_stats.inference.kblock_coord`): the fit's pieces, and each
        row's influence with the whitening, centring and Hermite correction
        estimated (the pieces' scales and weights held): analytic for the
        sample whitening (joint or per block) on the tensor route
        and three or more blocks (:mod:`jdr_stats.inference.kblock_influence`),
        else (or with ``jackknife``) each row deleted and the fit's pieces
        re-formed."""
        what = "drop1() and test_variables()"
        if (inter := self._settings.get("interactions", "stein")) != "stein":
            raise ValueError(f'{what}: the variables\' tests of K blocks read the pieces of y '
                             f'itself; a fit with interactions="{inter}" has none yet (fit '
                             'with interactions="stein" to test the variables)')
        if self._supports is not None:
            raise ValueError(f"{what}: a sparse fit's variables are chosen from the data; "
                             "test the variables of the dense fit (sparsity=None)")
        y, blocks, w, wn = self._fit_rows(what)
        data = self._model._data
        if w is not None:
            raise ValueError(f"{what}: the variables' tests of K blocks do not handle case "
                             "weights yet; the model has weights")
        if getattr(getattr(data, "adjustment", None), "p", 0):
            raise ValueError(f"{what}: the variables' tests of K blocks do not run with "
                             "covariates yet; the model has covariates")
        m = y.shape[0]
        widths = [x.shape[1] for x in blocks]
        fac = self._fac
        zs = _centred(self._full_white, blocks, wn)
        yc = y - wn @ y
        mks = stacked_pieces(yc, zs, fac, cross_cov=self._cross_cov_of(zs, wn))
        from .. import policy

        entries = m * sum(n * mk.shape[1] for n, mk in zip(widths, mks, strict=True))
        if entries > policy.KBLOCK_INFLUENCE_MAX_ENTRIES:
            raise ValueError(f"{what}: the rows' influences on every block's pieces hold "
                             f"{entries} numbers > {policy.KBLOCK_INFLUENCE_MAX_ENTRIES} "
                             "(policy.KBLOCK_INFLUENCE_MAX_ENTRIES); use fewer rows or "
                             "narrower blocks")
        amaps = [self._full_white.maps[k].solve_t(np.eye(n)) for k, n in enumerate(widths)]
        gk = [a @ mk for a, mk in zip(amaps, mks, strict=True)]
        kind, estimator = self._settings["whitening"], self._settings["estimator"]
        if kind == "sample" and fac.tests is None and len(widths) >= 3 and not jackknife:
            # analytic: shared sums, no refits (kblock_influence)
            rows = joint_influences(yc, zs, fac, cross_cov=self._cross_cov_of(zs, wn),
                                    joint=estimator == "joint")
            return list(mks), amaps, mapped_influences(rows, zs, mks, amaps)
        psis = [np.empty((m, *g.shape)) for g in gk]
        labels = [self._labels(k) for k in range(len(widths))]
        keep = np.ones(m, bool)
        for i in range(m):
            keep[i] = False
            sub = [x[keep] for x in blocks]
            zi, ai = _aligned(*_whiten_arrays(sub, None, list(self._names), labels, kind,
                                              estimator), amaps)
            wni = np.full(m - 1, 1.0 / (m - 1))
            yi = y[keep] - wni @ y[keep]
            mi = stacked_pieces(yi, zi, fac, cross_cov=self._cross_cov_of(zi, wni))
            for k in range(len(widths)):
                psis[k][i] = (m - 1) * (gk[k] - ai[k] @ mi[k])
            keep[i] = True
        return list(mks), amaps, psis

    def _resolve(self, variables: Any) -> dict[int, list[int]]:
        """Block index to variable indices of ``variables`` (a name, a list
        of names looked up in every block, or a dict by block name)."""
        labels = [self._labels(k) for k in range(len(self._names))]
        out: dict[int, list[int]] = {}
        if isinstance(variables, Mapping):
            for b, vs in variables.items():
                if b not in self._names:
                    raise ValueError(f"variables: unknown block {b!r}; blocks are "
                                     f"{list(self._names)}")
                k = self._names.index(b)
                for v in [vs] if isinstance(vs, str) else list(vs):
                    if v not in labels[k]:
                        raise ValueError(f"variables: {v!r} is not a variable of block {b!r}")
                    out.setdefault(k, []).append(labels[k].index(v))
        else:
            vs = [variables] if isinstance(variables, str) else list(variables)
            for v in vs:
                where = [k for k in range(len(labels)) if v in labels[k]]
                if not where:
                    raise ValueError(f"variables: {v!r} is not a variable of any block")
                if len(where) > 1:
                    raise ValueError(f"variables: {v!r} is a variable of blocks "
                                     f"{[self._names[k] for k in where]}; pass a dict by "
                                     "block name")
                out.setdefault(where[0], []).append(labels[where[0]].index(v))
        if not any(out.values()):
            raise ValueError(f"variables: name at least one variable; got {variables!r}")
        return {k: sorted(set(v)) for k, v in out.items()}

    def test_variables(self, variables: str | Sequence[str] | Mapping[str, Sequence[str]], *,
                       test: _VariableTest = "combined") -> TestResult:
        """Test that several variables together do not enter the fit's
        directions, under the fit's estimator (theory in
        :mod:`jdr_stats.inference.kblock_coord`).

        H0: the named variables' rows of their blocks' directions are all
        zero.  Wald statistic of the stacked rows of ``A_k M_k`` projected
        on each block's rank-``r_k`` basis fitted without the group
        (``"conditional"``, df ``sum_k |J_k| r_k``, ``chi2(df)``) or whole
        (``"marginal"``, Hotelling's ``F``), the covariance that of the rows'
        jackknife influences (the whitening, per block or joint,
        re-estimated).  ``"combined"`` (the default) rejects where either
        does, p-value ``min(1, 2 min(p_conditional, p_marginal))``: the
        conditional test has no power where the group carries all of its
        block's signal (the basis without it is noise), the marginal one
        little where the rows are wide; with ``df_marginal > m / 2`` it is
        the conditional test alone.  Asymptotic; dense fits without weights
        or covariates.  The tests are those of the fitted estimator's
        directions: the per-block estimator (``independent_blocks=True``)
        assumes independent blocks, and where the blocks correlate its
        directions, and so its tests, take in variables that do not enter
        ``y`` (level of both: ``studies/study_kblock_inference.py``).

        Parameters
        ----------
        variables : str, list of str, or dict
            Names looked up in every block, or ``{block: [...]}`` (needed
            for a name used in several blocks).
        test : {"combined", "conditional", "marginal"}

        Returns
        -------
        TestResult
            For ``"combined"``: the conditional statistic and df, the
            combined p-value (both parts in ``distribution``).
        """
        _check_variable_test(test)
        groups = self._resolve(variables)
        mks, amaps, psis = self._coordinate_input()
        ranks = [self._ranks[n] for n in self._names]
        m = psis[0].shape[0]
        if test == "combined":
            c = combined_wald(mks, amaps, psis, groups, ranks)
            stat, df, pv = c["statistic"], int(c["df"]), c["pvalue"]
            dfm = int(c["df_marginal"])
            dist = (f"min(1, 2 min(p of chi2({df}) = {c['pvalue_conditional']:.4g}, p of "
                    f"F({dfm}, {m - dfm}) = {c['pvalue_marginal']:.4g}))"
                    if np.isfinite(c["pvalue_marginal"]) else
                    f"chi2({df}) (conditional alone: df_marginal {dfm} > m / 2)")
        else:
            stat, df, pv = group_wald(mks, amaps, psis, groups, ranks,
                                      conditional=test == "conditional")
            dist = f"chi2({df})" if test == "conditional" else f"F({df}, {m - df})"
        names = [f"{self._names[k]}:{self._labels(k)[j]}" for k, js in groups.items()
                 for j in js]
        return TestResult(statistic=stat, df=float(df), pvalue=pv,
                          null=f"{_VARIABLES_H0} ({', '.join(names)})",
                          distribution=dist, method=f"wald_jackknife_{test}",
                          name="Test of a group of variables "
                               f"({self._settings['estimator']} estimator)")

    def drop1(self, *, test: _VariableTest = "combined") -> TestTable:
        """One test per variable of H0 "the variable does not enter its
        block's directions" under the fit's estimator: :meth:`test_variables`
        of each variable alone.  Columns ``statistic``, ``df``, ``pvalue``,
        ``qvalue`` (Benjamini-Hochberg over all blocks' variables), indexed
        by ``(block, variable)``; the combined test (the default) adds its
        parts ``pvalue_conditional``, ``statistic_marginal``,
        ``df_marginal`` and ``pvalue_marginal``.

        Examples
        --------
        >>> import numpy as np, jdr_stats as jdr
        >>> rng = np.random.default_rng(0)
        >>> x = [rng.normal(size=(200, 3)) for _ in range(3)]
        >>> y = x[0][:, 0] * x[1][:, 0] * x[2][:, 0] + rng.normal(size=200)
        >>> t = jdr.JointDimReduction.from_blocks(y, x).fit(1).drop1().table
        >>> t.columns.tolist()[:4], t.shape
        (['statistic', 'df', 'pvalue', 'qvalue'], (9, 8))
        """
        _check_variable_test(test)
        mks, amaps, psis = self._coordinate_input()
        ranks = [self._ranks[n] for n in self._names]
        rows, index = [], []
        for k, n in enumerate(self._names):
            for j, var in enumerate(self._labels(k)):
                if test == "combined":
                    rows.append(combined_wald(mks, amaps, psis, {k: [j]}, ranks))
                else:
                    stat, df, pv = group_wald(mks, amaps, psis, {k: [j]}, ranks,
                                              conditional=test == "conditional")
                    rows.append({"statistic": stat, "df": float(df), "pvalue": pv})
                index.append((n, var))
        table = pd.DataFrame(rows,
                             index=pd.MultiIndex.from_tuples(index, names=["block", "variable"]))
        pv = table["pvalue"].to_numpy()
        q = np.full(pv.shape, np.nan)
        finite = np.isfinite(pv)
        if finite.any():
            q[finite] = fdr_qvalues(pv[finite], "bh")
        table["qvalue"] = q
        extra = [c for c in table.columns if c not in ("statistic", "df", "pvalue", "qvalue")]
        table = table[["statistic", "df", "pvalue", "qvalue", *extra]]
        reference = {
            "conditional": "chi2(df) reference (conditional test: rows projected on the "
                           "block's rank-r_k basis fitted without the variable).",
            "marginal": "Hotelling F(df, m - df) reference (marginal test: whole rows).",
            "combined": "combined test: statistic and df of the conditional test (chi2 "
                        "reference), *_marginal of the marginal one (whole rows, Hotelling "
                        "F); pvalue = min(1, 2 min of the two), Bonferroni; the conditional "
                        f"test alone where df_marginal > m / 2 (m = {psis[0].shape[0]}).",
        }[test]
        notes = [
            "H0 (per row): the variable's row of its block's directions is zero.",
            f"Wald statistic, covariance of the rows' influences under the "
            f"{self._settings['estimator']} estimator ({self._settings['whitening']} whitening's "
            "estimation carried: analytic for the sample whitening, else delete-one), "
            + reference,
            "q-values: Benjamini-Hochberg over all blocks' variables.",
        ]
        return TestTable(table, "drop1: one variable at a time", f"wald_jackknife_{test}",
                         notes=notes, method_label="jackknife Wald test",
                         pvalue_columns=("pvalue_conditional", "pvalue_marginal")
                         if test == "combined" else ())

    # -- bootstrap ------------------------------------------------------------------
    def bootstrap(self, n_boot: int = 999, *, seed: int | np.random.Generator | None = None,
                  method: KBlockBootMethod = "pairs", interval: str = "percentile",
                  alpha: float = 0.05, progress: ProgressArg = False,
                  n_jobs: int | None = None) -> BootstrapResults:
        """Percentile bounds of each block's principal angles between the
        bootstrap re-estimates (the fit repeated with the same settings and
        ranks: its estimator, whitening, pieces) and the estimate, degrees.

        The angles are measured in each block's covariance metric (between
        ``C^T u`` and ``C^T u*``, ``Sigma_k = C C^T`` the block's sample
        covariance): their cosines are the canonical correlations of the
        estimate's and the replicate's reduced features, so they do not
        depend on the columns' units, as in the two-block bootstrap.

        Parameters
        ----------
        n_boot : int
            Replicates (at least 2).
        seed : int, Generator or None
            Same seed, same numbers, for any ``n_jobs``.
        method : {"pairs", "poisson"}
            ``"pairs"``: rows resampled with replacement; ``"poisson"``:
            each row repeated by a Poisson-type weight of the resampling
            engine (:mod:`jdr_stats.inference.kblock_bootstrap`).
        interval : {"percentile"}
            The bounds and intervals: percentiles of the replicates (the
            two-block fit's ``"calibrated"`` bound needs its inner
            replicates, which the K-block bootstrap does not draw: refused
            by name).
        alpha : float
            The bounds' and intervals' level ``1 - alpha``, in (0, 1); as
            for two blocks, the intervals need ``(n_boot + 1) alpha / 2 >= 1``.
        progress : bool or callable
            ``True``: a progress bar on standard error; a callable is called
            as ``progress(done, n_boot)`` after each batch of replicates.
        n_jobs : int or None
            Processes (joblib); the resamples are drawn first, so the
            numbers do not depend on it.

        Returns
        -------
        BootstrapResults
            The two-block fit's results type, every table by block name
            (the blocks of positive rank): ``max_angle_bound`` (the
            ``ceil((B + 1)(1 - alpha))``-th smallest largest angle), ``table``,
            ``conf_int``, ``intervals``, ``loadings_conf_int``, ``angles``,
            ``gap``, ``gap_table``, ``summary()``, ``to_dict()``, ``save``;
            the singular values' intervals and the calibrated bound are the
            two-block fit's only (a clear error here).
        """
        if isinstance(n_boot, bool) or not isinstance(n_boot, (int, np.integer)) or n_boot < 2:
            raise ValueError(f"n_boot must be an integer >= 2; got {n_boot!r}")
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.floating)) \
                or not 0 < alpha < 1:
            raise ValueError(f"alpha must be in (0, 1); got {alpha!r}")
        if interval != "percentile":
            raise ValueError(f'interval must be "percentile" at K blocks (the two-block '
                             f'"calibrated" bound needs inner replicates the K-block '
                             f'bootstrap does not draw); got {interval!r}')
        check_progress(progress)
        if method not in KBLOCK_BOOT_METHODS:
            raise ValueError(f'method must be "pairs" or "poisson"; got {method!r}')
        if method == "poisson" and self._settings.get("interactions") == "regression":
            raise ValueError('method="poisson" weights the rows; a fit of interactions='
                             '"regression" takes no case weights: use method="pairs"')
        if n_jobs is not None and (isinstance(n_jobs, bool) or not isinstance(
                n_jobs, (int, np.integer)) or n_jobs == 0):
            raise ValueError(f"n_jobs must be None or a non-zero integer; got {n_jobs!r}")
        data = self._model._data
        m = int(data.nobs)
        check_memory(8.0 * int(n_boot) * (m + sum(self._ranks.values())
                                          + sum(len(self._labels(k)) * (1 + r) for k, r
                                                in enumerate(self._ranks.values()))),
                     config.memory_limit(), "n_boot", int(n_boot),
                     "the bootstrap's resamples and angles")
        data.rows("bootstrap()")
        resamples = draw_resamples(method, m, int(n_boot), seed)
        names = list(self._names)
        base = [self._near_unit(k, self.directions[n].to_numpy()) for k, n in enumerate(names)]
        scales = [getattr(self._full_white.maps[k], "scale", None) for k in range(len(names))]
        # each block's covariance in the coordinates of ``base`` (columns times
        # their power-of-two scales): the metric of the angles
        covs = [np.atleast_2d(np.cov(np.asarray(x, float) * (1.0 if sc is None else sc),
                                     rowvar=False, aweights=data.weights))
                for x, sc in zip(data.blocks.values(), scales, strict=True)]
        kwargs = self._refit_kwargs()
        refit = type(self)._refit
        fit_values = [np.asarray(v, float) for v in self._fac.values]
        # rank-0 blocks are refitted at rank 1 (the factors do not depend on
        # the ranks) and left out of the bounds: nothing to bound for them
        bounded = [n for n in names if self._ranks[n] > 0]
        check_rank_positive(self._ranks, "bootstrap")
        ranks = {n: max(1, r) for n, r in self._ranks.items()}
        # the resamples are drawn: the batches change neither the numbers
        # nor, for n_jobs, their order (the pool yields them in order)
        size = max(1, -(-len(resamples) // (4 * n_workers(n_jobs))))
        if n_workers(n_jobs) == 1:
            size = max(1, -(-len(resamples) // 20))  # progress at every twentieth
        batches = [resamples[i:i + size] for i in range(0, len(resamples), size)]
        reps: list[Replicate] = []
        with worker_pool(n_jobs) as parallel, \
                progress_bar(progress, len(resamples), "bootstrap") as update:
            if parallel is None:
                parts: Any = (_refit_batch(refit, self._model, b, ranks, kwargs, base, scales,
                                           covs, fit_values) for b in batches)
            else:
                from joblib import delayed

                parts = parallel(delayed(_refit_batch)(
                    refit, self._model, b, ranks, kwargs, base, scales, covs, fit_values)
                    for b in batches)
            for part in parts:
                reps.extend(part)
                update(len(part))
        boot = kblock_results(self, reps, [n for n in names if n in bounded],
                              method=method, alpha=float(alpha))
        warn_weak_gap(boot)
        return boot

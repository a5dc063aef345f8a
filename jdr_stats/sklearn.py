"""scikit-learn interface: the joint reduction as a transformer.

``pip install 'jdr_stats[sklearn]'``.  :class:`JointDimReductionTransformer`
splits the columns of ``X`` into the two blocks (given with ``block_a`` /
``block_b`` or ``blocks``; by default the first half of the columns and the
rest), fits :class:`jdr_stats.JointDimReduction` to ``(y, a, b)`` and
transforms ``X`` to the ``2 * rank`` reduced features, so that the
reduction can sit in a ``Pipeline`` and its rank be tuned by
``GridSearchCV``.  It passes scikit-learn's ``check_estimator`` with its
default parameters.  With
``blocks=[cols_1, cols_2, cols_3, ...]`` (three or more) it fits the K-block
estimator and transforms to every block's reduced features.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

try:
    from sklearn.base import BaseEstimator, TransformerMixin
    from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data
except ImportError as exc:  # pragma: no cover - depends on the install
    raise ImportError(
        "jdr_stats.sklearn needs scikit-learn >= 1.6: pip install 'jdr_stats[sklearn]'"
    ) from exc

from .io._data import check_not_text
from .model import JointDimReduction

__all__ = ["JointDimReductionTransformer", "expected_failed_checks"]

# The checks of sklearn.utils.estimator_checks that fit on data with three
# columns (blocks of one and two columns): a rank above 1 cannot be fitted.
_NARROW_DATA_CHECKS = (
    "check_dict_unchanged", "check_dont_overwrite_parameters",
    "check_estimators_fit_returns_self", "check_estimators_nan_inf",
    "check_estimators_overwrite_params", "check_estimators_pickle",
    "check_f_contiguous_array_estimator", "check_fit2d_predict1d",
    "check_fit_check_is_fitted", "check_fit_idempotent", "check_fit_score_takes_y",
    "check_methods_sample_order_invariance", "check_methods_subset_invariance",
    "check_n_features_in", "check_pipeline_consistency", "check_readonly_memmap_input",
    "check_transformer_data_not_an_array", "check_transformer_general",
    "check_transformer_preserve_dtypes", "check_sample_weights_pandas_series",
    "check_sample_weights_not_an_array", "check_sample_weights_list",
    "check_sample_weights_shape", "check_sample_weights_not_overwritten",
)


def expected_failed_checks(estimator: JointDimReductionTransformer) -> dict[str, str]:
    """The scikit-learn estimator checks ``estimator`` cannot pass, with the reason.

    For ``check_estimator(est, expected_failed_checks=expected_failed_checks(est))``
    (or ``parametrize_with_checks(..., expected_failed_checks=expected_failed_checks)``).
    With the default parameters none is listed: integer sample weights
    equal repeated rows (the OAS shrinkage and the ``whitening="auto"``
    choice count the observations whole-number weights stand for).  At a
    larger rank the checks whose data have three columns cannot be met:
    the default split gives blocks of one and two columns, and the rank is
    at most the width of the narrower block (the fit raises a ValueError
    saying so), and the checks that fit 15 rows (the sample-weight
    equivalence: at most 15 distinct rows, however many copies) have fewer
    than the fit's minimum of ``2 (rank + 1)^2``.
    """
    out: dict[str, str] = {}
    if getattr(estimator, "rank", 1) == 1:
        return out
    reason = (
        f"rank={estimator.rank} exceeds the narrower block of the check's 3-column "
        "data (blocks of 1 and 2 columns); the estimator passes this check at rank=1"
    )
    out.update({name: reason for name in _NARROW_DATA_CHECKS})
    need = 2 * (estimator.rank + 1) ** 2  # JointDimReduction.fit's minimum number of rows
    if need > 15:
        out["check_n_features_in_after_fitting"] = (
            f"rank={estimator.rank} needs 2 (rank + 1)^2 = {need} rows "
            "(JointDimReduction.fit) and the check fits 15; the estimator passes this "
            "check at rank=1")
        out["check_sample_weight_equivalence_on_dense_data"] = (
            f"rank={estimator.rank} needs 2 (rank + 1)^2 = {need} rows and the check's "
            "weighted fit has at most 15 distinct rows (the repeated fit more copies): "
            "copies of a row add no information to the fit's R-squared, so the minimum "
            "counts distinct rows; the estimator passes this check at rank=1")
    return out


class JointDimReductionTransformer(TransformerMixin, BaseEstimator):
    """Joint dimension reduction of two column blocks as a transformer.

    Parameters
    ----------
    rank : int
        Dimension ``r`` of each block's subspace (default 1); the output has
        ``2 r`` columns.  At most the width of the narrower block.  Three or more
        ``blocks``: also a dict by block name (``{"block1": 2, ...}``) or
        ``"auto"`` (each block's rank by its per-block tests).  Rank 0 (given,
        or ``"auto"`` where the tests find no evidence of a link) gives no
        output column for that block (``transform`` of every block at rank 0:
        ``n_samples x 0``).
    block_a, block_b : list of str or int, optional
        Columns of ``X`` forming block a and block b: names (``X`` a
        DataFrame) or positions; if only one is given, the other is the
        remaining columns.  Without either (and without ``blocks``) the
        columns are split by ``split``.
    standardize : bool
        Whiten each block: ``True`` fits with ``whitening="auto"`` (the sample
        covariance for narrow blocks, OAS shrinkage for wide ones), ``False``
        with ``whitening="none"`` (see :meth:`jdr_stats.JointDimReduction.fit`).
    sparsity : (int, int) or None
        Numbers of variables ``(s1, s2)`` kept by the sparse estimator.
    split : {"half"} or None
        How the columns are split when no block is given.  ``"half"`` (the
        default): the first ``n_features // 2`` columns are block a and the
        rest block b, so that the transformer works with its defaults (in
        ``check_estimator``, on a ``ColumnTransformer``'s output); order the
        columns accordingly, or name the blocks, since which columns form a
        block is a property of the data.  None: ``fit`` raises a
        ``ValueError`` unless a block is given.  Ignored when a block is
        given.
    blocks : list of column lists, optional
        The blocks in order, ``[cols_1, cols_2, ...]`` (names or
        positions).  Two blocks are the same as ``block_a=cols_1,
        block_b=cols_2`` (not with them); three or more fit the K-block
        estimator (:meth:`jdr_stats.JointDimReduction.from_blocks`, blocks
        named ``block1, block2, ...``), ``rank`` then an int for every block,
        a dict by those names or ``"auto"``, and the output every block's
        reduced features.
    independent_blocks : bool
        ``False`` fits the joint estimator for correlated blocks (see
        :meth:`jdr_stats.JointDimReduction.fit`).

    Attributes
    ----------
    results_ : JDRResults
        The fit on the training data.
    directions_a_, directions_b_ : ndarray
        Bases of the estimated subspaces (original coordinates).
    columns_a_, columns_b_ : ndarray of int
        Positions of the two blocks' columns in ``X``.
    mean_a_, mean_b_ : ndarray
        Training means the features are centred at.
    singular_values_ : ndarray
        (Two blocks; the attributes above are two-block ones.)
    block_columns_, block_directions_, block_means_ : list of ndarray
        Three or more blocks: each block's column positions, directions
        (original coordinates, ``n_k x r_k``) and training means.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        When ``X`` was a DataFrame with string column names.

    Examples
    --------
    >>> import numpy as np
    >>> import jdr_stats as jdr
    >>> from jdr_stats.sklearn import JointDimReductionTransformer
    >>> sim = jdr.simulate.bilinear(1000, 4, 3, 1, seed=0)
    >>> X = sim.frame.drop(columns="y")
    >>> tr = JointDimReductionTransformer(rank=1, block_a=["a0", "a1", "a2", "a3"])
    >>> tr.fit(X, sim.y).transform(X).shape
    (1000, 2)
    >>> list(tr.get_feature_names_out())
    ['a_dir1', 'b_dir1']

    Class labels as ``y`` (a categorical response, its classes the slices)
    and case weights:

    >>> labels = np.where(sim.y > 0, "high", "low")
    >>> w = np.ones(1000)
    >>> JointDimReductionTransformer().fit(X, labels, sample_weight=w).transform(X).shape
    (1000, 2)
    """

    def __init__(
        self,
        rank: int = 1,
        block_a: Any = None,
        block_b: Any = None,
        standardize: bool = True,
        sparsity: tuple[int, int] | None = None,
        split: Literal["half"] | None = "half",
        blocks: Any = None,
        independent_blocks: bool = False,
    ) -> None:
        self.rank = rank
        self.block_a = block_a
        self.block_b = block_b
        self.standardize = standardize
        self.sparsity = sparsity
        self.split = split
        self.blocks = blocks
        self.independent_blocks = independent_blocks

    # -- blocks -------------------------------------------------------------
    def _positions(self, spec: Any, argname: str, n_features: int) -> np.ndarray:
        items = [spec] if isinstance(spec, (str, int, np.integer)) else list(spec)
        if not items:
            raise ValueError(f"{argname} must name at least one column; got {spec!r}")
        names = getattr(self, "feature_names_in_", None)
        out = []
        for item in items:
            if isinstance(item, str):
                if names is None:
                    raise ValueError(
                        f"{argname} names column {item!r}, but X has no column names "
                        "(pass a DataFrame, or give column positions)"
                    )
                hits = np.flatnonzero(names == item)
                if hits.size == 0:
                    raise ValueError(f"{argname}: X has no column {item!r}; it has {list(names)}")
                out.append(int(hits[0]))
            elif isinstance(item, (int, np.integer)) and not isinstance(item, bool):
                if not -n_features <= int(item) < n_features:
                    raise ValueError(
                        f"{argname}: column position {item} is out of range for X "
                        f"with {n_features} columns"
                    )
                out.append(int(item) % n_features)
            else:
                raise TypeError(
                    f"{argname} must hold column names or positions; got {item!r}"
                )
        if len(set(out)) != len(out):
            raise ValueError(f"{argname} lists a column twice: {spec!r}")
        return np.asarray(out, dtype=int)

    def _blocks(self, n_features: int) -> tuple[np.ndarray, np.ndarray]:
        # blocks=[cols_1, cols_2] is block_a=cols_1, block_b=cols_2
        spec_a, spec_b, arg_a, arg_b = self.block_a, self.block_b, "block_a", "block_b"
        if self.blocks is not None:
            if self.block_a is not None or self.block_b is not None:
                raise ValueError("give blocks=[...] or block_a/block_b, not both")
            if isinstance(self.blocks, (str, int)) or len(self.blocks) < 2:
                raise ValueError(
                    "blocks must list the columns of each block, [cols_1, cols_2, ...]: "
                    f"two or more blocks; got {self.blocks!r}")
            spec_a, spec_b = self.blocks[0], self.blocks[1]
            arg_a, arg_b = "blocks[0]", "blocks[1]"
        if n_features < 2:
            raise ValueError(
                f"X has {n_features} feature(s) (n_features = {n_features}); the joint "
                "reduction needs at least one column in each of two blocks"
            )
        everything = np.arange(n_features)
        if self.split not in (None, "half"):
            raise ValueError(f'split must be None or "half"; got {self.split!r}')
        if spec_a is None and spec_b is None:
            if self.split is None:
                raise ValueError(
                    "block_a and block_b are both None: say which columns of X form "
                    "block a (block_a=[...]) or block b (block_b=[...]), or pass "
                    f'split="half" to take the first {n_features // 2} of the '
                    f"{n_features} columns as block a and the rest as block b"
                )
            half = n_features // 2
            return everything[:half], everything[half:]
        ia = None if spec_a is None else self._positions(spec_a, arg_a, n_features)
        ib = None if spec_b is None else self._positions(spec_b, arg_b, n_features)
        if ia is None:
            assert ib is not None  # both None returned above
            ia = np.setdiff1d(everything, ib)
        if ib is None:
            ib = np.setdiff1d(everything, ia)
        if ia.size == 0 or ib.size == 0:
            raise ValueError("each block needs at least one column; one of them is empty")
        both = np.intersect1d(ia, ib)
        if both.size:
            raise ValueError(f"columns {both.tolist()} are in both {arg_a} and {arg_b}")
        return ia, ib

    def _kblocks(self, n_features: int) -> list[np.ndarray] | None:
        """The column positions of three or more ``blocks`` (None for two)."""
        if self.blocks is None or isinstance(self.blocks, (str, int)) or len(self.blocks) < 3:
            return None
        if self.block_a is not None or self.block_b is not None:
            raise ValueError("give blocks=[...] or block_a/block_b, not both")
        out = [self._positions(spec, f"blocks[{k}]", n_features)
               for k, spec in enumerate(self.blocks)]
        for i in range(len(out)):
            for j in range(i + 1, len(out)):
                both = np.intersect1d(out[i], out[j])
                if both.size:
                    raise ValueError(f"columns {both.tolist()} are in both blocks[{i}] and "
                                     f"blocks[{j}]")
        return out

    def _fit_kblocks(self, X: np.ndarray, y: np.ndarray, columns: list[np.ndarray],
                     weights: np.ndarray | None) -> JointDimReductionTransformer:
        names = [f"block{k + 1}" for k in range(len(columns))]
        model = JointDimReduction.from_blocks(
            y, {n: X[:, idx] for n, idx in zip(names, columns, strict=True)}, weights=weights)
        res = model.fit(self.rank, whitening="auto" if self.standardize else "none",
                        sparsity=self.sparsity, independent_blocks=self.independent_blocks)
        self.results_ = res
        self.block_columns_ = columns
        self.block_directions_ = [res.directions[n].to_numpy() for n in names]
        self.block_means_ = [res.block_means[n] for n in names]
        return self

    # -- estimator API ------------------------------------------------------
    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> JointDimReductionTransformer:
        """Fit the joint reduction of ``y`` on the two column blocks of ``X``.

        Parameters
        ----------
        X : array_like, shape (n_samples, n_features)
            Numeric data; string or object columns are refused.
        y : array_like, shape (n_samples,) or (n_samples, q)
            The response, read as :class:`jdr_stats.JointDimReduction` reads
            it (``response="auto"``): numbers, class labels (strings,
            booleans, a categorical; the classes are the slices) or ``q``
            numeric columns (a multivariate response).
        sample_weight : array_like, shape (n_samples,), optional
            Frequency weights, nonnegative.  As in scikit-learn, a weight of
            zero leaves its row out of the fit (the model itself takes
            positive weights only), and an integer weight ``k`` is the same
            as ``k`` copies of the row.

        Returns
        -------
        self
        """
        check_not_text(X, "X")
        X, y = validate_data(self, X, y, multi_output=True, y_numeric=False,
                             dtype="numeric")
        y = _response(y)
        weights = None
        if sample_weight is not None:
            weights = _check_sample_weight(sample_weight, X, ensure_non_negative=True)
            keep = weights > 0
            if not keep.all():  # a row of weight zero is left out (scikit-learn's rule)
                X, y, weights = X[keep], y[keep], weights[keep]
        if X.shape[0] < 2:
            raise ValueError(
                f"the joint reduction needs several samples; got n_samples = {X.shape[0]}"
            )
        for attr in ("block_columns_", "block_directions_", "block_means_"):
            self.__dict__.pop(attr, None)  # a refit of two blocks after K blocks
        kcols = self._kblocks(X.shape[1])
        if kcols is not None:
            return self._fit_kblocks(X, y, kcols, weights)
        ia, ib = self._blocks(X.shape[1])
        model = JointDimReduction(y, X[:, ia], X[:, ib], weights=weights)
        res = model.fit(self.rank, whitening="auto" if self.standardize else "none",
                        sparsity=self.sparsity, independent_blocks=self.independent_blocks)
        self.results_ = res
        self.columns_a_, self.columns_b_ = ia, ib
        self.directions_a_ = np.asarray(res.estimate.dir_a)
        self.directions_b_ = np.asarray(res.estimate.dir_b)
        self.mean_a_, self.mean_b_ = (np.asarray(m) for m in res.block_means)
        self.singular_values_ = res.singular_values
        return self

    def transform(self, X: Any) -> np.ndarray:
        """The ``2 * rank`` reduced features of ``X`` (for three or more
        blocks, every block's ``r_k`` features in block order).

        Returns
        -------
        ndarray, shape (n_samples, 2 * rank) or (n_samples, sum r_k)
            Columns ``a_dir1..a_dirr, b_dir1..b_dirr`` (three or more blocks:
            ``block1_dir1, ..., blockK_dir1, ...``; a DataFrame after
            ``set_output(transform="pandas")``).
        """
        check_is_fitted(self, "results_")
        check_not_text(X, "X")
        X = validate_data(self, X, reset=False, dtype="numeric")
        if hasattr(self, "block_columns_"):  # three or more blocks
            return np.hstack([(X[:, idx] - mean) @ d for idx, mean, d in zip(
                self.block_columns_, self.block_means_, self.block_directions_, strict=True)])
        fa = (X[:, self.columns_a_] - self.mean_a_) @ self.directions_a_
        fb = (X[:, self.columns_b_] - self.mean_b_) @ self.directions_b_
        return np.hstack([fa, fb])

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        """Names of the output features: ``a_dir1.., b_dir1..``."""
        check_is_fitted(self, "results_")
        if hasattr(self, "block_columns_"):
            return np.asarray([f"block{k + 1}_dir{j + 1}"
                               for k, d in enumerate(self.block_directions_)
                               for j in range(d.shape[1])], dtype=object)
        r = self.directions_a_.shape[1]
        return np.asarray(
            [f"a_dir{k + 1}" for k in range(r)] + [f"b_dir{k + 1}" for k in range(r)],
            dtype=object,
        )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True  # y is needed: supervised reduction
        tags.target_tags.multi_output = True  # q response columns, as the model takes
        tags.input_tags.allow_nan = False
        return tags


def _response(y: np.ndarray) -> np.ndarray:
    """``y`` as the model reads it: a column vector as a vector, an object
    array of numbers as floats (class labels stay labels)."""
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.dtype == object:
        try:
            return y.astype(float)
        except (TypeError, ValueError):  # labels: the model's categorical response
            return y
    return y

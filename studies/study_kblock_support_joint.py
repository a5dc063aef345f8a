"""False discovery rate and power of the default K-block support tests.

Question: the joint estimator's variable tests (``drop1``), conditional
(each row on its block's rank-``r_k`` basis fitted without the variable),
marginal (the whole row) and their Bonferroni combination, in a
selection by Benjamini-Hochberg at 0.1 over all blocks' variables: do
they keep the FDR, and which finds a block whose signal is carried by one
variable (the conditional basis without it is noise)?

Designs, K = 3 blocks, rank 1 each:

* ``dense3``: widths (12, 15, 12), m = 1000, 3 active variables per
  block, ``y = u1 u2 + u2 u3 + u1 u2 u3 + 0.5 e`` (``u_k = x_k^T beta_k``).
* ``sole``: widths (6, 6, 6), m = 600, ``y = a0 b1 + a0 c2 + 0.5 e``: each
  block's signal in one variable.
* ``sole-wide``: as ``sole`` with widths (12, 15, 12), m = 1000.

Blocks Gaussian or t(5) (independent unit-variance columns).  Reported
per test: mean FDP with its Monte Carlo SE, mean power, and the rejection
rate at 0.05 of the inactive variables' tests.  ``combined`` is the
default of ``drop1()`` and ``select_support``; the marginal test reads
Hotelling's F(df, m - df), and ``marginal-chi2`` refers the same statistic
to chi2(df).

Run: ``python studies/study_kblock_support_joint.py [reps]`` (default 200);
results in ``studies/results/study_kblock_support_joint.txt``.
"""

import sys
import time
import warnings

import numpy as np
from scipy import stats
from statsmodels.stats.multitest import multipletests

import jdr_stats as jdr

DESIGNS = {"dense3": ((12, 15, 12), 1000), "sole": ((6, 6, 6), 600),
           "sole-wide": ((12, 15, 12), 1000)}


def simulate(design, dist, rng):
    widths, m = DESIGNS[design]
    if dist == "t5":
        xs = [rng.standard_t(5, size=(m, n)) / np.sqrt(5 / 3) for n in widths]
    else:
        xs = [rng.normal(size=(m, n)) for n in widths]
    if design == "dense3":
        active = [np.arange(n) < 3 for n in widths]
        u = []
        for x in xs:
            b = np.zeros(x.shape[1])
            b[:3] = rng.normal(size=3)
            u.append(x @ (b / np.linalg.norm(b)))
        y = u[0] * u[1] + u[1] * u[2] + u[0] * u[1] * u[2]
    else:
        active = [np.arange(n) == k for k, n in enumerate(widths)]
        y = xs[0][:, 0] * xs[1][:, 1] + xs[0][:, 0] * xs[2][:, 2]
    y = y + 0.5 * rng.normal(size=m)
    return y, xs, np.concatenate(active), m


def pvalues(res, m):
    """The library's three tests and, for the record, the marginal statistic
    against chi2(df) (its reference before Hotelling's F)."""
    marg = res.drop1(test="marginal").table
    return {"combined": res.drop1().table["pvalue"].to_numpy(),
            "conditional": res.drop1(test="conditional").table["pvalue"].to_numpy(),
            "marginal": marg["pvalue"].to_numpy(),
            "marginal-chi2": stats.chi2.sf(marg["statistic"].to_numpy(),
                                           marg["df"].to_numpy())}


def run(reps, seed=20261203):
    rng = np.random.default_rng(seed)
    out = {}
    for design in DESIGNS:
        for dist in ("gauss", "t5"):
            acc = {}
            t0 = time.time()
            for _ in range(reps):
                y, xs, active, m = simulate(design, dist, rng)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    res = jdr.JointDimReduction.from_blocks(
                        y, dict(zip("abc", xs))).fit(1)
                for name, p in pvalues(res, m).items():
                    sel = multipletests(p, alpha=0.1, method="fdr_bh")[0]
                    acc.setdefault(name, []).append(
                        ((sel & ~active).sum() / max(sel.sum(), 1),
                         (sel & active).sum() / active.sum(),
                         np.mean(p[~active] <= 0.05)))
            for name, rows in acc.items():
                a = np.asarray(rows)
                out[design, dist, name] = (a[:, 0].mean(), a[:, 0].std(ddof=1) / np.sqrt(reps),
                                           a[:, 1].mean(), a[:, 2].mean(),
                                           a[:, 2].std(ddof=1) / np.sqrt(reps))
            print(design, dist, f"{time.time() - t0:.0f} s", flush=True)
    return out


def main():
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    out = run(reps)
    lines = [f"study_kblock_support_joint: {reps} reps, K = 3, rank 1, joint estimator, "
             "BH at 0.1 over all blocks' variables",
             f"{'design':10s} {'blocks':6s} {'test':12s} {'FDR':>6s} {'MC SE':>6s} "
             f"{'power':>6s} {'size@.05':>8s} {'MC SE':>6s}"]
    for (design, dist, name), (f, fse, pw, sz, szse) in out.items():
        lines.append(f"{design:10s} {dist:6s} {name:12s} {f:6.3f} {fse:6.3f} {pw:6.3f} "
                     f"{sz:8.3f} {szse:6.3f}")
    text = "\n".join(lines)
    print(text)
    with open("studies/results/study_kblock_support_joint.txt", "w") as fh:
        fh.write(text + "\n")


if __name__ == "__main__":
    main()

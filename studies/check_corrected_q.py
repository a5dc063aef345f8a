"""The corrected reference (theory 6d) for a response of q > 1 columns.

For H0: r <= k at the true rank (k = r), over seeded samples: the mean of
Lambda_k - tau against the mean of the self-influence term B, and the
rejection rates at 5% of the per-row reference (section 6, the default for
q > 1 before issue 19's extension) and of the corrected reference (forced
whatever d/m is).  Responses: two Gaussian columns sharing the signal
("multi"), skewed ones ("multi-exp": exp(t/2) and exp(-t/2) plus noise), a
three-class categorical response cut from it (q = 2 whitened indicators)
and one with a rare class (about 80/15/5%, "categorical-rare"); Gaussian,
t(5) or standardised Gamma(2) blocks; signal t a sum of r products a_j b_j.
Also the power against H0: r <= r - 1 of both references.  Run from the repository root::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. nice -n 5 \\
        python studies/check_corrected_q.py [--reps R] [--only I ...]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd

import jdr_stats as jdr
from jdr_stats.core._hosvd import complement_statistic, hosvd, whitened_crosses
from jdr_stats.core._linalg import block_whitenings
from jdr_stats.inference._rank_stats import _whiten
from jdr_stats.inference._robust_core import robust_moments, robust_pvalue, rotated_first

SETTINGS = (  # response, blocks, m, n1, n2, r
    ("multi", "gaussian", 1000, 6, 5, 1),
    ("multi", "t5", 1000, 6, 5, 1),
    ("categorical", "gaussian", 1000, 6, 5, 1),
    ("categorical", "t5", 1000, 6, 5, 1),
    ("multi", "t5", 2000, 12, 12, 2),
    ("categorical", "t5", 2000, 12, 12, 2),
    ("categorical", "gaussian", 3000, 20, 20, 2),
    ("multi", "gaussian", 3000, 20, 20, 2),
    ("categorical-rare", "t5", 2000, 10, 10, 2),
    ("multi-exp", "gaussian", 2000, 10, 10, 2),
    ("categorical-rare", "gamma", 1000, 10, 10, 2),
    ("multi-exp", "gamma", 1000, 10, 10, 2),
)


def draw(rng, kind, blocks, m, n1, n2, r):
    a, b = jdr.simulate.draw_blocks(m, n1, n2, blocks, seed=rng)
    t = np.sum(a[:, :r] * b[:, :r], axis=1) / np.sqrt(r)
    if kind == "multi":
        y = np.column_stack([t + rng.standard_normal(m), 0.5 * t + rng.standard_normal(m)])
    elif kind == "multi-exp":
        y = np.column_stack([np.exp(t / 2) + rng.standard_normal(m),
                             np.exp(-t / 2) + rng.standard_normal(m)])
    elif kind == "categorical-rare":  # classes of about 80%, 15% and 5%
        e = t + rng.standard_normal(m)
        y = pd.Categorical(np.digitize(e, np.quantile(e, [0.8, 0.95])))
    else:
        y = pd.Categorical(np.digitize(t + rng.standard_normal(m), [-0.5, 0.5]))
    return y, a, b


def one(i, kind, blocks, m, n1, n2, r, reps, seed):
    rng = np.random.default_rng([seed, i])
    out = []
    t0 = time.time()
    for _ in range(reps):
        y, a, b = draw(rng, kind, blocks, m, n1, n2, r)
        model = jdr.JointDimReduction(y, a, b)
        data, mom = model.data, model.data.moments()
        wh = block_whitenings(mom, data.names["exog_a"], data.names["exog_b"])
        xq = whitened_crosses(mom.cross_q, *wh)
        u, _, v, _ = hosvd(xq)
        yw, aw, bw = _whiten(data, mom, wh).in_memory()
        yc = yw - yw.mean(axis=0)
        chunks = lambda yc=yc, ar=aw @ u, br=bw @ v: [(yc, ar, br)]  # noqa: E731
        first = rotated_first(chunks)
        stat = complement_statistic(xq, u, v, r, m) / first.s2
        new = robust_moments(chunks, first, r, reference="corrected")
        old = robust_moments(chunks, first, r, reference="per-row")
        below = complement_statistic(xq, u, v, r - 1, m) / first.s2
        pw = [robust_pvalue(below, robust_moments(chunks, first, r - 1, reference=ref))[0]
              for ref in ("per-row", "corrected")]
        out.append((stat - new.tau, new.bias, robust_pvalue(stat, old)[0],
                    robust_pvalue(stat, new)[0], *pw))
    x = np.array(out)
    z, bias, p_old, p_new, pw_old, pw_new = x.T
    se = np.sqrt(0.05 * 0.95 / reps)
    print(f"[{i}] {kind:<11} {blocks:<8} m={m} {n1}x{n2} r={r} reps={reps} "
          f"({time.time() - t0:.0f} s)\n"
          f"    mean(Lambda - tau) {z.mean():.2f} +- {z.std(ddof=1) / np.sqrt(reps):.2f}   "
          f"mean B {bias.mean():.2f}\n"
          f"    size at 5% (MC SE {se:.3f}, band [{0.05 - 2.5 * se - 0.005:.3f}, "
          f"{0.05 + 2.5 * se + 0.005:.3f}]): per-row {np.mean(p_old <= 0.05):.3f}   "
          f"corrected {np.mean(p_new <= 0.05):.3f}\n"
          f"    power against H0: r <= {r - 1} at 5%: per-row {np.mean(pw_old <= 0.05):.3f}   "
          f"corrected {np.mean(pw_new <= 0.05):.3f}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=500)
    ap.add_argument("--seed", type=int, default=20261127)
    ap.add_argument("--only", type=int, nargs="*")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    print(f"# reps={args.reps}, seed [{args.seed}, setting index]")
    for i, setting in enumerate(SETTINGS):
        if args.only is None or i in args.only:
            one(i, *setting, args.reps, args.seed)


if __name__ == "__main__":
    main()

"""Level of the largest-root test of independent blocks (premises guide, section 1).

In a small sample (m < n1 n2) the premise checks test the independence of the
two blocks by the largest sample canonical correlation against Johnstone's
Tracy-Widom approximation (``jdr_stats.diagnostics._largest_root``).  This
script draws independent blocks (Gaussian, t5 and exponential columns) and
prints the rejection rates at 1%, 5% and 10% (2000 samples each, seed 1);
``mixed``: half Bernoulli(0.3), half exponential columns.
Run from the repository root::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python studies/check_largest_root.py
"""

from __future__ import annotations

import numpy as np

from jdr_stats.diagnostics import _largest_root

SETTINGS = [(150, 22, 26, "norm"), (100, 10, 10, "norm"), (60, 25, 25, "norm"),
            (150, 22, 26, "t5"), (150, 22, 26, "exp"), (400, 30, 40, "norm"), (60, 5, 40, "norm"),
            (150, 22, 26, "mixed"), (60, 25, 25, "mixed")]


def largest_cc(a: np.ndarray, b: np.ndarray) -> float:
    qa = np.linalg.qr(a - a.mean(0))[0]
    qb = np.linalg.qr(b - b.mean(0))[0]
    return float(np.linalg.svd(qa.T @ qb, compute_uv=False)[0])


def main(reps: int = 2000) -> None:
    rng = np.random.default_rng(1)
    print(f"# largest-root test of independent blocks: {reps} samples per line, seed 1; "
          f"MC SE at 0.01 / 0.05 / 0.10: {np.sqrt(.01 * .99 / reps):.4f} / "
          f"{np.sqrt(.05 * .95 / reps):.4f} / {np.sqrt(.1 * .9 / reps):.4f}")
    print(f"{'m':>4} {'n1':>3} {'n2':>3} {'columns':<8} {'P(p<=.01)':>10} {'P(p<=.05)':>10} "
          f"{'P(p<=.10)':>10}")
    for m, n1, n2, dist in SETTINGS:
        ps = np.empty(reps)
        for i in range(reps):
            if dist == "norm":
                a, b = rng.standard_normal((m, n1)), rng.standard_normal((m, n2))
            elif dist == "t5":
                a, b = rng.standard_t(5, (m, n1)), rng.standard_t(5, (m, n2))
            elif dist == "exp":
                a, b = rng.exponential(size=(m, n1)), rng.exponential(size=(m, n2))
            else:  # half Bernoulli(0.3), half exponential columns (the mixed blocks)
                a, b = (np.hstack([rng.binomial(1, 0.3, (m, n // 2)),
                                   rng.exponential(size=(m, n - n // 2))]) for n in (n1, n2))
            ps[i] = _largest_root(largest_cc(a, b), m, n1, n2)
        rates = [(ps <= t).mean() for t in (0.01, 0.05, 0.10)]
        print(f"{m:>4} {n1:>3} {n2:>3} {dist:<8} " + " ".join(f"{r:>10.4f}" for r in rates),
              flush=True)



def statsmodels_roy(reps: int = 1000) -> None:
    """The library alternative: statsmodels' Roy's greatest root with its F
    approximation (an upper bound on the statistic's law), on independent
    Gaussian blocks (m = 150, 22 + 26 variables, seed 3)."""
    from statsmodels.multivariate.multivariate_ols import multivariate_stats

    rng = np.random.default_rng(3)
    m, n1, n2 = 150, 22, 26
    rej = 0
    for _ in range(reps):
        a, b = rng.standard_normal((m, n1)), rng.standard_normal((m, n2))
        qa = np.linalg.qr(a - a.mean(0))[0]
        qb = np.linalg.qr(b - b.mean(0))[0]
        rho2 = np.linalg.svd(qa.T @ qb, compute_uv=False) ** 2
        table = multivariate_stats(rho2, n1, n2, m - 1 - n2)
        rej += table.loc["Roy's greatest root", "Pr > F"] <= 0.05
    print(f"# statsmodels' Roy's greatest root (F approximation), m = {m}, {n1} + {n2} Gaussian "
          f"columns, {reps} independent samples: rejection rate at 5% = {rej / reps:.3f}")


if __name__ == "__main__":
    main()
    statsmodels_roy()

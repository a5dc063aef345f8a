"""Why the spectral test's projections are cross-fitted (theory 6e).

At n1 = n2 = 60, m = 2000, r = 2 (``simulate.scenario`` designs), k = 2:
rejections at 5% of T_k = m s_3^2 / s_y^2 against sign flips of the left
bound ``||(I - P) X_lin||^2`` with three choices of P:

* ``own``: the top-2 left singular vectors of the sample's own X_lin;
  ``own, two-sided``: the complement block ``(I - P) X_lin (I - Q)``, both
  from the sample's own singular vectors;
* ``true``: the population signal directions in the sample-whitened
  coordinates (``L^T U``, L the Cholesky factor of the sample covariance);
  also the rejections of the bound itself (``||(I - P_true) X_lin||^2``)
  against its flips, which should be alpha;
* ``cross``: the library's cross-fitted projections (both sides, the min);
* ``refit``: no bound, the sample's rank-2 part plus the flipped noise,
  ``s_3(X_2 + N*)^2`` (a sign-flip bootstrap of the statistic itself).

Run from the repository root::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python studies/check_spectral_projection.py
"""

from __future__ import annotations

import warnings

import numpy as np

import jdr_stats as jdr
from jdr_stats.inference import _rank_spectral as sp
from jdr_stats.inference._rank_stats import _whiten

FLIPS, REPS, K = 99, 100, 2


def _pv(t: float, null: np.ndarray) -> float:
    return float((1 + np.sum(null >= t)) / (null.size + 1))


def one(sim, rng: np.random.Generator) -> tuple[float, float, float, float]:
    model = jdr.JointDimReduction(sim.y, sim.a, sim.b)
    w = _whiten(model.data, model.moments())
    y, a, b = w.in_memory()
    m, scale = w.m, w.m * w.var_y
    stat = m * w.s[K] ** 2 / w.var_y
    x = a.T @ (y[:, None] * b) / m
    # the whitening maps a - abar to a' = L^{-1}(a - abar): signal directions L^T U
    ac = sim.a - sim.a.mean(0)
    lchol = np.linalg.cholesky(ac.T @ ac / m)
    p_true = np.linalg.qr(lchol.T @ sim.U)[0]
    p_own, q_own = w.u[:, :K], w.v[:, :K]
    bound_true = m * np.linalg.norm(x - p_true @ (p_true.T @ x), 2) ** 2 / w.var_y
    own, own2, true, refit = (np.empty(FLIPS) for _ in range(4))
    x_k = (w.u[:, :K] * w.s[:K]) @ w.v[:, :K].T
    for j in range(FLIPS):
        g = a.T @ ((y * rng.choice([-1.0, 1.0], size=m))[:, None] * b)
        left = g - p_own @ (p_own.T @ g)
        own[j] = np.linalg.norm(left, 2) ** 2 / scale
        own2[j] = np.linalg.norm(left - (left @ q_own) @ q_own.T, 2) ** 2 / scale
        refit[j] = m * np.linalg.svd(x_k + g / m, compute_uv=False)[K] ** 2 / w.var_y
        true[j] = np.linalg.norm(g - p_true @ (p_true.T @ g), 2) ** 2 / scale
    cross = sp.spectral_null(w, K, FLIPS, rng)[:, 0].min(axis=1)
    return (_pv(stat, own), _pv(stat, own2), _pv(stat, true), _pv(bound_true, true),
            _pv(stat, cross), _pv(stat, refit))


def main() -> None:
    warnings.simplefilter("ignore")
    print(f"# check_spectral_projection: 60 x 60, m = 2000, r = k = 2, {REPS} samples, "
          f"{FLIPS} flips, seed [20261127, design index]")
    print(f"{'design':<13} {'own P':>7} {'own, two-sided':>15} {'true P':>7} "
          f"{'bound vs flips (true P)':>24} {'cross-fitted':>13} {'refit':>6}")
    for di, name in enumerate(("exp-response", "gaussian", "t5-hetero", "binary-rare")):
        rng = np.random.default_rng([20261127, di])
        out = np.array([one(jdr.simulate.scenario(name, 2000, 60, 60, K, seed=rng), rng)
                        for _ in range(REPS)]) <= 0.05
        print(f"{name:<13} {out[:, 0].mean():>7.3f} {out[:, 1].mean():>15.3f} "
              f"{out[:, 2].mean():>7.3f} {out[:, 3].mean():>24.3f} {out[:, 4].mean():>13.3f} "
              f"{out[:, 5].mean():>6.3f}", flush=True)


if __name__ == "__main__":
    main()

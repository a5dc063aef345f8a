"""Which estimator each call fits: the estimator asked for, or an error.

Question: on data where the former policy replaced the joint estimator by
the per-block one (two blocks between max(n1, n2) + 2 and n1 + n2 + 2 rows;
three highly correlated blocks with fewer than 20 rows per column; five
blocks whose rank="auto" jackknife exceeds its memory budget), which
estimator do ``fit(1)``, ``fit("auto")`` and ``fit(1, independent_blocks=
False)`` fit, and how far apart are the directions of ``fit(1)`` and
``fit("auto")``?

Designs (seeded, one data set each): two blocks of 20 and 15 columns, 30
rows; three blocks of 10 columns sharing a latent column (correlation 0.8),
150 rows; five blocks of 6 columns (correlation 0.3), 600 rows.  Public API
only; the angles are computed here from the directions.

Run: ``PYTHONPATH=. python studies/check_one_estimator.py``
(results in ``studies/results/check_one_estimator.txt``).
"""

from __future__ import annotations

import warnings

import numpy as np

import jdr_stats as jdr


def largest_angle(a: np.ndarray, b: np.ndarray) -> float:
    qa, _ = np.linalg.qr(np.asarray(a, float))
    qb, _ = np.linalg.qr(np.asarray(b, float))
    s = np.clip(np.linalg.svd(qa.T @ qb, compute_uv=False), -1.0, 1.0)
    return float(np.degrees(np.arccos(s.min())))


def blocks(m: int, widths: tuple[int, ...], rho: float, seed: int):
    rng = np.random.default_rng(seed)
    shared = rng.normal(size=(m, 1))
    xs = [np.sqrt(1 - rho) * rng.normal(size=(m, n)) + np.sqrt(rho) * shared for n in widths]
    u = [x[:, 0] for x in xs]
    pairs = [(0, 1)] if len(u) == 2 else [(0, 1), (1, 2)] if len(u) == 3 \
        else [(0, 1), (2, 3), (3, 4)]
    y = sum(u[i] * u[j] for i, j in pairs) + 0.5 * rng.normal(size=m)
    return y, xs


def estimator(res) -> str:
    s = res.settings
    return s["estimator"] if isinstance(s, dict) else s.estimator.name


def directions(res, name: str, k: int):
    if isinstance(res.settings, dict):
        return res.directions[name].to_numpy()
    return np.asarray(res.directions_a if k == 0 else res.directions_b)


def run(label: str, model) -> None:
    calls = {"fit(1)": lambda: model.fit(1),
             "fit(1, independent_blocks=False)": lambda: model.fit(1, independent_blocks=False),
             'fit("auto")': lambda: model.fit("auto")}
    fits = {}
    print(label)
    for what, call in calls.items():
        try:
            fits[what] = call()
            print(f"  {what:34s} {estimator(fits[what])}")
        except ValueError as exc:
            print(f"  {what:34s} ValueError: {' '.join(str(exc).split())[:110]}...")
    if 'fit("auto")' in fits:
        one, auto = fits["fit(1)"], fits['fit("auto")']
        ang = [largest_angle(directions(one, n, k)[:, :1], directions(auto, n, k)[:, :1])
               for k, n in enumerate(model.block_names)]
        print(f"  largest angle fit(1) vs fit(\"auto\"), first direction per block (deg): "
              f"{np.round(ang, 1).tolist()}")


def main() -> None:
    warnings.simplefilter("ignore")
    y, (a, b) = blocks(30, (20, 15), 0.0, 1)
    run("two blocks 20 + 15, m = 30", jdr.JointDimReduction(y, a, b))
    y, xs = blocks(150, (10, 10, 10), 0.8, 2)
    run("three blocks of 10, correlation 0.8, m = 150",
        jdr.JointDimReduction.from_blocks(y, xs))
    y, xs = blocks(600, (6,) * 5, 0.3, 0)
    run("five blocks of 6, correlation 0.3, m = 600",
        jdr.JointDimReduction.from_blocks(y, xs))


if __name__ == "__main__":
    main()

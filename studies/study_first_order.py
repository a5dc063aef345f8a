"""The pooled fit's first-order piece: the first moment ``E[y z_k]``
(``fit(r, main_effects=True)``, the default ``interactions="stein"``) against
the exact piece of one least squares regression
(``fit(r, main_effects=True, interactions="regression")``).

Designs: K blocks (K = 2: widths 6 + 6; K = 3: 5 + 5 + 5) correlated through
one shared factor ``f`` added to every column, ``x_k = g_k + f 1^T``, all
entries i.i.d. standardised draws of one kind:

* ``gaussian``: standard normal;
* ``gamma``: standardised centred Gamma(2) (skewness 1.41);
* ``t5``: standardised t(5) (symmetric, heavy tailed).

Links (``e ~ N(0, 1)``; block ``k``'s true span in brackets):

* ``bilinear``: K = 2 ``y = a0 b0 + e`` [a0], [b0]; K = 3
  ``y = a0 b0 + b0 c0 + e`` [a0], [b0], [c0];
* ``main``: ``y = a0 + 0.5 b0 (+ 0.5 c0) + e``, the same spans;
* ``both``: the bilinear link plus ``0.5 (a1 + b1 (+ c1))``, spans
  [a0, a1], [b0, b1] (, [c0, c1]) (rank 2 per block).

Per cell (kind, K, m, link) and estimator, over R seeded samples: ``angle``,
the mean over samples of the largest principal angle (degrees, Euclidean,
over every block) between the fit's directions (the true rank per block)
and the true spans; ``ME rate``, the share of (sample, block) pairs whose
``main_effects_test()`` (the summary's test: the robust score test of
``E[y z_k] = 0`` given the other blocks; for the regression fit the HC2 Wald
test of the linear coefficients given the other blocks and the products) has
p < 0.05: its size under
``bilinear``, its power under ``main`` and ``both``.  ``+-`` is one Monte
Carlo standard error.

Part 2 (``--part isolate``): which pieces move the angle.  On the same
sample (m = 4000, links ``bilinear`` and ``both``) three sets of pooled
pieces, combined by the fit's weighting: the default's (``stein``: first
moments, pairs' cross moments, Hermite-corrected K-way moment), the
default's with the first moments replaced by the regression's first-order
piece (``hybrid``), and the regression's; the mean largest angle between
each block's leading eigenvectors and ``G_k U_k``, in the whitened
coordinates.  ``hybrid`` is not a fit the library offers; it isolates the
first-order piece's share.

Command (about 20 minutes, one BLAS thread; part 2 alone
``--part isolate``)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. \\
        python studies/study_first_order.py > studies/results/study_first_order.txt
"""

from __future__ import annotations

import argparse
import platform
import subprocess
import sys
import time
import warnings

import numpy as np

import jdr_stats as jdr
from jdr_stats.core.kestimate import factors_from_pieces, piece_scale
from jdr_stats.core.tensor import cross_tensor, hermite_corrected, pieces
from jdr_stats.fitting._kwhiten import _cross_cov, _whiten_arrays
from jdr_stats.inference.first_order import (
    first_order_regression,
    metric_maps,
    regression_pieces,
)
from jdr_stats.metrics import principal_angles

SEED = 20261202
KINDS = ("gaussian", "gamma", "t5")
LINKS = ("bilinear", "main", "both")
WIDTHS = {2: (6, 6), 3: (5, 5, 5)}


def _entries(kind: str, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    if kind == "gaussian":
        return rng.standard_normal(shape)
    if kind == "gamma":
        return (rng.gamma(2.0, 1.0, size=shape) - 2.0) / np.sqrt(2.0)
    if kind == "t5":
        return rng.standard_t(5, size=shape) / np.sqrt(5.0 / 3.0)
    raise ValueError(kind)


def design(kind: str, widths: tuple[int, ...], m: int,
           rng: np.random.Generator) -> list[np.ndarray]:
    f = _entries(kind, rng, (m, 1))
    return [_entries(kind, rng, (m, n)) + f for n in widths]


def response(link: str, xs: list[np.ndarray], rng: np.random.Generator) -> np.ndarray:
    m = xs[0].shape[0]
    inter = sum(xs[k][:, 0] * xs[k + 1][:, 0] for k in range(len(xs) - 1))
    main = xs[0][:, 0] + 0.5 * sum(x[:, 0] for x in xs[1:])
    second = 0.5 * sum(x[:, 1] for x in xs)
    y = {"bilinear": inter, "main": main, "both": inter + second}[link]
    return np.asarray(y + rng.standard_normal(m))


def truth(link: str, widths: tuple[int, ...]) -> list[np.ndarray]:
    r = 2 if link == "both" else 1
    return [np.eye(n)[:, :r] for n in widths]


def one(kind: str, K: int, m: int, link: str, rng: np.random.Generator
        ) -> dict[str, tuple[float, list[bool]]]:
    widths = WIDTHS[K]
    xs = design(kind, widths, m, rng)
    y = response(link, xs, rng)
    names = [f"x{k}" for k in range(K)]
    model = jdr.JointDimReduction.from_blocks(y, dict(zip(names, xs, strict=True)))
    true = truth(link, widths)
    r = true[0].shape[1]
    out = {}
    for est, kw in (("stein", {}), ("regression", {"interactions": "regression",
                                                   "whitening": "sample"})):
        res = model.fit(r, main_effects=True, **kw)
        ang = max(float(np.degrees(principal_angles(res.directions[n].to_numpy(), t).max()))
                  for n, t in zip(names, true, strict=True))
        pv = res.main_effects_test().table["pvalue"].to_numpy()
        out[est] = (ang, [bool(p < 0.05) for p in pv])
    return out


def isolate(kind: str, K: int, m: int, link: str, rng: np.random.Generator
            ) -> dict[str, float]:
    """Part 2: the largest angle (degrees, in the whitened coordinates, to
    ``G_k U_k``) of three sets of pooled pieces on the same sample: all of
    the default's (``stein``), the default's pairs and K-way piece with the
    regression's first-order piece (``hybrid``), all of the regression's."""
    widths = WIDTHS[K]
    xs = design(kind, widths, m, rng)
    y = response(link, xs, rng)
    names = [f"x{k}" for k in range(K)]
    labels = [[f"{n}{j}" for j in range(w)] for n, w in zip(names, widths, strict=True)]
    zs = _whiten_arrays(xs, None, names, labels, "sample", "joint")[0]
    yc = y - y.mean()
    wn = np.full(m, 1.0 / m)
    cc = _cross_cov(zs, wn)
    stein = {}
    for piece in pieces(K, True):
        sub = [zs[j] for j in piece]
        stein[piece] = (hermite_corrected(yc, sub, {(a, b): cc[(piece[a], piece[b])]
                                                    for a in range(len(piece))
                                                    for b in range(a + 1, len(piece))})
                        if len(piece) >= 3 else cross_tensor(yc, sub))
    reg = regression_pieces(first_order_regression(y, xs), zs, xs)
    hybrid = {p: (reg[p] if len(p) == 1 else t) for p, t in stein.items()}
    scales = {p: piece_scale(yc, zs, p) for p in stein}
    g = metric_maps(zs, xs)
    true = [gk @ t for gk, t in zip(g, truth(link, widths), strict=True)]
    out = {}
    for name, tensors in (("stein", stein), ("hybrid", hybrid), ("regression", reg)):
        fac = factors_from_pieces(tensors, scales, list(widths), 1, weighting="sqrt")
        r = true[0].shape[1]
        out[name] = max(float(np.degrees(principal_angles(f[:, :r], t).max()))
                        for f, t in zip(fac.factors, true, strict=True))
    return out


def part_isolate(reps: int) -> None:
    print()
    print("## Part 2: which pieces move the angle (whitened coordinates, m = 4000, "
          f"{reps} samples per cell)")
    print()
    print("| design | K | link | stein | hybrid (regression first-order piece, "
          "stein pairs) | regression |")
    print("|---|---|---|---|---|---|")
    cell = 1000
    for K in (2, 3):
        for kind in KINDS:
            for link in ("bilinear", "both"):
                cell += 1
                rng = np.random.default_rng([SEED, cell])
                vals: dict[str, list[float]] = {"stein": [], "hybrid": [], "regression": []}
                for _ in range(reps):
                    for k, v in isolate(kind, K, 4000, link, rng).items():
                        vals[k].append(v)
                print(f"| {kind} | {K} | {link} | {fmt_mean(vals['stein'])} | "
                      f"{fmt_mean(vals['hybrid'])} | {fmt_mean(vals['regression'])} |",
                      flush=True)


def fmt_rate(x: list[bool]) -> str:
    p = float(np.mean(x))
    return f"{p:.3f}+-{np.sqrt(p * (1 - p) / len(x)):.3f}"


def fmt_mean(x: list[float]) -> str:
    v = np.asarray(x)
    return f"{v.mean():6.2f}+-{v.std(ddof=1) / np.sqrt(v.size):.2f}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, nargs=3, default=(100, 60, 30),
                        help="samples at m = 1000, 4000, 16000")
    parser.add_argument("--part", choices=("all", "isolate"), default="all")
    parser.add_argument("--isolate-reps", type=int, default=40)
    args = parser.parse_args()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    print("# study_first_order: the pooled fit's first-order piece, stein vs regression")
    print(f"# command: OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python "
          f"studies/study_first_order.py {' '.join(sys.argv[1:])}")
    print(f"# commit {commit}; python {platform.python_version()}, numpy {np.__version__}; "
          f"{platform.machine()}")
    print(f"# samples per cell (m = 1000, 4000, 16000): {tuple(args.reps)}; seed {SEED}")
    start = time.time()
    if args.part == "isolate":
        part_isolate(args.isolate_reps)
        print()
        print(f"# {time.time() - start:.0f} s")
        return
    print()
    print("| design | K | m | link | angle stein | angle regression | ME rate stein "
          "| ME rate regression |")
    print("|---|---|---|---|---|---|---|---|")
    cell = 0
    for K in (2, 3):
        for kind in KINDS:
            for m, reps in zip((1000, 4000, 16000), args.reps, strict=True):
                for link in LINKS:
                    cell += 1
                    rng = np.random.default_rng([SEED, cell])
                    ang: dict[str, list[float]] = {"stein": [], "regression": []}
                    rej: dict[str, list[bool]] = {"stein": [], "regression": []}
                    for _ in range(reps):
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            res = one(kind, K, m, link, rng)
                        for est, (a, rj) in res.items():
                            ang[est].append(a)
                            rej[est] += rj
                    print(f"| {kind} | {K} | {m} | {link} | {fmt_mean(ang['stein'])} | "
                          f"{fmt_mean(ang['regression'])} | {fmt_rate(rej['stein'])} | "
                          f"{fmt_rate(rej['regression'])} |", flush=True)
    part_isolate(args.isolate_reps)
    print()
    print(f"# {time.time() - start:.0f} s")


if __name__ == "__main__":
    main()

"""Cost of the spectral rank test (theory 6e): one sign flip against one fit.

Bilinear design, r = 5, for each n1 = n2 = n and m given as n:m: the best
of three plain fits, the setup of one row (the two halves' directions) and
the time per flip (20 flips at k = 5), and their ratios to the fit; then
the time per flip of one pass of the ranks 0..6 (the rows a rank selection
at r = 5 computes, sharing the signs) against seven single rows.  With
``q=Q`` (Q > 1) the response has Q columns (the bilinear response and Q - 1
independent noise columns; theory 6g), the fit is the HOSVD and the flips
those of the q-column test.  Run from the repository root::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python studies/bench_spectral.py 100:10000 300:10000 500:10000 1000:10000
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python studies/bench_spectral.py q=3 100:10000 300:10000
"""

from __future__ import annotations

import sys
import time
import warnings

import numpy as np

import jdr_stats as jdr
from jdr_stats.inference import _rank_spectral as sp
from jdr_stats.inference._rank_stats import _whiten


def _whitened_q(model):
    """The whitened rows of a q-column response as the q-column test builds them."""
    from jdr_stats.core._linalg import block_whitenings
    from jdr_stats.inference._rank_stats import WhitenedDesign, _whiten

    data = model.data
    mom = data.moments()
    wh = block_whitenings(mom, data.names["exog_a"], data.names["exog_b"])
    y, a, b = _whiten(data, mom, wh).in_memory()
    n1, n2 = a.shape[1], b.shape[1]
    return WhitenedDesign(m=data.nobs, var_y=1.0, u=np.eye(n1), s=np.ones(min(n1, n2)),
                     v=np.eye(n2), a=a, b=b, y=y)


def main() -> None:
    warnings.simplefilter("ignore")
    q = next((int(a[2:]) for a in sys.argv[1:] if a.startswith("q=")), 1)
    sizes = [tuple(int(v) for v in s.split(":")) for s in sys.argv[1:]
             if not s.startswith("q=")] or [(300, 10_000)]
    print(f"# bench_spectral: numpy {np.__version__}; q = {q}; "
          f"load {open('/proc/loadavg').read().split()[:3]}")
    print(f"{'n':>5} {'m':>7} {'fit s':>8} {'setup s':>8} {'flip s':>8} {'flip x fit':>11} "
          f"{'pass 0..6 s':>12} {'pass / 7 rows':>14}")
    for n, m in sizes:
        sim = jdr.simulate.bilinear(m, n, n, 5, seed=n)
        y = sim.y if q == 1 else np.column_stack(
            [sim.y, np.random.default_rng(n).standard_normal((m, q - 1))])
        model = jdr.JointDimReduction(y, sim.a, sim.b)
        fits = []
        for _ in range(3):
            start = time.perf_counter()
            model.fit(5)
            fits.append(time.perf_counter() - start)
        w = _whiten(model.data, model.moments()) if q == 1 else _whitened_q(model)
        start = time.perf_counter()
        work = sp._SpectralBatch(w, 5, np.random.default_rng(0))
        setup = time.perf_counter() - start
        start = time.perf_counter()
        work([np.random.default_rng(i) for i in range(20)])
        flip = (time.perf_counter() - start) / 20
        work = sp._SpectralBatch(w, range(0, 7), np.random.default_rng(0))
        start = time.perf_counter()
        work([np.random.default_rng(i) for i in range(20)])
        both = (time.perf_counter() - start) / 20
        print(f"{n:>5} {m:>7} {min(fits):>8.3f} {setup:>8.3f} {flip:>8.3f} "
              f"{flip / min(fits):>11.2f} {both:>12.3f} {both / (7 * flip):>14.2f}", flush=True)


if __name__ == "__main__":
    main()

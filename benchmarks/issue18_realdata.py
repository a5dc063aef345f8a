"""Issue 18 before/after: the default analysis of two real data sets the project does not bundle.

scikit-learn's diabetes data (y = progression; a = age, sex, bmi, bp; b = s1..s6) and
statsmodels' fair data (y = affairs; a = age, educ, occupation, religious; b = rate_marriage,
yrs_married, children, occupation_husb): fit("auto"), fit(rank, sparsity="auto", seed=1),
bootstrap(199, seed=2), and the fit of a block whose rows were shuffled (misaligned pandas
indexes).  Run from the repository root:

    PYTHONPATH=. OMP_NUM_THREADS=1 python benchmarks/issue18_realdata.py

Recorded output: benchmarks/results/issue18_realdata.txt (the same script run on the
commit before the change gave the "before" figures of the issue note).
"""
import warnings
import numpy as np, pandas as pd
import jdr_stats as jdr
from sklearn.datasets import load_diabetes
import statsmodels.api as sm

warnings.simplefilter("always")
d = load_diabetes(as_frame=True, scaled=False).frame
A, B = ["age", "sex", "bmi", "bp"], ["s1", "s2", "s3", "s4", "s5", "s6"]
f = sm.datasets.fair.load_pandas().data
FA, FB = ["age", "educ", "occupation", "religious"], ["rate_marriage", "yrs_married", "children", "occupation_husb"]
for name, y, a, b in (("diabetes", d.target, d[A], d[B]), ("fair", f.affairs, f[FA], f[FB])):
    print("=" * 30, name)
    m = jdr.JointDimReduction(y, a, b)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        res = m.fit("auto")
        print(res.summary())
        sp = m.fit(max(res.rank, 1), sparsity="auto", seed=1)
        print("sparse kept:", sp.support_a, sp.support_b)
        bs = res.bootstrap(n_boot=199, seed=2)
        print(bs.sentence("a")); print(bs.sentence("b"))
    for x in w:
        print("WARNING:", x.category.__name__, str(x.message)[:300])
    try:
        mis = jdr.JointDimReduction(y, a.sample(frac=1, random_state=0), b).fit(1)
        print("misaligned rows: fitted, singular values", np.round(mis.singular_values[:3], 3))
    except Exception as e:
        print("misaligned rows:", type(e).__name__, str(e)[:200])

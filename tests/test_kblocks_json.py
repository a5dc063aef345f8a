"""The K-block results' JSON export is strict JSON at every K."""

import json

import numpy as np
import pytest

import jdr_stats as jdr


def _strict(text):
    return json.loads(text, parse_constant=lambda c: pytest.fail(f"non-JSON constant {c}"))


@pytest.mark.parametrize("widths", [(4, 3), (4, 3, 3), (3, 3, 2, 2)])
def test_kblock_to_json_is_strict_json(widths, tmp_path):
    """A rank-"auto" fit's tables hold NaN df (the per-block tests have
    none); to_json writes them as null, so a strict reader parses the text
    and the file, and the ranks survive."""
    rng = np.random.default_rng(3)
    m = 400
    xs = [rng.normal(size=(m, n)) for n in widths]
    y = xs[0][:, 1] * xs[-1][:, 1] + rng.normal(size=m)
    for k in range(len(xs) - 1):
        y += xs[k][:, 0] * xs[k + 1][:, 0]
    names = [f"x{k}" for k in range(len(widths))]
    model = jdr.JointDimReduction.from_blocks(y, dict(zip(names, xs)))
    # unequal ranks take the K-block engine at K = 2 as well
    rank = {n: (2 if k == 0 else 1) for k, n in enumerate(names)}
    for res in (model.fit("auto"), model.fit(rank)):
        res.rank_tests()
        text = res.to_json(tmp_path / "fit.json")
        assert "NaN" not in text and "Infinity" not in text
        doc = _strict(text)
        assert _strict((tmp_path / "fit.json").read_text()) == doc
        ranks = res.rank if isinstance(res.rank, dict) else dict.fromkeys(names, res.rank)
        got = doc["rank"] if isinstance(doc["rank"], dict) else dict.fromkeys(names, doc["rank"])
        assert {n: int(v) for n, v in got.items()} == ranks

"""The notes of a default summary fit on one screen (issue 36, item 6): at
most 20 lines at the summary's own width and 220 words; the explanations
are on the guide page "Reading the summary" (studies/check_summary_length.py
measures the real data sets)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import jdr_stats as jdr
from jdr_stats.datasets import load_ais
from jdr_stats.exceptions import RankSelectionWarning

MAX_LINES, MAX_WORDS = 20, 220
GUIDE = Path(__file__).resolve().parents[1] / "docs" / "guide" / "summary.md"


def _notes(summary) -> list[str]:  # type: ignore[no-untyped-def]
    """The printed notes: the lines under the last rule."""
    lines = str(summary).splitlines()
    last = max(i for i, line in enumerate(lines) if line and set(line) == {"="})
    return lines[last + 1:]


def _ais_auto():  # type: ignore[no-untyped-def]
    ais = load_ais()
    blood = np.log(ais[["RCC", "WCC", "Hc", "Hg", "Ferr"]]).add_prefix("log")
    body = np.log(ais[["Ht", "Wt", "SSF", "Bfat"]]).add_prefix("log")
    with pytest.warns(RankSelectionWarning, match="fitting r = 1"):  # as the vignette says
        return jdr.JointDimReduction(ais["LBM"], blood, body).fit("auto")


def _wide_two_classes():  # type: ignore[no-untyped-def]
    """Shaped as nutrimouse: 40 rows, 120 + 21 columns, two classes of 20."""
    sim = jdr.simulate.bilinear(40, 120, 21, 2, seed=0)
    y = pd.Categorical(np.where(sim.y > np.median(sim.y), "high", "low"))
    return jdr.JointDimReduction(y, sim.a, sim.b).fit(2)


@pytest.mark.parametrize("make", [_ais_auto, _wide_two_classes], ids=["ais_auto", "p_gg_n"])
def test_notes_fit_on_one_screen(make):  # type: ignore[no-untyped-def]
    res = make()
    summary = res.summary()
    notes = _notes(summary)
    words = sum(len(line.split()) for line in notes)
    assert len(notes) <= MAX_LINES and words <= MAX_WORDS, (len(notes), words)
    text = " ".join(notes)
    # what stays: R-squared, what the reduction sees, the main effects, the
    # premises, the whitening and estimator choices, signs, the guide page
    for key in ("R-squared:", "What this reduction can see", "results.main_effects_test()",
                "Premises (guide page 'Checking the premises')", "Whitening:", "Estimator:",
                "Signs and rotations within a subspace are arbitrary",
                "guide page 'Reading the summary'"):
        assert key in text, key
    # the structured choices keep their full reasons
    choices = res.to_dict()["choices"]
    assert {"whitening", "estimator"} <= set(choices)
    assert all(c["reason"] for c in choices.values())


def test_p_gg_n_notes_keep_the_tests_and_the_caveat():
    text = " ".join(" ".join(_notes(_wide_two_classes().summary())).split())
    assert ("No association (H0: y independent of (a, b); exact permutation test of "
            "interactions and main effects): p =") in text
    assert "descriptive only at this width" in text
    assert "CHECK: small sample" in text and "no rank test runs" in text
    assert "Response classes (first = reference): high (20), low (20)." in text


def test_guide_page_holds_what_left_the_notes():
    """The explanations the notes used to carry are on the guide page."""
    page = " ".join(GUIDE.read_text().split())
    for fact in ("share` is `s_k^2 / sum_j s_j^2", "per standard deviation",
                 "Bartlett's test of independence are undefined",
                 "under-cover with few rows and correlated blocks",
                 "each block is replaced by its residual on the other block",
                 "the first class is the reference and the others enter as indicator columns"):
        assert fact in page, fact

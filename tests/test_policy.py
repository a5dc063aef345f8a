"""jdr_stats.policy: every automatic choice from the data's shape only, with
its reason and inputs; the table of defaults covers every threshold."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import jdr_stats as jdr
from jdr_stats import policy


def test_rank_method_rule_is_the_ratio_alone():
    lim = policy.RANK_COMBINED_MIN_RATIO
    # any number of rows: m = 2e3 or 2e7 at the same ratio give the same test
    for m in (2_000, 20_000_000):
        n = int(np.ceil(np.sqrt(lim * m)))
        assert policy.rank_method(m, n, n).name == "combined"
        assert policy.rank_method(m, n - 2, n - 2).name == "robust"
    c = policy.rank_method(400, 50, 50, q=2)
    assert c.name == "combined" and c.inputs["ratio"] == 2 * 50 * 50 / 400
    assert "q n1 n2 / m (q = 2) = 12.5 >= 5" in c.reason
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.name = "robust"  # type: ignore[misc]


def test_whitening_and_reference_rules():
    assert policy.whitening(1000, 50, 3).name == "sample"
    wide = policy.whitening(1000, 51, 3)
    assert wide.name == "shrinkage" and wide.inputs["ratio"] == 0.051
    assert [policy.robust_reference(d, 100).name for d in (20, 21, 500, 501)] == [
        "corrected", "per-row", "per-row", "both"]


def test_defaults_table_lists_every_threshold_once():
    """The docs' table of defaults is generated from defaults_table(): it
    names every constant of policy, with its current value."""
    rows = policy.defaults_table()
    names = [name for name, _, _ in rows]
    assert len(names) == len(set(names))
    constants = {n for n in policy.__all__ if n.isupper()}
    assert set(names) == constants
    for name, value, what in rows:
        assert getattr(policy, name) == value and what


def test_the_kblock_choices_read_the_thresholds_when_they_run(monkeypatch):
    """The K-block choices live in a module of their own; a threshold set on
    jdr_stats.policy still decides them (read at call time, not copied)."""
    assert policy.kblock_route(500, (5, 5, 5)).name == "tensor"
    monkeypatch.setattr(policy, "KBLOCK_TENSOR_MAX_ENTRIES", 100)
    assert policy.kblock_route(500, (5, 5, 5)).name == "sketch"
    monkeypatch.setattr(policy, "KBLOCK_INFLUENCE_MAX_ENTRIES", 10)
    with pytest.raises(ValueError, match="10 entries|> 10"):
        policy.kblock_influence("joint", False, 500, 10_000)
    monkeypatch.setattr(policy, "AUTO_SAMPLE_MAX_RATIO", 1.0)
    assert "<= 1.0" in policy.kblock_whitening(100, (10, 10, 10), "joint").reason
    monkeypatch.setattr(policy, "KBLOCK_WEIGHTING", "unit")
    assert policy.kblock_weighting().name == "unit"


def test_fit_settings_hold_the_choices_and_the_summary_prints_them():
    sim = jdr.simulate.bilinear(400, 6, 5, 2, seed=3)
    res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit("auto", seed=1)
    s = res.settings
    # the default (joint) estimator whitens both blocks together: its width
    # is (n1 + n2) / m
    assert s.whitening == policy.whitening(400, 6, 5, joint=True)
    assert s.estimator == policy.block_estimator(False, 400, 6, 5, s.whitening.name)
    assert s.rank_choice == policy.rank_method(400, 6, 5)
    assert s.rank_method == "robust" and s.alpha == 0.05 and s.standardize
    text = " ".join(str(res.summary()).split())
    # the summary prints each choice's short reason; the settings keep the full one
    assert s.whitening.short in text and "Rank method: robust (method='auto'" in text
    assert " ".join(s.estimator.short.split()) in text and s.rank_choice.short in text
    assert s.whitening.reason.startswith(s.whitening.short)
    assert res.to_dict()["choices"]["estimator"]["reason"] == s.estimator.reason
    given = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(2, whitening="diagonal")
    assert given.settings.whitening.reason == "given" and given.settings.rank_choice is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.alpha = 0.1  # type: ignore[misc]
    sd_a, sd_b = res.block_sds
    np.testing.assert_allclose(sd_a, sim.a.std(axis=0), rtol=1e-12)
    np.testing.assert_allclose(sd_b, sim.b.std(axis=0), rtol=1e-12)

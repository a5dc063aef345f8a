"""The single engines: one moments engine, one resampling engine, one knob module.

- the estimator's ``block_moments`` and ``jdr.Moments`` run the same
  computation (bit for bit), also on shifted data and tiny chunks; the
  per-block fit's one-pass route of rows in memory agrees with it to rounding;
- the pairs and Poisson bootstraps, the ladle and ``run_batches`` draw
  their randomness from ``jdr_stats.resampling._engine``;
- every chunk or memory knob is defined once, in ``jdr_stats.config``,
  and the modules read it from there.
"""

from __future__ import annotations

import ast
import pathlib

import numpy as np
import pytest

import jdr_stats as jdr
from jdr_stats import config, policy
from jdr_stats.resampling import _engine as _resampling
from jdr_stats.core._linalg import block_moments
from jdr_stats.core._moments_engine import pair_view
from jdr_stats.resampling._progress import progress_forwarder, replicate_generators, run_batches
from jdr_stats.streams._sources import ArraySource, default_batch_rows
from jdr_stats.core.moments import array_sums, chunk_sums, merge_sums
from jdr_stats.inference import poisson_bootstrap as pmod
from jdr_stats.inference.rank_robust import ladle_rank

ROOT = pathlib.Path(jdr.__file__).parent
FIELDS = ("mean_y", "var_y", "mean_a", "mean_b", "cov_a", "cov_b", "cross")


@pytest.fixture(scope="module")
def shifted():
    sim = jdr.simulate.bilinear(3000, 4, 3, 2, seed=5)
    # a large common offset: the engine centres each slice at its own means
    return sim.y + 1e3, sim.a * 3.0 + 1e6, sim.b - 5e5


# -- one moments engine --------------------------------------------------------
@pytest.mark.parametrize("chunk_bytes", [None, 8, 8 * 8 * 300])
def test_block_moments_is_the_moments_engine(shifted, monkeypatch, chunk_bytes):
    from jdr_stats.core import _linalg
    from jdr_stats.core import _moments_engine

    assert _linalg.block_moments is _moments_engine.block_moments
    if chunk_bytes is not None:
        monkeypatch.setattr(config, "CHUNK_BYTES", chunk_bytes)
        monkeypatch.setattr(config, "MIN_CHUNK_ROWS", 256)
    y, a, b = shifted
    w = np.random.default_rng(1).uniform(0.0, 2.0, y.size)
    for weights in (None, w):
        est = block_moments(y, a, b, weights)
        mom = jdr.Moments.from_arrays(y, a, b, weights).to_block_moments()
        for f in FIELDS:
            np.testing.assert_array_equal(getattr(est, f), getattr(mom, f), err_msg=f)


def test_engine_is_accurate_on_shifted_data(shifted, monkeypatch):
    y, a, b = shifted
    yc, ac, bc = y - y.mean(), a - a.mean(0), b - b.mean(0)
    want_cross = ac.T @ (yc[:, None] * bc) / y.size
    monkeypatch.setattr(config, "CHUNK_BYTES", 8)  # 256-row slices, 12 merges
    monkeypatch.setattr(config, "MIN_CHUNK_ROWS", 256)
    assert y.size > 10 * config.chunk_rows(8)
    got = block_moments(y, a, b)
    scale = np.abs(want_cross).max()
    np.testing.assert_allclose(got.cross, want_cross, rtol=0, atol=1e-9 * scale)
    want_cov = ac.T @ ac / y.size  # off-diagonal entries can be near zero
    np.testing.assert_allclose(got.cov_a, want_cov, rtol=1e-9, atol=1e-9 * np.abs(want_cov).max())


def test_merge_of_parts_equals_the_whole(shifted):
    y, a, b = shifted
    whole = pair_view(chunk_sums(y, (a, b), None))
    parts = pair_view(merge_sums(chunk_sums(y[:1234], (a[:1234], b[:1234]), None),
                                 chunk_sums(y[1234:], (a[1234:], b[1234:]), None)))
    assert parts.nobs == whole.nobs == y.size
    scale = np.abs(whole.m3_ayb).max()
    np.testing.assert_allclose(parts.m3_ayb, whole.m3_ayb, rtol=0, atol=1e-10 * scale)
    # rounding of the centred data (offset 1e6): relative to the largest entry
    np.testing.assert_allclose(parts.m2_a, whole.m2_a, rtol=0,
                               atol=1e-10 * np.abs(whole.m2_a).max())


def test_engine_flags_non_finite_and_covariances_false(shifted):
    y, a, b = shifted
    bad = a.copy()
    bad[10, 1] = np.nan
    assert array_sums(y, (bad, b), None) is None
    with pytest.raises(ValueError, match="finite"):
        block_moments(y, bad, b)
    mom = block_moments(y, a, b, covariances=False)
    assert np.isnan(mom.cov_a).all() and np.isnan(mom.cov_b).all()
    assert np.isfinite(mom.cross).all()
    with pytest.raises(ValueError, match="sum to zero"):
        block_moments(y, a, b, np.zeros(y.size))


def test_one_pass_route_equals_the_engine_to_rounding(shifted):
    """The per-block fit's one-pass moments of rows in memory are the
    engine's to rounding, on shifted data, weighted or not, in any slices."""
    from jdr_stats.core._moments_engine import one_pass_block_moments

    y, a, b = shifted
    w = np.random.default_rng(2).uniform(0.0, 2.0, y.size)
    for weights in (None, w):
        ref = block_moments(y, a, b, weights)
        for step in (None, 1, 257, y.size):
            got = one_pass_block_moments(y, a, b, weights, step=step)
            assert got.nobs == ref.nobs and got.has_covariances
            assert got.mean_y == pytest.approx(ref.mean_y, rel=1e-13)
            assert got.var_y == pytest.approx(ref.var_y, rel=1e-12)
            for f in ("mean_a", "mean_b", "cov_a", "cov_b", "cross"):
                want = getattr(ref, f)
                # the engine's own rounding on these shifted rows is about
                # 1e-9 of the largest entry (test_engine_is_accurate_on_shifted_data)
                np.testing.assert_allclose(getattr(got, f), want, rtol=0,
                                           atol=1e-9 * np.abs(want).max(), err_msg=f)
    lean = one_pass_block_moments(y, a, b, covariances=False)
    assert not lean.has_covariances and np.isnan(lean.cov_a).all() and np.isnan(lean.cov_b).all()
    np.testing.assert_array_equal(lean.cross, one_pass_block_moments(y, a, b).cross)


def test_one_pass_route_is_accurate_on_shifted_data(shifted):
    """The shifted sums keep the digits of the data: against the exact
    centred moments (extended precision), closer than 1e-11 of the largest
    entry, where the engine's merged slices of 256 rows are within 1e-9."""
    from jdr_stats.core._moments_engine import one_pass_block_moments

    y, a, b = shifted
    ld = np.longdouble
    yc, ac, bc = (x.astype(ld) - x.astype(ld).mean(axis=0) for x in (y, a, b))
    want_cross = np.einsum("i,ij,ik->jk", yc, ac, bc) / y.size
    want_cov = np.einsum("ij,ik->jk", ac, ac) / y.size
    got = one_pass_block_moments(y, a, b, step=256)
    assert float(np.abs(got.cross - want_cross).max()) < 1e-11 * float(np.abs(want_cross).max())
    assert float(np.abs(got.cov_a - want_cov).max()) < 1e-13 * float(np.abs(want_cov).max())


def test_one_pass_route_flags_non_finite_and_zero_weight(shifted):
    from jdr_stats.core._moments_engine import one_pass_block_moments

    y, a, b = shifted
    for k in (5, 2000):  # in the first slice (its shift) or after it
        bad = b.copy()
        bad[k, 1] = np.inf
        with pytest.raises(ValueError, match="finite"):
            one_pass_block_moments(y, a, bad, step=256)
    with pytest.raises(ValueError, match="finite"):
        one_pass_block_moments(np.where(np.arange(y.size) == 7, np.nan, y), a, b)
    with pytest.raises(ValueError, match="sum to zero"):
        one_pass_block_moments(y, a, b, np.zeros(y.size))
    for route in (block_moments, one_pass_block_moments):  # the same refusal by name
        with pytest.raises(ValueError, match="endog: the products of the response"):
            route(y * 1e290, a * 1e20, b)


def test_per_block_fit_takes_the_one_pass_route(shifted):
    """A per-block fit of rows in memory runs the one-pass route; its
    numbers are those of the engine's moments to rounding."""
    from jdr_stats.estimation import _estimate

    y, a, b = shifted
    model = jdr.JointDimReduction(y, a, b)
    res = model.fit(2, independent_blocks=True)
    mom = _estimate.fit_moments(model._data)
    assert np.array_equal(res.coef_matrix, _estimate.estimate(mom, 2).coef_matrix)
    ref = _estimate.estimate(block_moments(y, a, b), 2)
    np.testing.assert_allclose(res.singular_values, ref.singular_values, rtol=1e-8)


# -- one resampling engine -------------------------------------------------------
def test_poisson_bootstrap_weights_come_from_the_engine(monkeypatch):
    calls = []
    real = _resampling.poisson_weights

    def spy(entropy, block, n_boot):
        calls.append((entropy, block, n_boot))
        return real(entropy, block, n_boot)

    monkeypatch.setattr(policy, "BLOCK_ROWS", 256)
    monkeypatch.setattr(pmod, "poisson_weights", spy)
    rng = np.random.default_rng(0)
    y, a, b = rng.normal(size=600), rng.normal(size=(600, 3)), rng.normal(size=(600, 2))
    pmod.poisson_moments(ArraySource(y, a, b), 3, seed=11)
    entropy = _resampling.draw_entropy(11, 4)
    assert calls == [(entropy, 0, 3), (entropy, 1, 3), (entropy, 2, 3)]
    # the engine's weights of a block are a pure function of (seed, block)
    np.testing.assert_array_equal(real(entropy, 1, 3), real(entropy, 1, 3))
    assert real(entropy, 1, 3).shape == (3, 256)


def test_ladle_weights_come_from_the_engine(monkeypatch):
    from jdr_stats.inference import _ladle_criterion

    sim = jdr.simulate.bilinear(800, 4, 4, 1, seed=2)
    y, a, b = sim.y - sim.y.mean(), sim.a - sim.a.mean(0), sim.b - sim.b.mean(0)
    u, s, vt = np.linalg.svd(a.T @ (y[:, None] * b) / y.size)
    seen = []
    real = _resampling.poisson_row_weights

    def spy(rng, rows, n_boot):
        w = real(rng, rows, n_boot)
        seen.append(w)
        return w

    monkeypatch.setattr(_ladle_criterion, "poisson_row_weights", spy)
    ladle_rank(y, a, b, u, s, vt.T, n_boot=5, seed=3, batch_rows=300)
    drawn = np.hstack(seen)
    assert drawn.shape == (5, 800)
    # the same weights as one draw of all rows from the same seed: row by
    # row, whatever the chunks
    np.testing.assert_array_equal(drawn, real(np.random.default_rng(3), 800, 5))


def test_pairs_counts_and_replicate_generators_are_the_engines():
    rng = np.random.default_rng(4)
    c = _resampling.draw_counts(rng, 3, 50)
    assert c.shape == (3, 50) and (c.sum(axis=1) == 50).all()
    inner = _resampling.inner_counts(rng, c)
    assert ((inner > 0) <= (c > 0)).all() and (inner.sum(axis=1) == 50).all()
    entropy = _resampling.draw_entropy(9)
    gens = replicate_generators(9, 4)
    want = _resampling.child_generators(entropy, 0, 4)
    assert [g.random() for g in gens] == [g.random() for g in want]
    out = run_batches(lambda rngs: [g.random() for g in rngs], 4, seed=9, batch_size=3)
    flat = [x for batch in out for x in batch]
    assert flat == [g.random() for g in _resampling.child_generators(entropy, 0, 4)]


def test_worker_pool_serial_and_parallel():
    assert _resampling.n_workers(None) == 1 and _resampling.n_workers(1) == 1
    with _resampling.worker_pool(1) as pool:
        assert pool is None
    pytest.importorskip("joblib")
    with _resampling.worker_pool(2) as pool:
        if _resampling.n_workers(2) > 1:
            assert list(pool(iter([]))) == []


def test_progress_forwarder_counts_increments():
    seen = []
    fwd = progress_forwarder(seen.append)
    for done in (2, 5, 5, 9):
        fwd(done, 9)
    assert seen == [2, 3, 0, 4] and sum(seen) == 9


def test_no_module_repeats_an_engine_helper():
    """The helpers that existed twice now exist once."""
    once = {"_order_index": 0, "_entropy": 0, "_workers": 0, "_parallel": 0,
            "_draw_counts": 0, "_inner_tables": 0, "chunk_sums": 0, "merge_sums": 0}
    for path in ROOT.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and node.name in once:
                once[node.name] += 1
    assert once == {"_order_index": 0, "_entropy": 0, "_workers": 0, "_parallel": 0,
                    "_draw_counts": 0, "_inner_tables": 1, "chunk_sums": 1, "merge_sums": 1}


# -- one module of knobs, one of policy ---------------------------------------------
KNOB_WORDS = ("CHUNK", "BYTES", "FLOATS", "BATCH_ROWS", "BLOCK_ROWS", "PIECE_ROWS",
              "EXACT_DIM", "MAX_RATIO", "MIN_RATIO", "MIN_EDGE", "PAIR_SEED")


def test_every_knob_is_defined_in_config_or_policy_only():
    """No module but config (resources) and policy (result-determining
    thresholds) assigns a number to a knob-like name."""
    offenders = []
    for path in ROOT.rglob("*.py"):
        if path.name in ("config.py", "policy.py"):
            continue
        for node in ast.parse(path.read_text()).body:
            if not isinstance(node, (ast.Assign, ast.AnnAssign)):
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [t.id for t in targets if isinstance(t, ast.Name)]
            if any(w in n for n in names for w in KNOB_WORDS) and isinstance(
                    node.value, ast.Constant) and isinstance(node.value.value, (int, float)):
                offenders.append(f"{path.relative_to(ROOT)}: {names}")
    assert offenders == []


def _copies_at_import(tree: ast.Module) -> list[str]:
    """Module-level statements and default arguments that read config or
    policy when the module is imported (a copy that a later change misses)."""
    found = []

    def reads(node: ast.AST | None) -> bool:
        return node is not None and any(
            isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
            and n.value.id in ("config", "policy") and n.attr.isupper()
            for n in ast.walk(node))

    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and reads(node.value):
            found.append(ast.unparse(node))
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for d in [*node.args.defaults, *node.args.kw_defaults]:
                if reads(d):
                    found.append(f"{node.name}: default {ast.unparse(d)}")
    return found


def test_config_and_policy_are_read_at_run_time(monkeypatch):
    """Every module reads config and policy inside its functions: no
    module-level copy, no default argument evaluated at import."""
    offenders = {}
    for path in ROOT.rglob("*.py"):
        if path.name in ("config.py", "policy.py"):
            continue
        found = _copies_at_import(ast.parse(path.read_text()))
        if found:
            offenders[str(path.relative_to(ROOT))] = found
    assert offenders == {}
    # the derived knobs and the seeding block
    assert config.CHUNK_FLOATS * 8 == config.MEMORY_BUDGET
    assert config.FEATURE_BYTES == 2 * config.MEMORY_BUDGET
    assert config.COUNT_BYTES == 4 * config.MEMORY_BUDGET
    assert policy.BLOCK_ROWS == 1 << 14  # fixes the Poisson weights' and sign flips' seeding
    # the chunk size is read when used
    assert default_batch_rows(10) == config.CHUNK_BYTES // 80
    monkeypatch.setattr(config, "CHUNK_BYTES", 8 * 10 * 3000)
    assert default_batch_rows(10) == 3000
    assert default_batch_rows(1000) == config.MIN_CHUNK_ROWS
    assert ArraySource(np.zeros(5), np.zeros((5, 4)), np.zeros((5, 5))).batch_rows == 3000


def test_config_holds_resources_only():
    """The result-determining thresholds live in policy, not in config."""
    from jdr_stats import config as cfg

    for name in policy.__all__:
        if name.isupper():
            assert not hasattr(cfg, name), name
    for gone in ("RANK_COMBINED_MAX_WORK", "RANK_SPECTRAL_MIN_RATIO"):
        assert not hasattr(cfg, gone) and not hasattr(policy, gone)


def test_ladle_and_bootstrap_share_the_reweighted_moments(shifted):
    """weighted_moments (the ladle's bootstrap sums) equals the moments
    engine on each reweighting, however the rows are chunked."""
    y, a, b = shifted
    w = np.random.default_rng(6).poisson(1.0, size=(3, y.size)).astype(float)

    def chunks(step):
        return lambda: ((y[i:i + step], a[i:i + step], b[i:i + step])
                        for i in range(0, y.size, step))

    pos = [0]

    def weights(k):
        out = w[:, pos[0]:pos[0] + k]
        pos[0] += k
        return out

    got = pmod.weighted_moments(chunks(700), weights, 3)
    pos[0] = 0
    again = pmod.weighted_moments(chunks(y.size), weights, 3)
    for j in range(3):
        want = block_moments(y, a, b, w[j])
        for f in ("cov_a", "cov_b", "cross"):
            scale = np.abs(getattr(want, f)).max()
            np.testing.assert_allclose(getattr(got[j], f), getattr(want, f), rtol=0,
                                       atol=1e-9 * scale, err_msg=f)
            np.testing.assert_allclose(getattr(again[j], f), getattr(got[j], f), rtol=0,
                                       atol=1e-12 * scale, err_msg=f)

"""Pieces of the K-block fit's summary (:meth:`KBlockFit.summary`):
the header, the header's wrapped lists, a block's table of eigenvalues, the
table of the rank tests that chose the ranks and the notes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["_eigen_table", "_wrapped", "kblock_summary", "rank_tests_entry", "summary_info",
           "summary_notes"]


def rank_tests_entry(tables: Mapping[str, pd.DataFrame], names: Sequence[str],
                     full: bool) -> tuple[tuple[str, pd.DataFrame, str], str]:
    """The summary's table of every block's rank tests (rows ``"<block>:
    rank <= r"``) and the words on its reference (``df`` dropped where it is
    NaN throughout, unless ``full``)."""
    tabs = []
    for n in names:
        tab = tables[n].copy()
        tab.index = pd.Index([f"{n}: rank <= {k}" for k in tab.index])
        tabs.append(tab)
    tab, scaled = pd.concat(tabs), ""
    if not full and tab["df"].isna().all():  # the note says why no df
        tab, scaled = tab.drop(columns="df"), ", referred to scale * chi2(eff_df)"
    return ("H0", tab, "rank tests"), scaled


def _wrapped(key: str, items: list[str], width: int = 36) -> dict[str, str]:
    """``{key: text}`` for the summary's header, the comma-separated items
    wrapped onto rows of at most ``width`` characters (the rows after the
    first under blank keys), so that many blocks keep it 100 wide."""
    rows: list[str] = []
    for item in items:
        if rows and len(rows[-1]) + 2 + len(item) <= width:
            rows[-1] += ", " + item
        else:
            rows.append(item)
    rows = [r + ("," if i < len(rows) - 1 else "") for i, r in enumerate(rows)]
    return {(key if i == 0 else " " * i): r for i, r in enumerate(rows)}


def _eigen_table(values: pd.Series, rank: int) -> pd.DataFrame:
    """The leading eigenvalues of a block's combined Gram with their share
    and cumulative share: ``max(10, rank + 3)`` of them at most."""
    v = values.to_numpy(dtype=float)
    total = float(v.sum())
    share = v / total if total > 0 else np.full(v.shape, np.nan)
    top = min(v.size, max(10, rank + 3))
    return pd.DataFrame({"eigenvalue": v[:top], "share": share[:top],
                         "cumulative": np.cumsum(share)[:top]},
                        index=pd.Index(np.arange(1, top + 1), name="k"))


def summary_info(res: Any) -> dict[str, Any]:
    """The summary's header of the K-block fit ``res``: the model, the
    blocks, the estimator's choices and, where they apply, the rows' source
    and the sparsity."""
    m = res._model
    info: dict[str, Any] = {
        "Model:": "Joint dimension reduction, K blocks",
        **({"Main effects:": "pooled"} if res.main_effects else {}),
        **({"Interactions:": "orthogonal"} if res._orthogonal else {}),
        **({"Interactions:": "regression"}
           if res._settings.get("interactions") == "regression" else {}),
        "Dependent variable:": m.endog_name,
        "No. observations:": res._observations_text(),
        **_wrapped("Blocks:", [f"{n} ({len(res._labels(k))})"
                               for k, n in enumerate(res._names)]),
        **({} if len(set(res._ranks.values())) == 1 else  # else the headline's
           _wrapped("Ranks:", [f"{n}={r}" for n, r in res._ranks.items()])),
        "Estimator:": res._settings["estimator"],
        "Whitening:": res._settings["whitening"],
        "Route:": res._settings["route"]["name"],
        "Piece weights:": res._settings["weighting"]["name"],
        "Loadings:": "per-SD (largest 1)",
        "R-squared:": res._rsquared_text(),
    }
    if res._settings.get("streamed"):
        info["Rows:"] = f"streamed from {res._settings['streamed']}"
    if res.sparsity is not None:
        info["Sparsity:"] = ", ".join(f"{n}={s}" for n, s in res.sparsity.items())
    return info


def summary_notes(res: Any, full: bool, scaled: str) -> list[str]:
    """The summary's notes of the K-block fit ``res`` (``full``: the route's
    and the piece weights' reasons too; ``scaled``: the rank tests' scaling
    note)."""
    pieces_text = ("its first moment with y (main effects), its pairwise cross moments "
                   "with every other block" if res.main_effects
                   else "its pairwise cross moments with every other block")
    if len(res._names) >= 3:
        pieces_text += " and the K-way cross moment"
    influence = str((res._settings["influence"] or {}).get("reason", "")) \
        if res._tables is not None else ""
    out = [f"Estimator: {res._settings['estimator']} "
           f"({res._settings['estimator_reason']})."]
    if getattr(res, "_ladle", None) is not None:
        out.append("Ranks: the ladle estimator, each block's k of the smallest criterion "
                   "(results.rank_test_table; a criterion, not a test: no level); "
                   "results.rank_tests() tests them.")
    if res._tables is not None:
        out.append(f"Ranks: the {res._settings['rank_method']} tests of H0: rank_k <= r"
                   f"{scaled} (rows' influences: "
                   f"{influence if full else influence.split(' (theory page')[0]}).")
    if full:
        out.append(f"Each block's directions are the leading eigenvectors of its combined "
                   f"Gram: {pieces_text}, each scaled to unit null noise and weighted "
                   f"(theory page 'K blocks'). Route: {res._settings['route']['reason']}. "
                   f"Weights: {res._settings['weighting']['reason']}.")
    out.append(res._sees_note())
    if res.sparsity is not None:
        choice = res._settings.get("sparsity_choice")
        out.append(
            "Sparse fit: each block's variables kept by the two-step selection from the "
            "dense fit's pieces in partial-SD units, the estimator refitted on them"
            + (" (theory page 'K blocks', section 'Sparse fits')" if full else "")
            + (f"; counts chosen by {choice['reason']}" if choice else "") + ". "
            + " ".join(f"Selected, block {n}: {', '.join(v)}." if res._ranks[n]
                       else f"Block {n}: rank 0, nothing to select (all kept)."
                       for n, v in res.support.items()))
    out.append("Loadings: per-SD (each direction times its variable's SD, largest 1 per "
               "column), so units do not matter; raw directions: results.directions; signs "
               "and rotations are arbitrary." + ("" if full else
                                                 " More: summary(notes='full')."))
    return out


def kblock_summary(res: Any, notes: str, rank_tests: Any, loadings: str) -> Any:
    """The summary of the K-block fit ``res`` (:meth:`KBlockFit.summary`):
    each block's eigenvalues and per-SD loadings (``loadings="raw"``: its
    directions), the rank tests that chose the ranks or ``rank_tests``, the
    notes."""
    from ..inference._rank_results import RankTestResults
    from ..summary import build_summary

    if notes not in ("short", "full"):
        raise ValueError(f'notes must be "short" or "full"; got {notes!r}')
    if loadings not in ("sd", "raw"):
        raise ValueError(f'loadings must be "sd" or "raw"; got {loadings!r}')
    if rank_tests is not None and not (isinstance(rank_tests, RankTestResults)
                                       and set(rank_tests.tables or ()) == set(res._names)):
        raise ValueError("rank_tests must be the RankTestResults of this fit's rank_tests() "
                         f"(a table per block {list(res._names)}); got "
                         f"{type(rank_tests).__name__}")
    full = notes == "full"
    info = summary_info(res)
    tables: list[tuple[str, pd.DataFrame, str]] = []
    for n in res._names:
        r = res._ranks[n]
        values = res.eigenvalues[n]
        # short: the rank's and three more; full: every eigenvalue
        eig = (_eigen_table(values, values.size) if full
               else _eigen_table(values, r).iloc[:r + 3, :2])
        eig.attrs.update(beside="eigenvalues", beside_tag=n)
        tables.append(("k", eig, f"eigenvalues, block {n}"))
    for n in res._names:  # per-SD loadings: comparable whatever the units
        d = (res.loadings if loadings == "sd" else res.directions)[n].copy()
        d.attrs["beside"] = "loadings"
        what = "per-SD loadings" if loadings == "sd" else "directions"
        tables.append((f"{n}: rank {res._ranks[n]}", d, f"{what}, block {n}"))
    scaled = ""
    shown = res._tables if rank_tests is None else rank_tests.tables
    if shown is not None:
        entry, scaled = rank_tests_entry(shown, res._names, full)
        tables.append(entry)
    out = summary_notes(res, full, scaled)
    if loadings == "raw":
        info["Loadings:"] = "raw (unit length)"
        out[-1] = ("Directions: raw (unit-length coefficients, in the variables' units); "
                   "per-SD loadings: summary(), results.loadings;" + out[-1].partition(
                       "so units do not matter; raw directions: results.directions;")[2])
    return build_summary("Joint dimension reduction of K blocks", info, tables, out,
                         headline=res._headline())

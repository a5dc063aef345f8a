"""Bundled example data.

``ais``: the Australian Institute of Sport data (Telford and Cunningham 1991;
Cook and Weisberg 1994; shipped as ``ais`` in R's ``dr`` package): 202
athletes, columns Sex (0 male, 1 female), Ht (cm), Wt (kg), LBM (lean body
mass, kg), RCC (red cell count), WCC (white cell count), Hc (hematocrit, %),
Hg (hemoglobin), Ferr (plasma ferritin), BMI, SSF (sum of skin folds), Bfat
(% body fat), Label, Sport.
"""

from __future__ import annotations

import json
from importlib import resources

import pandas as pd

__all__ = ["load_ais", "load_paper_figures", "AIS_BLOOD", "AIS_BODY"]

#: Blood block of the ais data.
AIS_BLOOD = ["RCC", "WCC", "Hc", "Hg", "Ferr"]
#: Body-build block of the ais data.
AIS_BODY = ["Ht", "Wt", "SSF", "BMI", "Bfat"]


def load_ais() -> pd.DataFrame:
    """The Australian Institute of Sport data (202 rows, 14 columns).

    Returns
    -------
    DataFrame

    Examples
    --------
    >>> from jdr_stats.datasets import load_ais
    >>> load_ais().shape
    (202, 14)
    """
    with resources.files(__package__).joinpath("ais.csv").open("r") as fh:
        return pd.read_csv(fh)


def load_paper_figures() -> dict:
    """The points of the paper's Figures 1-3 and the settings that produce them.

    Read from the tikz tables of the paper's LaTeX source (log of the mean
    NSEE over 100 trials); the experiment settings, which the paper does not
    state, are those of ``shared/paper/NOTES.md``.

    Returns
    -------
    dict
        ``{"figure1": {name: {model, vary, grid, fixed, log_nsee}},
        "figure2": {violation: {grid, fixed, log_nsee_ideal, log_nsee_violated}},
        "figure3": {"odd" | "even": {grid, fixed, log_nsee_joint, log_nsee_phd}}}``.

    Examples
    --------
    >>> from jdr_stats.datasets import load_paper_figures
    >>> load_paper_figures()["figure1"]["bilinear-exp1"]["grid"]
    [1000, 2000, 5000, 10000]
    """
    with resources.files(__package__).joinpath("paper_figures.json").open("r") as fh:
        return json.load(fh)

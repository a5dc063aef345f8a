"""Bundled example data.

``ais``: the Australian Institute of Sport data (Telford and Cunningham 1991;
Cook and Weisberg 1994; shipped as ``ais`` in R's ``dr`` package): 202
athletes, columns Sex (0 male, 1 female), Ht (cm), Wt (kg), LBM (lean body
mass, kg), RCC (red cell count), WCC (white cell count), Hc (hematocrit, %),
Hg (hemoglobin), Ferr (plasma ferritin), BMI, SSF (sum of skin folds), Bfat
(% body fat), Label, Sport.

``concrete``: the concrete compressive strength data (Yeh 1998; UCI
Machine Learning Repository), 1030 mixtures; see :func:`load_concrete` and
``datasets/README.md`` for its provenance and licence.

``star98`` and ``anes96`` are statsmodels' bundled data sets, returned as
frames with the natural blocks named in :data:`STAR98_BLOCKS` and
:data:`ANES96_BLOCKS`.
"""

from __future__ import annotations

import json
from importlib import resources

import pandas as pd

__all__ = [
    "load_ais",
    "load_concrete",
    "load_star98",
    "load_anes96",
    "load_paper_figures",
    "AIS_BLOOD",
    "AIS_BODY",
    "CONCRETE_BLOCKS",
    "STAR98_BLOCKS",
    "ANES96_BLOCKS",
]

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


#: Natural blocks of the concrete data: the binder (cement and its
#: replacements, with the superplasticizer that disperses it) against
#: water, aggregates and age.
CONCRETE_BLOCKS = {
    "binder": ["cement", "blast_furnace_slag", "fly_ash", "superplasticizer"],
    "other": ["water", "coarse_aggregate", "fine_aggregate", "age"],
}

#: Natural blocks of star98: the students' demographics against the
#: schools' resources.
STAR98_BLOCKS = {
    "demographics": ["LOWINC", "PERASIAN", "PERBLACK", "PERHISP"],
    "resources": ["PERMINTE", "AVYRSEXP", "AVSALK", "PERSPENK", "PTRATIO", "PCTAF",
                  "PCTCHRT", "PCTYRRND"],
}

#: Natural blocks of anes96: political positions against demographics.
ANES96_BLOCKS = {
    "politics": ["selfLR", "ClinLR", "DoleLR", "PID"],
    "demographics": ["logpopul", "TVnews", "age", "educ", "income"],
}


def load_concrete() -> pd.DataFrame:
    """The concrete compressive strength data (1030 mixtures, 9 columns).

    Columns (kg per m^3 of mixture unless stated): ``cement``,
    ``blast_furnace_slag``, ``fly_ash``, ``water``, ``superplasticizer``,
    ``coarse_aggregate``, ``fine_aggregate``, ``age`` (days, 1-365) and
    ``compressive_strength`` (MPa).  :data:`CONCRETE_BLOCKS` names the
    binder block and the water/aggregates/age block.  25 rows repeat
    another row exactly (as in the original data).

    Returns
    -------
    DataFrame

    Notes
    -----
    Source: I-Cheng Yeh, "Modeling of strength of high performance concrete
    using artificial neural networks", Cement and Concrete Research 28(12),
    1797-1808 (1998); donated to the UCI Machine Learning Repository
    (licence CC BY 4.0).  The file bundled here is the ``concrete`` object
    of the CRAN package modeldata 1.1.0 (MIT licence) as shipped by
    Debian's ``r-cran-modeldata``; ``tools/make_concrete_csv.py``
    regenerates it.  See ``datasets/README.md``.

    Examples
    --------
    >>> from jdr_stats.datasets import load_concrete
    >>> df = load_concrete()
    >>> df.shape, round(float(df["compressive_strength"].mean()), 2)
    ((1030, 9), 35.82)
    """
    with resources.files(__package__).joinpath("concrete.csv").open("r") as fh:
        return pd.read_csv(fh)


def load_star98() -> pd.DataFrame:
    """statsmodels' ``star98``: California school districts' 1998 math scores.

    303 districts.  ``PCTABOVE`` is the share of students above the
    national median in math, ``NABOVE / (NABOVE + NBELOW)`` (the response);
    ``NSTUDENTS`` is ``NABOVE + NBELOW``.  The predictors are the 12 main
    variables of statsmodels' data set (its interaction columns are left
    out); :data:`STAR98_BLOCKS` splits them into demographics (share of
    low-income, Asian, black and Hispanic students) and school resources
    (minority teachers, teachers' experience and salary, spending per
    pupil, pupil-teacher ratio, UC/CSU prep courses, charter and
    year-round schools).

    Returns
    -------
    DataFrame

    Notes
    -----
    Data from Jeff Gill, *Generalized Linear Models: A Unified Approach*
    (2001), bundled with statsmodels (``statsmodels.datasets.star98``,
    "used with express permission from the original author").

    Examples
    --------
    >>> from jdr_stats.datasets import load_star98
    >>> load_star98().shape
    (303, 14)
    """
    from statsmodels.datasets import star98

    raw = star98.load_pandas().data
    out = raw[["NABOVE", "NBELOW"]].copy()
    out["NSTUDENTS"] = out["NABOVE"] + out["NBELOW"]
    out["PCTABOVE"] = out["NABOVE"] / out["NSTUDENTS"]
    cols = STAR98_BLOCKS["demographics"] + STAR98_BLOCKS["resources"]
    return pd.concat([out[["PCTABOVE", "NSTUDENTS"]], raw[cols].astype(float)], axis=1)


def load_anes96() -> pd.DataFrame:
    """statsmodels' ``anes96``: the 1996 American National Election Study.

    944 respondents.  ``vote`` is 1 for Dole and 0 for Clinton (the binary
    response).  :data:`ANES96_BLOCKS` splits the predictors into political
    positions (the respondent's left-right self-placement ``selfLR``, their
    placement of Clinton ``ClinLR`` and of Dole ``DoleLR``, party
    identification ``PID``) and demographics (log population of the
    respondent's place ``logpopul``, days a week watching TV news, age,
    education and income categories).

    Returns
    -------
    DataFrame

    Notes
    -----
    Bundled with statsmodels (``statsmodels.datasets.anes96``; public
    domain).

    Examples
    --------
    >>> from jdr_stats.datasets import load_anes96
    >>> df = load_anes96()
    >>> df.shape, sorted(df["vote"].unique().tolist())
    ((944, 10), [0.0, 1.0])
    """
    from statsmodels.datasets import anes96

    raw = anes96.load_pandas().data
    cols = ["vote"] + ANES96_BLOCKS["politics"] + ANES96_BLOCKS["demographics"]
    return raw[cols].astype(float)


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

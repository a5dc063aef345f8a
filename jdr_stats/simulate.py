"""Simulation of the paper's models (section 5.4), with the true U and V.

``bilinear``: ``y = f(U^T a, V^T b) + noise`` with the bilinear link
``f = sum_j (U^T a)_j (V^T b)_j`` (or another link); ``binary``:
``y ~ Bernoulli(exp(-||U^T a - V^T b||^2))``.  U and V are drawn at random
with orthonormal columns (``s`` random nonzero rows when sparse).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd

from ._validation import check_choice, check_int, normalize_seed

__all__ = ["SimulatedData", "bilinear", "binary", "random_basis", "draw_blocks"]

Design = Literal["gaussian", "uniform", "poisson", "correlated"]
_DESIGNS = ("gaussian", "uniform", "poisson", "correlated")
Link = Literal["bilinear", "even"] | Callable[[np.ndarray, np.ndarray], np.ndarray]


@dataclass(frozen=True)
class SimulatedData:
    """Data drawn from a two-block model, with the truth attached.

    Attributes
    ----------
    y : ndarray (m,)
    a : ndarray (m, n1)
    b : ndarray (m, n2)
    U : ndarray (n1, r)
        True basis of the a-subspace (orthonormal columns).
    V : ndarray (n2, r)
        True basis of the b-subspace.
    model : str
    settings : dict
        The arguments the data were drawn with.
    """

    y: np.ndarray
    a: np.ndarray
    b: np.ndarray
    U: np.ndarray
    V: np.ndarray
    model: str
    settings: dict = field(default_factory=dict)

    @property
    def frame(self) -> pd.DataFrame:
        """The data as one DataFrame with columns ``y, a0.., b0..``."""
        cols = {"y": self.y}
        cols.update({f"a{j}": self.a[:, j] for j in range(self.a.shape[1])})
        cols.update({f"b{j}": self.b[:, j] for j in range(self.b.shape[1])})
        return pd.DataFrame(cols)

    @property
    def exog_a_frame(self) -> pd.DataFrame:
        return self.frame[[f"a{j}" for j in range(self.a.shape[1])]]

    @property
    def exog_b_frame(self) -> pd.DataFrame:
        return self.frame[[f"b{j}" for j in range(self.b.shape[1])]]


def _check_dims(m: int, n1: int, n2: int, r: int, s1: int | None, s2: int | None) -> None:
    for name, val in (("m", m), ("n1", n1), ("n2", n2), ("r", r)):
        check_int(val, name, low=1)
    if r > min(n1, n2):
        raise ValueError(f"r must be at most min(n1, n2) = {min(n1, n2)}; got {r}")
    for name, s, n in (("s1", s1, n1), ("s2", s2, n2)):
        if s is not None and not r <= s <= n:
            raise ValueError(f"{name} must be between r={r} and {n}; got {s!r}")


def random_basis(n: int, r: int, s: int | None = None, *, seed=None) -> np.ndarray:
    """A random n x r matrix with orthonormal columns (s nonzero rows if given)."""
    rng = normalize_seed(seed)
    rows = np.arange(n) if s is None else np.sort(rng.choice(n, size=s, replace=False))
    q, _ = np.linalg.qr(rng.standard_normal((len(rows), r)))
    out = np.zeros((n, r))
    out[rows] = q
    return out


def draw_blocks(
    m: int, n1: int, n2: int, design: Design = "gaussian", *, rho: float = 0.2, seed=None
) -> tuple[np.ndarray, np.ndarray]:
    """Draw the two blocks, each entry with mean 0 and variance 1.

    ``"gaussian"``: N(0, 1); ``"uniform"``: U(-sqrt 3, sqrt 3); ``"poisson"``:
    (Poisson(4) - 4) / 2; ``"correlated"``: Gaussian with
    ``cov(a_j, b_j) = rho`` for ``j < min(n1, n2)`` (the paper's "weakly
    correlated" blocks, rho = 0.2).
    """
    check_choice(design, "design", _DESIGNS)
    rng = normalize_seed(seed)
    if design == "gaussian":
        return rng.standard_normal((m, n1)), rng.standard_normal((m, n2))
    if design == "uniform":
        h = np.sqrt(3.0)
        return rng.uniform(-h, h, (m, n1)), rng.uniform(-h, h, (m, n2))
    if design == "poisson":
        return (rng.poisson(4.0, (m, n1)) - 4.0) / 2.0, (rng.poisson(4.0, (m, n2)) - 4.0) / 2.0
    if not -1 < rho < 1:
        raise ValueError(f"rho must be in (-1, 1); got {rho!r}")
    a = rng.standard_normal((m, n1))
    b = rng.standard_normal((m, n2))
    k = min(n1, n2)
    b[:, :k] = rho * a[:, :k] + np.sqrt(1 - rho**2) * b[:, :k]
    return a, b


def _truth_and_blocks(m, n1, n2, r, s1, s2, design, rho, seed):
    """Validate, then draw U, V (in that order) and the two blocks."""
    _check_dims(m, n1, n2, r, s1, s2)
    rng = normalize_seed(seed)
    U = random_basis(n1, r, s1, seed=rng)
    V = random_basis(n2, r, s2, seed=rng)
    a, b = draw_blocks(m, n1, n2, design, rho=rho, seed=rng)
    return rng, U, V, a, b


def _link_values(link: Link, abar: np.ndarray, bbar: np.ndarray) -> np.ndarray:
    if callable(link):
        return np.asarray(link(abar, bbar), dtype=float).reshape(-1)
    if link == "bilinear":
        return np.einsum("ij,ij->i", abar, bbar)
    if link == "even":
        return np.einsum("ij,ij->i", abar**2, bbar**2)
    raise ValueError(f'link must be "bilinear", "even" or a callable; got {link!r}')


def bilinear(
    m: int,
    n1: int,
    n2: int,
    r: int,
    *,
    s1: int | None = None,
    s2: int | None = None,
    noise: float = 1.0,
    noise_dist: Literal["normal", "t3"] = "normal",
    design: Design = "gaussian",
    link: Link = "bilinear",
    rho: float = 0.2,
    seed: int | np.random.Generator | None = None,
) -> SimulatedData:
    """The paper's BILINEAR model: ``y = a^T U V^T b + noise * z``.

    Parameters
    ----------
    m, n1, n2, r : int
        Rows, block widths and the dimension of each subspace.
    s1, s2 : int, optional
        Nonzero rows of U and V (sparse model).
    noise : float
        Scale of the additive noise (0 for none).
    noise_dist : {"normal", "t3"}
        z standard normal, or Student t with 3 degrees of freedom (heavy tails).
    design : {"gaussian", "uniform", "poisson", "correlated"}
        Distribution of the blocks, see :func:`draw_blocks`.
    link : {"bilinear", "even"} or callable
        ``"bilinear"``: ``sum_j abar_j bbar_j`` (odd in each block);
        ``"even"``: ``sum_j abar_j^2 bbar_j^2`` (Figure 3 of the paper); a
        callable ``f(abar, bbar)`` receives the (m, r) projections.
    rho : float
        Correlation of ``a_j`` and ``b_j`` for the correlated design.
    seed : int, Generator or None

    Returns
    -------
    SimulatedData

    Examples
    --------
    >>> sim = bilinear(100, 5, 4, 2, seed=0)
    >>> sim.a.shape, sim.b.shape, sim.U.shape
    ((100, 5), (100, 4), (5, 2))
    """
    if noise < 0:
        raise ValueError(f"noise must be nonnegative; got {noise!r}")
    check_choice(noise_dist, "noise_dist", ("normal", "t3"))
    rng, U, V, a, b = _truth_and_blocks(m, n1, n2, r, s1, s2, design, rho, seed)
    mu = _link_values(link, a @ U, b @ V)
    z = rng.standard_normal(m) if noise_dist == "normal" else rng.standard_t(3, m)
    y = mu + noise * z
    settings = dict(m=m, n1=n1, n2=n2, r=r, s1=s1, s2=s2, noise=noise,
                    noise_dist=noise_dist, design=design,
                    link=link if isinstance(link, str) else "callable", rho=rho)
    return SimulatedData(y=y, a=a, b=b, U=U, V=V, model="bilinear", settings=settings)


def binary(
    m: int,
    n1: int,
    n2: int,
    r: int,
    *,
    s1: int | None = None,
    s2: int | None = None,
    design: Design = "gaussian",
    rho: float = 0.2,
    seed: int | np.random.Generator | None = None,
) -> SimulatedData:
    """The paper's BINARY model: ``y ~ Bernoulli(exp(-||U^T a - V^T b||^2))``.

    Parameters are as for :func:`bilinear`.

    Examples
    --------
    >>> sim = binary(200, 6, 6, 2, seed=0)
    >>> sorted(set(sim.y.tolist()))
    [0.0, 1.0]
    """
    rng, U, V, a, b = _truth_and_blocks(m, n1, n2, r, s1, s2, design, rho, seed)
    d = a @ U - b @ V
    mu = np.exp(-np.einsum("ij,ij->i", d, d))
    y = (rng.random(m) < mu).astype(float)
    settings = dict(m=m, n1=n1, n2=n2, r=r, s1=s1, s2=s2, design=design, rho=rho)
    return SimulatedData(y=y, a=a, b=b, U=U, V=V, model="binary", settings=settings)

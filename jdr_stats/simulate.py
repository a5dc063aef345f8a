"""Simulation of the paper's models (section 5.4), with the true U and V.

``bilinear``: ``y = f(U^T a, V^T b) + noise`` with the bilinear link
``f = sum_j (U^T a)_j (V^T b)_j`` (or another link); ``binary``:
``y ~ Bernoulli(exp(-||U^T a - V^T b||^2))``.  U and V are drawn at random
with orthonormal columns (``s`` random nonzero rows when sparse).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd

from .runtime._validation import check_choice, check_int, normalize_seed

__all__ = [
    "SimulatedData",
    "bilinear",
    "binary",
    "random_basis",
    "draw_blocks",
    "Scenario",
    "BATTERY",
    "scenario",
]

Design = Literal["gaussian", "uniform", "poisson", "correlated", "t5", "t6", "laplace", "gamma"]
_DESIGNS = ("gaussian", "uniform", "poisson", "correlated", "t5", "t6", "laplace", "gamma")
NoiseDist = Literal["normal", "t3", "lognormal", "laplace"]
_NOISES = ("normal", "t3", "lognormal", "laplace")
Hetero = Literal["signal", "nonsignal"]
Response = Literal["identity", "exp", "binary"]
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
    for name, s, n, nn in (("s1", s1, n1, "n1"), ("s2", s2, n2, "n2")):
        if s is not None:
            check_int(s, name, low=r, high=n, why=f" (r and {nn})")


def random_basis(n: int, r: int, s: int | None = None, *, seed=None) -> np.ndarray:
    """A random n x r matrix with orthonormal columns (s nonzero rows if given)."""
    rng = normalize_seed(seed)
    rows = np.arange(n) if s is None else np.sort(rng.choice(n, size=s, replace=False))
    q, _ = np.linalg.qr(rng.standard_normal((len(rows), r)))
    out = np.zeros((n, r))
    out[rows] = q
    return out


def _ar1_factor(n: int, phi: float) -> np.ndarray:
    """Lower Cholesky factor of the AR(1) correlation matrix ``phi^|i-j|``."""
    idx = np.arange(n)
    return np.linalg.cholesky(phi ** np.abs(idx[:, None] - idx[None, :]))


def _standard_entries(rng: np.random.Generator, design: str, shape: tuple[int, int]) -> np.ndarray:
    """I.i.d. entries with mean 0 and variance 1 of one block."""
    if design == "gaussian":
        return rng.standard_normal(shape)
    if design == "uniform":
        h = np.sqrt(3.0)
        return rng.uniform(-h, h, shape)
    if design == "poisson":
        return (rng.poisson(4.0, shape) - 4.0) / 2.0
    if design in ("t5", "t6"):
        nu = float(design[1:])
        return rng.standard_t(nu, shape) * np.sqrt((nu - 2.0) / nu)
    if design == "gamma":  # Gamma(2, 1) standardised: skewness sqrt(2)
        return (rng.gamma(2.0, 1.0, shape) - 2.0) / np.sqrt(2.0)
    # laplace: scale 1/sqrt(2) has variance 1
    return rng.laplace(0.0, 1.0 / np.sqrt(2.0), shape)


def draw_blocks(
    m: int,
    n1: int,
    n2: int,
    design: Design = "gaussian",
    *,
    rho: float = 0.2,
    ar1: float = 0.0,
    seed=None,
) -> tuple[np.ndarray, np.ndarray]:
    """Draw the two blocks, each entry with mean 0 and variance 1.

    ``"gaussian"``: N(0, 1); ``"uniform"``: U(-sqrt 3, sqrt 3); ``"poisson"``:
    (Poisson(4) - 4) / 2; ``"t5"``, ``"t6"``: Student t with 5 or 6 degrees
    of freedom scaled to variance 1 (heavy tails, excess kurtosis 6 and 3);
    ``"laplace"``: Laplace with variance 1 (excess kurtosis 3);
    ``"gamma"``: standardised Gamma(2), ``(G - 2) / sqrt(2)`` (skewed:
    skewness sqrt(2), excess kurtosis 3);
    ``"correlated"``: Gaussian with ``cov(a_j, b_j) = rho`` for
    ``j < min(n1, n2)`` (the paper's "weakly correlated" blocks, rho = 0.2).

    ``ar1 = phi`` (``0 <= phi < 1``) mixes the columns of each block so that
    ``corr(x_j, x_k) = phi^|j - k|`` (``x = L z``, ``L L^T`` the AR(1)
    correlation, ``z`` the i.i.d. entries): correlated variables inside a
    block, with the tails of the chosen design.
    """
    check_choice(design, "design", _DESIGNS)
    if not 0.0 <= ar1 < 1.0:
        raise ValueError(f"ar1 must be in [0, 1); got {ar1!r}")
    rng = normalize_seed(seed)
    if design == "correlated":
        if not -1 < rho < 1:
            raise ValueError(f"rho must be in (-1, 1); got {rho!r}")
        a = rng.standard_normal((m, n1))
        b = rng.standard_normal((m, n2))
        k = min(n1, n2)
        b[:, :k] = rho * a[:, :k] + np.sqrt(1 - rho**2) * b[:, :k]
    else:
        a = _standard_entries(rng, design, (m, n1))
        b = _standard_entries(rng, design, (m, n2))
    if ar1 > 0:
        a = a @ _ar1_factor(n1, ar1).T
        b = b @ _ar1_factor(n2, ar1).T
    return a, b


def _truth_and_blocks(m, n1, n2, r, s1, s2, design, rho, seed, ar1=0.0):
    """Validate, then draw U, V (in that order) and the two blocks."""
    _check_dims(m, n1, n2, r, s1, s2)
    rng = normalize_seed(seed)
    U = random_basis(n1, r, s1, seed=rng)
    V = random_basis(n2, r, s2, seed=rng)
    a, b = draw_blocks(m, n1, n2, design, rho=rho, ar1=ar1, seed=rng)
    return rng, U, V, a, b


def _link_values(
    link: Link, abar: np.ndarray, bbar: np.ndarray, strengths: np.ndarray | None
) -> np.ndarray:
    if callable(link):
        if strengths is not None:
            raise ValueError("strengths applies to the 'bilinear' and 'even' links only")
        return np.asarray(link(abar, bbar), dtype=float).reshape(-1)
    if link == "bilinear":
        terms = abar * bbar
    elif link == "even":
        terms = abar**2 * bbar**2
    else:
        raise ValueError(f'link must be "bilinear", "even" or a callable; got {link!r}')
    # the plain row sum without strengths keeps version 0.1's numbers
    return terms.sum(axis=1) if strengths is None else terms @ strengths


def _noise(rng: np.random.Generator, dist: str, m: int) -> np.ndarray:
    """Noise with mean 0 and variance 1 (t3: variance 3, as in version 0.1)."""
    if dist == "normal":
        return rng.standard_normal(m)
    if dist == "t3":
        return rng.standard_t(3, m)
    if dist == "laplace":
        return rng.laplace(0.0, 1.0 / np.sqrt(2.0), m)
    # lognormal exp(1.5 Z), centred and scaled to variance 1 (skewness ~ 33)
    s2 = 1.5**2
    return (np.exp(1.5 * rng.standard_normal(m)) - np.exp(s2 / 2)) / np.sqrt(
        (np.exp(s2) - 1.0) * np.exp(s2)
    )


def _off_signal_direction(basis: np.ndarray) -> np.ndarray:
    """A unit vector orthogonal to span(basis): a variable outside the support
    when there is one, else the first vector of the orthogonal complement."""
    zero_rows = np.flatnonzero(np.abs(basis).sum(axis=1) == 0)
    e = np.zeros(basis.shape[0])
    if zero_rows.size:
        e[zero_rows[0]] = 1.0
        return e
    q, _ = np.linalg.qr(basis, mode="complete")
    return q[:, basis.shape[1]]


def bilinear(
    m: int,
    n1: int,
    n2: int,
    r: int,
    *,
    s1: int | None = None,
    s2: int | None = None,
    noise: float = 1.0,
    noise_dist: NoiseDist = "normal",
    design: Design = "gaussian",
    link: Link = "bilinear",
    rho: float = 0.2,
    ar1: float = 0.0,
    strengths: Sequence[float] | np.ndarray | None = None,
    hetero: Hetero | None = None,
    hetero_strength: float = 1.0,
    main_effects: float = 0.0,
    response: Response = "identity",
    prevalence: float = 0.05,
    seed: int | np.random.Generator | None = None,
) -> SimulatedData:
    """The paper's BILINEAR model: ``y = a^T U V^T b + noise * z``.

    The defaults are the paper's model; the other options give the
    departures from it that real data show (the robustness battery,
    :data:`BATTERY`).

    Parameters
    ----------
    m, n1, n2, r : int
        Rows, block widths and the dimension of each subspace.
    s1, s2 : int, optional
        Nonzero rows of U and V (sparse model).
    noise : float
        Scale of the additive noise (0 for none).
    noise_dist : {"normal", "t3", "lognormal", "laplace"}
        z standard normal; Student t with 3 degrees of freedom (heavy
        tails, variance 3); ``exp(1.5 Z)`` centred and scaled to variance 1
        (strongly skewed); Laplace with variance 1.
    design : {"gaussian", "uniform", "poisson", "correlated", "t5", "t6", "laplace", "gamma"}
        Distribution of the blocks' entries, see :func:`draw_blocks`.
    link : {"bilinear", "even"} or callable
        ``"bilinear"``: ``sum_j g_j abar_j bbar_j`` (odd in each block);
        ``"even"``: ``sum_j g_j abar_j^2 bbar_j^2`` (Figure 3 of the paper); a
        callable ``f(abar, bbar)`` receives the (m, r) projections
        ``abar = a U``, ``bbar = b V``.
    rho : float
        Correlation of ``a_j`` and ``b_j`` for the correlated design.
    ar1 : float
        AR(1) correlation ``phi^|j-k|`` of the variables inside each block.
    strengths : sequence of r floats, optional
        The weights ``g_j`` of the link's terms (default all 1): a small
        ``g_r`` is a weak direction, ``g = 0`` removes the signal (the
        response is then independent of the blocks).
    hetero : {"signal", "nonsignal"}, optional
        Heteroscedastic noise: its standard deviation is multiplied by
        ``sqrt((1 + c x^2) / (1 + c))`` (``c = hetero_strength``), ``x`` the
        first signal projection ``(a U)_1`` scaled to unit variance
        (``"signal"``), or a direction of block a outside the signal
        (``"nonsignal"``: a variable outside the support, or a vector
        orthogonal to U), which breaks the model's conditional
        independence but not the rank of the cross moment.
    main_effects : float
        Adds ``c (sum_j a_j / sqrt(n1) + sum_k b_k / sqrt(n2))``: main
        effects of every variable beside the interaction.
    response : {"identity", "exp", "binary"}
        The response is ``t``, ``exp(t / (2 sd(t)))`` (skewed, right tail
        like a log-normal's; ``sd`` the sample standard deviation), or ``1{t > q}`` with
        ``q`` the sample ``1 - prevalence`` quantile of ``t`` (rare binary),
        ``t`` the latent value (link + main effects + noise).
    prevalence : float
        Share of ones of the binary response.
    seed : int, Generator or None

    Returns
    -------
    SimulatedData

    Examples
    --------
    >>> sim = bilinear(100, 5, 4, 2, seed=0)
    >>> sim.a.shape, sim.b.shape, sim.U.shape
    ((100, 5), (100, 4), (5, 2))
    >>> sim = bilinear(400, 5, 4, 2, design="t5", ar1=0.5, response="binary", seed=0)
    >>> float(sim.y.mean())
    0.05
    """
    if noise < 0:
        raise ValueError(f"noise must be nonnegative; got {noise!r}")
    check_choice(noise_dist, "noise_dist", _NOISES)
    if hetero not in (None, "signal", "nonsignal"):
        raise ValueError(f'hetero must be None, "signal" or "nonsignal"; got {hetero!r}')
    if not hetero_strength >= 0:
        raise ValueError(f"hetero_strength must be nonnegative; got {hetero_strength!r}")
    if response not in ("identity", "exp", "binary"):
        raise ValueError(f'response must be "identity", "exp" or "binary"; got {response!r}')
    if not 0 < prevalence < 1:
        raise ValueError(f"prevalence must be strictly between 0 and 1; got {prevalence!r}")
    g = None
    if strengths is not None:
        g = np.asarray(strengths, dtype=float).reshape(-1)
        if g.shape[0] != r or not np.all(np.isfinite(g)) or np.any(g < 0):
            raise ValueError(
                f"strengths must be {r} nonnegative numbers (one per direction); "
                f"got {strengths!r}"
            )
    rng, U, V, a, b = _truth_and_blocks(m, n1, n2, r, s1, s2, design, rho, seed, ar1)
    abar = a @ U
    t = _link_values(link, abar, b @ V, g)
    z = _noise(rng, noise_dist, m)
    if hetero is not None:
        x = abar[:, 0] if hetero == "signal" else a @ _off_signal_direction(U)
        x = x / x.std()
        c = hetero_strength
        z = z * np.sqrt((1.0 + c * x**2) / (1.0 + c))
    t = t + noise * z
    if main_effects:
        t = t + main_effects * (a.sum(axis=1) / np.sqrt(n1) + b.sum(axis=1) / np.sqrt(n2))
    if response == "exp":
        # exp(t / 2) scaled by the sample s.d. of t: a skewed response with
        # finite variance (exp(t) itself has no mean under the bilinear link)
        y = np.exp(0.5 * t / t.std()) if t.std() > 0 else np.exp(t)
    elif response == "binary":
        y = (t > np.quantile(t, 1.0 - prevalence)).astype(float)
    else:
        y = t
    settings = dict(m=m, n1=n1, n2=n2, r=r, s1=s1, s2=s2, noise=noise,
                    noise_dist=noise_dist, design=design,
                    link=link if isinstance(link, str) else "callable", rho=rho,
                    ar1=ar1, strengths=None if g is None else g.tolist(),
                    hetero=hetero, hetero_strength=hetero_strength,
                    main_effects=main_effects, response=response,
                    prevalence=prevalence)
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
    ar1: float = 0.0,
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
    rng, U, V, a, b = _truth_and_blocks(m, n1, n2, r, s1, s2, design, rho, seed, ar1)
    d = a @ U - b @ V
    mu = np.exp(-np.einsum("ij,ij->i", d, d))
    y = (rng.random(m) < mu).astype(float)
    settings = dict(m=m, n1=n1, n2=n2, r=r, s1=s1, s2=s2, design=design, rho=rho, ar1=ar1)
    return SimulatedData(y=y, a=a, b=b, U=U, V=V, model="binary", settings=settings)


# ---------------------------------------------------------------------------
# The robustness battery shared by the rank-test, bootstrap and support studies
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Scenario:
    """A design of the robustness battery: how the data depart from the
    Gaussian model the normal-theory derivations assume.

    Attributes
    ----------
    name : str
    description : str
    model : {"bilinear", "binary"}
    options : dict
        Keyword arguments of :func:`bilinear` (or :func:`binary`).
    weak : bool
        The last direction is weak (its term has strength ``WEAK``).
    """

    name: str
    description: str
    model: str = "bilinear"
    options: dict = field(default_factory=dict)
    weak: bool = False


#: Strength of the weak last direction in the ``weak`` scenarios.
WEAK = 0.3

#: The battery of realistic designs the statistical studies check: heavy-tailed and
#: correlated blocks, skewed or binary responses, heteroscedastic noise,
#: main effects, a weak direction.  Each study draws from it with
#: :func:`scenario` at its own sizes.
BATTERY: tuple[Scenario, ...] = (
    Scenario("gaussian", "Gaussian blocks, N(0, 1) noise (the paper's model)"),
    Scenario("t5", "t(5) blocks (excess kurtosis 6)", options={"design": "t5"}),
    Scenario("t6-ar1", "t(6) blocks, AR(1) 0.5 inside each block",
             options={"design": "t6", "ar1": 0.5}),
    Scenario("laplace-ar1", "Laplace blocks, AR(1) 0.8 inside each block",
             options={"design": "laplace", "ar1": 0.8}),
    Scenario("lognormal-noise", "Gaussian blocks, skewed noise exp(1.5 Z)",
             options={"noise_dist": "lognormal"}),
    Scenario("t3-noise", "Gaussian blocks, t(3) noise", options={"noise_dist": "t3"}),
    Scenario("hetero-signal", "noise s.d. driven by the first signal projection",
             options={"hetero": "signal", "hetero_strength": 2.0}),
    Scenario("hetero-nonsignal", "noise s.d. driven by a variable outside the signal",
             options={"hetero": "nonsignal", "hetero_strength": 2.0}),
    Scenario("main-effects", "main effects of every variable plus the interaction",
             options={"main_effects": 1.0}),
    Scenario("exp-response", "skewed response exp(t / (2 sd t))", options={"response": "exp"}),
    Scenario("binary-rare", "rare binary response 1{t > q_0.95}",
             options={"response": "binary", "prevalence": 0.05}),
    Scenario("t5-hetero", "t(5) blocks, AR(1) 0.5, heteroscedastic noise",
             options={"design": "t5", "ar1": 0.5, "hetero": "signal",
                      "hetero_strength": 2.0}),
    Scenario("weak", f"Gaussian blocks, last direction of strength {WEAK}", weak=True),
    Scenario("weak-t5", f"t(5) blocks, last direction of strength {WEAK}",
             options={"design": "t5"}, weak=True),
    Scenario("binary-model", "the paper's BINARY model", model="binary"),
)

_BATTERY_NAMES = tuple(sc.name for sc in BATTERY)


def scenario(
    name: str,
    m: int,
    n1: int,
    n2: int,
    r: int,
    *,
    s1: int | None = None,
    s2: int | None = None,
    signal: float = 1.0,
    weak_strength: float = WEAK,
    seed: int | np.random.Generator | None = None,
) -> SimulatedData:
    """Draw data from a design of :data:`BATTERY`.

    Parameters
    ----------
    name : str
        One of the battery's names (``[sc.name for sc in BATTERY]``).
    m, n1, n2, r, s1, s2 :
        As for :func:`bilinear`.
    signal : float
        Multiplies every direction's strength (bilinear designs): ``0``
        makes the response independent of the blocks (a rank-0 null).
    weak_strength : float
        Strength of the last direction in the ``weak`` designs.
    seed : int, Generator or None

    Returns
    -------
    SimulatedData
        ``settings["scenario"]`` holds the name and ``settings["true_rank"]``
        the rank of the population cross moment's signal part (0 when
        ``signal=0``).

    Examples
    --------
    >>> sim = scenario("t6-ar1", 500, 6, 5, 2, seed=1)
    >>> sim.settings["scenario"], sim.settings["true_rank"]
    ('t6-ar1', 2)
    """
    if name not in _BATTERY_NAMES:
        raise ValueError(f"name must be one of {_BATTERY_NAMES}; got {name!r}")
    if not signal >= 0:
        raise ValueError(f"signal must be nonnegative; got {signal!r}")
    sc = BATTERY[_BATTERY_NAMES.index(name)]
    if sc.model == "binary":
        if signal != 1.0:
            raise ValueError("the binary-model design has no signal scale; use signal=1")
        sim = binary(m, n1, n2, r, s1=s1, s2=s2, seed=seed, **sc.options)
        true_rank = r
    else:
        g = np.full(r, float(signal))
        if sc.weak:
            g[-1] *= weak_strength
        sim = bilinear(m, n1, n2, r, s1=s1, s2=s2, strengths=g, seed=seed, **sc.options)
        true_rank = int(np.count_nonzero(g))
    settings = dict(sim.settings, scenario=name, true_rank=true_rank, signal=signal)
    return SimulatedData(y=sim.y, a=sim.a, b=sim.b, U=sim.U, V=sim.V, model=sim.model,
                         settings=settings)

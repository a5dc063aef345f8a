"""Progress reporting and seeded parallel batches for the long loops.

Every long loop of the package (bootstrap, permutation tests, stability
selection) takes the same two arguments:

``progress`` : bool or callable
    ``False`` (default) is silent.  ``True`` shows a tqdm bar on stderr when
    tqdm is installed (``pip install 'jdr_stats[progress]'``), otherwise
    plain lines ``"<what>: 40/100 (40%)"`` on stderr at every tenth.  A
    callable is called as ``progress(done, total)`` after each batch.
``n_jobs`` : int or None
    Batches run in ``n_jobs`` processes with joblib (``None`` or 1: in this
    process; -1: all cores; ``pip install 'jdr_stats[parallel]'``).

:func:`run_batches` cuts the replicates into batches and gives replicate
``i`` its own generator, the ``i``-th child of ``SeedSequence(...).spawn``,
so the numbers depend on ``seed`` but neither on the batches nor on
``n_jobs``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import numpy as np

from ..runtime._validation import check_int
from ._engine import child_generators, draw_entropy, worker_pool

__all__ = [
    "ProgressArg",
    "progress_bar",
    "run_batches",
    "replicate_generators",
    "check_progress",
    "check_n_jobs",
    "progress_forwarder",
]

ProgressArg = bool | Callable[[int, int], Any] | None
T = TypeVar("T")


def check_progress(progress: object) -> None:
    """A ``progress`` argument is a bool, None or a callable."""
    if progress is None or isinstance(progress, (bool, np.bool_)) or callable(progress):
        return
    raise TypeError(
        f"progress must be True, False or a callable progress(done, total); got {progress!r}"
    )


def check_n_jobs(n_jobs: object) -> int | None:
    """``None``, a positive int or a negative int (joblib: -1 = all cores)."""
    if n_jobs is None:
        return None
    n_jobs = check_int(n_jobs, "n_jobs")
    if n_jobs == 0:
        raise ValueError(f"n_jobs must be None or a nonzero integer; got {n_jobs!r}")
    return n_jobs


class _Lines:
    """Plain stderr lines at every tenth of the work (no tqdm)."""

    def __init__(self, total: int, desc: str) -> None:
        self.total, self.desc, self.done = total, desc, 0
        self.next_tenth = 1
        self.start = time.perf_counter()

    def update(self, n: int) -> None:
        self.done += n
        while self.total and self.done * 10 >= self.next_tenth * self.total:
            self.next_tenth += 1
            elapsed = time.perf_counter() - self.start
            print(
                f"{self.desc}: {self.done}/{self.total} "
                f"({100 * self.done // self.total}%) {elapsed:.1f}s",
                file=sys.stderr,
                flush=True,
            )

    def close(self) -> None:
        pass


@contextmanager
def progress_bar(progress: ProgressArg, total: int, desc: str) -> Iterator[Callable[[int], None]]:
    """A context giving ``update(n)``, to be called as work completes.

    Examples
    --------
    >>> seen = []
    >>> with progress_bar(lambda done, total: seen.append((done, total)), 3, "demo") as update:
    ...     for _ in range(3):
    ...         update(1)
    >>> seen
    [(1, 3), (2, 3), (3, 3)]
    """
    check_progress(progress)
    if not progress:
        yield lambda n: None
        return
    if callable(progress) and not isinstance(progress, (bool, np.bool_)):
        done = [0]

        def update(n: int) -> None:
            done[0] += n
            progress(done[0], total)

        yield update
        return
    try:
        from tqdm.auto import tqdm
    except ImportError:
        bar: Any = _Lines(total, desc)
    else:
        bar = tqdm(total=total, desc=desc, file=sys.stderr, leave=True)
    try:
        yield bar.update
    finally:
        bar.close()


def replicate_generators(
    seed: int | np.random.Generator | None, n_total: int, start: int = 0, stop: int | None = None
) -> list[np.random.Generator]:
    """The generators of replicates ``start..stop-1`` of a run of ``n_total``.

    Replicate ``i`` draws from ``PCG64(SeedSequence(entropy, spawn_key=(i,)))``
    (the ``i``-th child of ``SeedSequence(entropy).spawn``), ``entropy`` one
    integer drawn from the normalised ``seed``; so replicate ``i`` is the
    same whatever the batches and ``n_jobs``.  :func:`run_batches` uses
    exactly these generators.

    Examples
    --------
    >>> g = replicate_generators(1, 5)
    >>> h = replicate_generators(1, 5, start=3)
    >>> bool(g[3].random() == h[0].random())
    True
    """
    entropy = draw_entropy(seed)
    stop = n_total if stop is None else stop
    return child_generators(entropy, start, stop)


def _call(func: Callable[[list[np.random.Generator]], T], entropy: int, start: int,
          stop: int) -> T:
    return func(child_generators(entropy, start, stop))


def progress_forwarder(
    update: Callable[[int], None], *, scale: int = 1, cap: int | None = None
) -> Callable[[int, int], None]:
    """A ``progress(done, total)`` callable that forwards to an outer bar.

    An inner loop reports its own count ``done``; the outer bar's
    ``update`` receives the increments of ``min(scale * done, cap)`` (e.g.
    ``scale=2`` when the inner loop counts pairs of subsamples).  Used where
    one progress bar spans several inner runs (one per rank, say): give
    each run its own forwarder.

    Examples
    --------
    >>> seen = []
    >>> fwd = progress_forwarder(seen.append, scale=2, cap=5)
    >>> for done in (1, 2, 3):
    ...     fwd(done, 3)
    >>> seen
    [2, 2, 1]
    """
    seen = [0]

    def forward(done: int, total: int) -> None:
        now = scale * done if cap is None else min(scale * done, cap)
        update(now - seen[0])
        seen[0] = now

    return forward


def run_batches(
    func: Callable[[list[np.random.Generator]], T],
    n_total: int,
    *,
    seed: int | np.random.Generator | None,
    batch_size: int = 64,
    n_jobs: int | None = None,
    progress: ProgressArg = False,
    desc: str = "replicates",
    first: int = 0,
) -> list[T]:
    """Run ``func(rngs)`` on batches covering ``n_total`` replicates.

    Parameters
    ----------
    func : callable
        ``func(rngs)`` computes ``len(rngs)`` replicates, replicate ``j``
        drawing from ``rngs[j]``; it must be picklable for ``n_jobs`` other
        than 1.
    n_total : int
        Number of replicates, cut into batches of ``batch_size`` (the last
        one smaller).
    seed : int, Generator or None
        Normalised once; one integer drawn from it seeds the replicates'
        generators (see :func:`replicate_generators`).  The numbers depend
        on ``seed`` and ``n_total``, never on ``batch_size`` or ``n_jobs``.
    batch_size : int
    n_jobs : int or None
        Processes for joblib (None or 1: serial).
    progress : bool or callable
        See the module docstring; counts replicates.
    desc : str
        Label of the progress bar.
    first : int
        Index of the first replicate: a run continued in pieces (replicates
        ``first .. first + n_total - 1`` of the same ``seed``, given as an
        integer) draws what one run would.

    Returns
    -------
    list
        The batches' results, in batch order.

    Examples
    --------
    >>> draw = lambda rngs: [g.normal() for g in rngs]
    >>> out = run_batches(draw, 10, seed=1, batch_size=4)
    >>> [len(b) for b in out]
    [4, 4, 2]
    >>> out2 = run_batches(draw, 10, seed=1, batch_size=3)
    >>> sum(out, []) == sum(out2, [])
    True
    """
    check_progress(progress)
    n_jobs = check_n_jobs(n_jobs)
    n_total = check_int(n_total, "n_total", low=0)
    batch_size = check_int(batch_size, "batch_size", low=1)
    entropy = draw_entropy(seed)
    first = check_int(first, "first", low=0)
    bounds = [(lo, min(lo + batch_size, first + n_total))
              for lo in range(first, first + n_total, batch_size)]
    out: list[T] = []
    with progress_bar(progress, n_total, desc) as update:
        if len(bounds) <= 1:
            n_jobs = None
        with worker_pool(n_jobs) as parallel:
            if parallel is None:
                results: Any = (_call(func, entropy, lo, hi) for lo, hi in bounds)
            else:
                from joblib import delayed

                results = parallel(delayed(_call)(func, entropy, lo, hi) for lo, hi in bounds)
            for (lo, hi), res in zip(bounds, results, strict=True):
                out.append(res)
                update(hi - lo)
    return out

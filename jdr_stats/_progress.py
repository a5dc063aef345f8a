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

:func:`run_batches` cuts the replicates into batches of a fixed size and
gives batch ``i`` its own generator from ``SeedSequence(...).spawn``, so the
numbers depend on ``seed`` and ``batch_size`` but not on ``n_jobs``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar, Union

import numpy as np

from ._validation import normalize_seed

__all__ = ["ProgressArg", "progress_bar", "run_batches", "check_progress", "check_n_jobs"]

ProgressArg = Union[bool, Callable[[int, int], Any], None]
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
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs == 0:
        raise ValueError(f"n_jobs must be None or a nonzero integer; got {n_jobs!r}")
    return int(n_jobs)


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
        bar = tqdm(total=total, desc=desc, file=sys.stderr, leave=False)
    try:
        yield bar.update
    finally:
        bar.close()


def _batch_sizes(n_total: int, batch_size: int) -> list[int]:
    full, rest = divmod(n_total, batch_size)
    return [batch_size] * full + ([rest] if rest else [])


def run_batches(
    func: Callable[[int, np.random.Generator], T],
    n_total: int,
    *,
    seed: int | np.random.Generator | None,
    batch_size: int = 64,
    n_jobs: int | None = None,
    progress: ProgressArg = False,
    desc: str = "replicates",
) -> list[T]:
    """Run ``func(size, rng)`` on batches covering ``n_total`` replicates.

    Parameters
    ----------
    func : callable
        ``func(size, rng)`` computes ``size`` replicates with the generator
        ``rng``; it must be picklable for ``n_jobs`` other than 1.
    n_total : int
        Number of replicates, cut into batches of ``batch_size`` (the last
        one smaller).
    seed : int, Generator or None
        Normalised once; a root ``SeedSequence`` drawn from it is spawned
        into one child per batch.  The numbers depend on ``seed``,
        ``n_total`` and ``batch_size``, never on ``n_jobs``.
    batch_size : int
    n_jobs : int or None
        Processes for joblib (None or 1: serial).
    progress : bool or callable
        See the module docstring; counts replicates.
    desc : str
        Label of the progress bar.

    Returns
    -------
    list
        The batches' results, in batch order.

    Examples
    --------
    >>> out = run_batches(lambda size, rng: rng.normal(size=size), 10, seed=1, batch_size=4)
    >>> [len(b) for b in out]
    [4, 4, 2]
    """
    check_progress(progress)
    n_jobs = check_n_jobs(n_jobs)
    if isinstance(n_total, bool) or not isinstance(n_total, (int, np.integer)) or n_total < 0:
        raise ValueError(f"n_total must be a non-negative integer; got {n_total!r}")
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer; got {batch_size!r}")
    rng = normalize_seed(seed)
    root = np.random.SeedSequence(int(rng.integers(0, 2**63 - 1)))
    sizes = _batch_sizes(int(n_total), int(batch_size))
    children = root.spawn(len(sizes))
    gens = [np.random.Generator(np.random.PCG64(c)) for c in children]
    out: list[T] = []
    with progress_bar(progress, int(n_total), desc) as update:
        if n_jobs in (None, 1) or len(sizes) <= 1:
            for size, gen in zip(sizes, gens):
                out.append(func(size, gen))
                update(size)
            return out
        try:
            from joblib import Parallel, delayed
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise ImportError(
                f"n_jobs={n_jobs} needs joblib: pip install 'jdr_stats[parallel]'"
            ) from exc
        results = Parallel(n_jobs=n_jobs, return_as="generator")(
            delayed(func)(size, gen) for size, gen in zip(sizes, gens)
        )
        for size, res in zip(sizes, results):
            out.append(res)
            update(size)
    return out

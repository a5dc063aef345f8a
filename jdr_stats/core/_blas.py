"""BLAS threads: one thread where the summation order must not depend on the machine."""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext

from threadpoolctl import ThreadpoolController

from .. import config

__all__ = ["blas_single_thread", "blas_for_blocks"]


def blas_single_thread() -> AbstractContextManager:
    """Run the enclosed BLAS calls on one thread (threadpoolctl).

    A multi-threaded BLAS may split a product with a long inner dimension
    between its threads, so the summation order, and the last bits of the
    result, depend on the number of threads.  The bootstrap's resampling
    products run inside this context (in this process and in joblib
    workers alike), so their numbers do not depend on the machine's thread
    count nor on ``n_jobs``.  The process's BLAS libraries are looked up once
    (a ``ThreadpoolController`` kept for the process: the look-up reads the
    process's memory map, which the rank tests' sign flips paid once per
    batch of replicates; ``studies/bench_auto.py``).
    """
    global _BLAS_CONTROLLER
    if _BLAS_CONTROLLER is None:
        _BLAS_CONTROLLER = ThreadpoolController()
    return _BLAS_CONTROLLER.limit(limits=1, user_api="blas")


def blas_for_blocks(n1: int, n2: int) -> AbstractContextManager:
    """:func:`blas_single_thread` for the decompositions of blocks at most
    ``config.ONE_THREAD_MAX_DIM`` wide (a multi-threaded BLAS gains nothing
    there, and its waiting threads slow the many small calls of an SVD);
    the BLAS's own threads for wider blocks."""
    if max(n1, n2) <= config.ONE_THREAD_MAX_DIM:
        return blas_single_thread()
    return nullcontext()


#: the process's BLAS libraries (:func:`blas_single_thread`), found at first use
_BLAS_CONTROLLER: ThreadpoolController | None = None

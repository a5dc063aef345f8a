"""BLAS threads (one thread where the summation order must not depend on the
machine) and a symmetric rank-k update that releases the GIL."""

from __future__ import annotations

import ctypes
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import numpy as np
from threadpoolctl import ThreadpoolController

from .. import config
from ..runtime._lazy import blas

__all__ = ["blas_single_thread", "blas_for_blocks", "syrk_upper"]


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


def _dsyrk_pointer() -> Any:
    """scipy's ``dsyrk`` (:mod:`scipy.linalg.cython_blas`, the BLAS that
    :func:`scipy.linalg.blas.dsyrk` calls) as a ctypes function, or None.

    A ctypes call releases the GIL for its duration, where scipy's Python
    wrapper holds it: a thread reading the next chunk of a file (decoding
    releases the GIL, its Python steps need it) runs while the rank-k
    updates of the chunk before run."""
    try:
        from scipy.linalg import cython_blas

        capsule = cython_blas.__pyx_capi__["dsyrk"]
        get_name = ctypes.pythonapi.PyCapsule_GetName
        get_name.restype = ctypes.c_char_p
        get_name.argtypes = [ctypes.py_object]
        get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
        get_pointer.restype = ctypes.c_void_p
        get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
        address = get_pointer(capsule, get_name(capsule))
    except Exception:  # pragma: no cover - another scipy layout: the Python wrapper
        return None
    if not address:  # pragma: no cover
        return None
    ptr, chars = ctypes.c_void_p, ctypes.c_char_p
    int_p, dbl_p = ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_double)
    proto = ctypes.CFUNCTYPE(None, chars, chars, int_p, int_p, dbl_p, ptr, int_p, dbl_p, ptr,
                             int_p)
    return proto(address)


def syrk_upper(c: np.ndarray, a: np.ndarray, alpha: float, trans: bool) -> None:
    """``c += alpha a^T a`` (``trans``) or ``c += alpha a a^T``, upper triangle
    of the Fortran-ordered float64 ``c``, ``a`` a Fortran-contiguous float64
    array: the call :func:`scipy.linalg.blas.dsyrk` makes with
    ``beta=1, lower=0, overwrite_c=1`` (the same routine of the same BLAS,
    so the same bits), without holding the GIL."""
    global _DSYRK
    if _DSYRK is None:
        _DSYRK = _dsyrk_pointer() or False
    n = a.shape[1] if trans else a.shape[0]
    ok = (a.dtype == np.float64 and a.ndim == 2 and a.flags.f_contiguous
          and c.dtype == np.float64 and c.flags.f_contiguous and c.flags.writeable
          and c.shape == (n, n))
    if not _DSYRK or not ok:
        blas.dsyrk(alpha, a, beta=1.0, c=c, trans=int(trans), lower=0, overwrite_c=1)
        return
    rows, cols = a.shape
    k = rows if trans else cols
    size = ctypes.c_int
    _DSYRK(b"U", b"T" if trans else b"N", ctypes.byref(size(n)), ctypes.byref(size(k)),
           ctypes.byref(ctypes.c_double(alpha)), a.ctypes.data, ctypes.byref(size(max(1, rows))),
           ctypes.byref(ctypes.c_double(1.0)), c.ctypes.data, ctypes.byref(size(max(1, n))))


#: scipy's ``dsyrk`` as a ctypes function (:func:`syrk_upper`), False when
#: unavailable, found at first use
_DSYRK: Any = None

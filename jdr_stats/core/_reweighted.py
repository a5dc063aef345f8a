"""Block moments of many reweightings of the same rows (the bootstrap's resamples).

:class:`ReweightedMoments` gives the moments of many reweightings of the
same rows by matrix products, without copying rows (theory page of the
bootstrap).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

import numpy as np

from .. import config
from ..runtime._lazy import blas
from ._blas import blas_single_thread
from ._moments_engine import BlockMoments

__all__ = ["ReweightedMoments"]


class ReweightedMoments:
    """Block moments of many reweightings of the same rows, by matrix products.

    For resampling counts ``c`` (one row of ``C``, shape (B, m)) and the
    model's case weights ``w0``, the reweighted moments are ratios of sums
    ``sum_i c_i w0_i f_i`` of per-row features ``f_i`` (products of the rows
    centred at the full-sample means).  A batch of replicates is therefore
    one product ``C @ (w0 * F)``, accumulated over chunks of rows; each
    replicate's own means are then corrected for algebraically (see the
    theory page).
    """

    def __init__(self, y, a, b, w0):
        self._y, self._a, self._b, self._w0 = y, a, b, w0
        m, n1 = a.shape
        n2 = b.shape[1]
        self.m, self.n1, self.n2 = m, n1, n2
        if w0 is None:
            self.ybar, self.abar, self.bbar = float(y.mean()), a.mean(axis=0), b.mean(axis=0)
        else:
            tw = float(w0.sum())
            self.ybar = float(w0 @ y) / tw
            self.abar = (w0 @ a) / tw
            self.bbar = (w0 @ b) / tw
        # squared range of each column: the scale of "zero variance"
        self._scale_a = np.ptp(a, axis=0) ** 2
        self._scale_b = np.ptp(b, axis=0) ** 2
        self._iu1 = np.triu_indices(n1, k=1)
        self._iu2 = np.triu_indices(n2, k=1)
        t1, t2 = len(self._iu1[0]), len(self._iu2[0])
        # layout of the feature vector: the sums taken directly first (means,
        # variances), then those taken as full-sample sum plus the sum of the
        # deviations (see sums())
        sizes = [("one", 1), ("y", 1), ("a", n1), ("b", n2), ("yy", 1), ("ay", n1),
                 ("by", n2), ("aad", n1), ("bbd", n2),
                 ("aao", t1), ("bbo", t2), ("ab", n1 * n2), ("aby", n1 * n2)]
        self._slices = {}
        start = 0
        for name, size in sizes:
            self._slices[name] = slice(start, start + size)
            start += size
        self.width = start
        self.width64 = self._slices["aao"].start  # features summed directly
        self._full: np.ndarray | None = None  # full-sample sums of the others
        self.chunk = max(16, config.FEATURE_BYTES // (8 * self.width))

    def _features(self, start: int, stop: int, out: np.ndarray) -> np.ndarray:
        s = self._slices
        ac = self._a[start:stop] - self.abar
        bc = self._b[start:stop] - self.bbar
        yc = self._y[start:stop] - self.ybar
        k = stop - start
        f = out[:k]
        f[:, s["one"]] = 1.0
        f[:, s["y"]] = yc[:, None]
        f[:, s["a"]] = ac
        f[:, s["b"]] = bc
        f[:, s["yy"]] = (yc * yc)[:, None]
        f[:, s["ay"]] = ac * yc[:, None]
        f[:, s["by"]] = bc * yc[:, None]
        f[:, s["aad"]] = ac * ac
        f[:, s["bbd"]] = bc * bc
        i1, j1 = self._iu1
        f[:, s["aao"]] = ac[:, i1] * ac[:, j1]
        i2, j2 = self._iu2
        f[:, s["bbo"]] = bc[:, i2] * bc[:, j2]
        ab = f[:, s["ab"]].reshape(k, self.n1, self.n2)
        np.multiply(ac[:, :, None], bc[:, None, :], out=ab)
        np.multiply(f[:, s["ab"]], yc[:, None], out=f[:, s["aby"]])
        if self._w0 is not None:
            f *= self._w0[start:stop, None]
        return f

    def sums(
        self,
        counts: np.ndarray,
        map_products: Callable[[Iterator[tuple[np.ndarray, np.ndarray]]], Iterable[np.ndarray]]
        | None = None,
    ) -> np.ndarray:
        """``counts @ (w0 * F)``, shape (B, width).

        The first ``width64`` features (everything needed for the means and
        variances) are accumulated in place by BLAS ``dgemm``
        (``C^T <- F_chunk^T counts_chunk^T + C^T``).  The others
        (off-diagonal covariance products and the ``2 n1 n2`` cross-block
        products, nearly all of the work) are accumulated as the full-sample
        sum plus ``(counts - 1) @ F``, the resampling fluctuation.  Every sum
        is in double precision: another BLAS kernel (another CPU, another
        ``OPENBLAS_CORETYPE``) then moves the replicates' angles by about
        1e-13 of their largest value.  The product used to be taken in single
        precision (twice the speed): its rounding, about 3e-7 of the
        fluctuation, depends on the kernel's summation order and use of fused
        multiply-adds, and moved the frozen ``ais`` bounds by 1.3e-6 of their
        largest value between two kernels of one machine.

        ``map_products``, when given, receives the iterator of the pairs
        ``(counts - 1 of a row chunk, F of the chunk)`` and returns their
        products in the same order (e.g. computed by parallel workers); they
        are added here in chunk order, so the result is identical bit for bit
        to the serial one.
        """
        nb, w64 = counts.shape[0], self.width64
        out64_t = np.zeros((w64, nb), order="F")
        out_dev = np.zeros((nb, self.width - w64))
        dev = counts.astype(float)
        dev -= 1.0
        full_parts: list[np.ndarray] = []
        need_full = self._full is None

        def pairs() -> Iterator[tuple[np.ndarray, np.ndarray]]:
            nonlocal out64_t
            buf = np.empty((min(self.chunk, self.m), self.width))
            for start in range(0, self.m, self.chunk):
                stop = min(start + self.chunk, self.m)
                f = self._features(start, stop, buf)
                out64_t = blas.dgemm(
                    1.0, f[:, :w64].T, counts[:, start:stop].T, beta=1.0, c=out64_t,
                    overwrite_c=True,
                )
                if need_full:
                    full_parts.append(f[:, w64:].sum(axis=0))
                # a copy: the buffer is refilled by the next chunk
                yield dev[:, start:stop], f[:, w64:].copy()

        if map_products is None:
            with blas_single_thread():
                for d, f_dev in pairs():
                    out_dev += d @ f_dev
        else:
            for prod in map_products(pairs()):
                out_dev += prod
        if need_full:
            full = np.zeros(self.width - w64)
            for part in full_parts:
                full += part
            self._full = full
        out = np.empty((nb, self.width))
        out[:, :w64] = out64_t.T
        out[:, w64:] = out_dev + self._full
        return out

    @staticmethod
    def _zero_constant(cov: np.ndarray, scale: np.ndarray) -> None:
        diag = np.diagonal(cov, axis1=1, axis2=2)
        rep, col = np.nonzero(diag <= 1e-12 * scale)
        cov[rep, col, :] = 0.0
        cov[rep, :, col] = 0.0

    @classmethod
    def _block_cov(cls, off: np.ndarray, diag: np.ndarray, iu: tuple[np.ndarray, np.ndarray],
                   dmean: np.ndarray, scale: np.ndarray) -> np.ndarray:
        """Each replicate's covariance of one block, shape (B, n, n).

        From its mean products (``off`` above the diagonal at ``iu``, ``diag``
        on it) and its mean shifts ``dmean`` (B, n) from the full-sample means.
        """
        nb, n = dmean.shape
        cov = np.empty((nb, n, n))
        i, j = iu
        cov[:, i, j] = off
        cov[:, j, i] = off
        cov[:, np.arange(n), np.arange(n)] = diag
        cov -= dmean[:, :, None] * dmean[:, None, :]
        # A column constant within a resample has variance exactly 0; the
        # algebraic correction leaves a rounding residue there instead.
        cls._zero_constant(cov, scale)
        return cov

    def moments(self, sums: np.ndarray) -> list[BlockMoments]:
        """BlockMoments of each replicate from its feature sums."""
        s = self._slices
        n1, n2 = self.n1, self.n2
        tot = sums[:, s["one"]][:, 0]
        z = sums / tot[:, None]
        dy = z[:, s["y"]][:, 0]
        da = z[:, s["a"]]
        db = z[:, s["b"]]
        var_y = z[:, s["yy"]][:, 0] - dy**2
        ga = z[:, s["ay"]]
        gb = z[:, s["by"]]
        nb = sums.shape[0]
        cov_a = self._block_cov(z[:, s["aao"]], z[:, s["aad"]], self._iu1, da, self._scale_a)
        cov_b = self._block_cov(z[:, s["bbo"]], z[:, s["bbd"]], self._iu2, db, self._scale_b)
        m_ab = z[:, s["ab"]].reshape(nb, n1, n2)
        cross = z[:, s["aby"]].reshape(nb, n1, n2).copy()
        cross -= ga[:, :, None] * db[:, None, :]
        cross -= dy[:, None, None] * m_ab
        cross -= da[:, :, None] * gb[:, None, :]
        cross += 2.0 * dy[:, None, None] * da[:, :, None] * db[:, None, :]
        out = []
        for k in range(nb):
            out.append(
                BlockMoments(
                    nobs=self.m,
                    mean_y=self.ybar + float(dy[k]),
                    var_y=float(var_y[k]),
                    mean_a=self.abar + da[k],
                    mean_b=self.bbar + db[k],
                    cov_a=cov_a[k],
                    cov_b=cov_b[k],
                    cross=cross[k],
                )
            )
        return out

"""Progress reporting and seeded parallel batches for the long loops.

Every long loop of the package (bootstrap, permutation tests, stability
selection) takes ``progress`` (False, True for a bar on stderr, or a callable
``progress(done, total)``) and ``n_jobs`` (joblib processes; the numbers do
not depend on it).  The helpers here are those loops' engine, public for
code that wants the same behaviour: :func:`progress_bar`,
:func:`run_batches` (replicate ``i`` gets the ``i``-th child of
``SeedSequence(seed).spawn``) and :func:`replicate_generators`.
"""

from __future__ import annotations

from .resampling._progress import ProgressArg, progress_bar, replicate_generators, run_batches

__all__ = ["ProgressArg", "progress_bar", "replicate_generators", "run_batches"]

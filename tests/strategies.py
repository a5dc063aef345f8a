"""Hypothesis pieces shared by the invariance tests."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import strategies as st


def column_recoding(draw: Any, n: int) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """For a block of ``n`` columns: a scale per column (10^[-3, 3], either
    sign), a shift per column and a permutation of the columns."""
    logs = draw(st.lists(st.floats(-3, 3), min_size=n, max_size=n))
    signs = draw(st.lists(st.sampled_from([-1.0, 1.0]), min_size=n, max_size=n))
    shifts = draw(st.lists(st.floats(-1e3, 1e3), min_size=n, max_size=n))
    perm = draw(st.permutations(range(n)))
    return np.array(signs) * 10.0 ** np.array(logs), np.array(shifts), list(perm)

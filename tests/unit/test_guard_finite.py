"""`all_finite`, which the guard asks of every observation: the same answer as NumPy's `isfinite().all()` for any
array, where small 1-d float arrays take a shorter way (an exact sum of Python floats)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from tui_eval.envs.guard import all_finite

FLOATS = st.sampled_from([np.float16, np.float32, np.float64])


@settings(max_examples=400, deadline=None)
@given(hnp.arrays(FLOATS, hnp.array_shapes(min_dims=1, max_dims=2, min_side=0, max_side=80),
                  elements=st.floats(allow_nan=True, allow_infinity=True, width=16)))
def test_all_finite_is_numpys_answer(array):
    assert all_finite(array) == bool(np.isfinite(array).all())


def test_the_edges_of_the_sum():
    assert all_finite(np.array([1e308, 1e308]))  # finite, though their sum overflows
    assert all_finite(np.array([6e4, 6e4], np.float16))
    assert not all_finite(np.array([np.inf, -np.inf]))  # inf + -inf: no sum at all
    assert not all_finite(np.array([np.nan, 1.0], np.float32))
    assert not all_finite(np.array([-np.inf] + [0.0] * 63))  # the longest array summed
    assert not all_finite(np.array([-np.inf] + [0.0] * 64))  # one longer: isfinite()
    assert all_finite(np.zeros(0)) and all_finite(np.array([1, 2]))

"""Return bounds known before the first episode, and the float32 tolerance of "identical"."""

from __future__ import annotations

import pytest

from tui_eval.stats import known_return_bounds, return_bounds_from, returns_identical


def test_bounds_are_a_time_limit_times_per_step_rewards():
    assert return_bounds_from((1.0, 1.0), 500) == (0.0, 500.0)
    assert return_bounds_from((-1.0, 0.0), 200) == (-200.0, 0.0)
    assert return_bounds_from((-2.0, 3.0), 10) == (-20.0, 30.0)
    with pytest.raises(ValueError):
        return_bounds_from((1.0, -1.0), 10)
    with pytest.raises(ValueError):
        return_bounds_from((0.0, 1.0), 0)


@pytest.mark.parametrize("env_id, steps, lo, hi", [
    ("CartPole-v1", None, 0.0, 500.0),
    ("CartPole-v0", None, 0.0, 200.0),
    ("CartPole-v1", 200, 0.0, 200.0),
    ("Pendulum-v1", None, -16.2736044 * 200, 0.0),
    ("MountainCar-v0", None, -200.0, 0.0),
    ("Acrobot-v1", None, -500.0, 0.0),
])
def test_well_known_envs_have_bounds_with_their_source(env_id, steps, lo, hi):
    got = known_return_bounds(env_id, steps)
    assert got is not None
    assert got[:2] == pytest.approx((lo, hi))
    assert env_id in got[2] and "time limit" in got[2]


def test_envs_without_a_simple_bound_have_none():
    for env_id in ("MountainCarContinuous-v0", "LunarLander-v3", "Humanoid-v5", "my_pkg:Custom-v0"):
        assert known_return_bounds(env_id) is None


def test_pendulum_per_step_bound_is_the_worst_cost():
    import math
    r_lo = known_return_bounds("Pendulum-v1", 1)[0]
    assert r_lo == pytest.approx(-(math.pi**2 + 0.1 * 8**2 + 0.001 * 2**2), abs=1e-6)


def test_identical_fits_float32_returns():
    assert returns_identical(500.0, 500.0) and returns_identical(0.0, 0.0)
    assert returns_identical(1e7, 1e7 + 1.0)  # one float32 ulp at 1e7
    assert not returns_identical(1e7, 1e7 + 5.0)  # the old relative 1e-6 called these identical
    assert returns_identical(-1234.5678, -1234.5678 + 1e-4)  # float32 rounding of a Pendulum return
    assert not returns_identical(-1234.5678, -1234.5678 + 1e-2)
    assert not returns_identical(0.0, 1e-30)

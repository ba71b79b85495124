"""Coverage under continuous peeking (a look after every episode), for the cases users meet.

Each simulation is vectorised (runs x looks) through `tui_eval.stats.coverage`, whose per-look
intervals and verdicts are checked here against `PathStats` / `Comparison` themselves. Tolerance: with
R runs and a true miss rate of 5%, a rate up to 5% + 3 sqrt(0.05 * 0.95 / R) passes. Run with -s to
see the rates (the README's statistics table).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from tui_eval.records import EpisodeRecord
from tui_eval.stats import Comparison, PathStats, asymptotic_cs
from tui_eval.stats.coverage import (
    CAP,
    CAPPED_MEAN,
    CASES,
    ab_verdicts,
    capped_returns,
    equivalence_shown,
    ever_miss,
    exact_equivalent_shown,
    peeking_row,
    shown_cs,
)

RUNS, LOOKS = 1000, 1000
LIMIT = 0.05 + 3 * math.sqrt(0.05 * 0.95 / RUNS)  # 7.1%
BOUNDED_RUNS = 400
BOUNDED_LIMIT = 0.05 + 3 * math.sqrt(0.05 * 0.95 / BOUNDED_RUNS)  # 8.3%


@pytest.mark.parametrize("name", list(CASES))
def test_anytime_interval_covers_under_peeking_and_is_never_zero_width(name):
    bounded = CASES[name][2] is not None
    runs = BOUNDED_RUNS if bounded else RUNS  # the betting part costs more to simulate
    row = peeking_row(name, runs, LOOKS, seed=11)
    print(f"\n{name}: ever-miss {row['ever_miss']:.1%}, zero width {row['zero_width']:.1%}, "
          f"first shown at look {row['first_look']}")
    assert row["zero_width"] == 0.0
    assert row["ever_miss"] <= (LIMIT if not bounded else BOUNDED_LIMIT)
    if CASES[name][2] is not None:  # with bounds: valid, and shown, from the first episode
        assert row["first_look"] == 1


def test_without_the_guard_the_capped_case_collapses():
    """The simulation can see the failure the guard removes: the plain asymptotic CS on returns that
    are 500 on most seeds shows [500, 500] and misses the mean in about half the runs."""
    x = capped_returns(np.random.default_rng(3), (RUNS, LOOKS))
    lo, hi = asymptotic_cs(x)
    lo[:, :29] = np.nan  # its old burn-in
    miss, zero = ever_miss(lo, hi, CAPPED_MEAN)
    assert miss > 0.4 and zero > 0.4


def test_path_stats_shows_what_the_simulation_measures():
    x = capped_returns(np.random.default_rng(5), (4, 300))
    for bounds in (None, (0.0, CAP)):
        lo, hi = shown_cs(x, bounds)
        for run in range(x.shape[0]):
            ps = PathStats(return_bounds=bounds)
            for i, v in enumerate(x[run].tolist()):
                ps.add(EpisodeRecord("A", i, v, int(v)))
                cs = ps.cs()[0]  # what summary()["cs95"] shows (summary's IQM bootstrap would dominate)
                if np.isnan(lo[run, i]):
                    assert cs is None
                else:
                    assert list(cs) == pytest.approx([lo[run, i], hi[run, i]], rel=1e-9)
            assert ps.summary()["cs95"] == (None if cs is None else list(cs))
            assert "asymptotic" in ps.summary()["cs_method"] or bounds is not None


def test_comparison_shows_what_the_simulation_measures():
    b = capped_returns(np.random.default_rng(8), (6, 200))
    for bounds in (None, (0.0, CAP)):
        lo, hi, margin, equivalent, differ = ab_verdicts(b, bounds)
        for run in range(b.shape[0]):
            cmp = Comparison("A", "B", return_bounds=bounds)
            for i, v in enumerate(b[run].tolist()):
                cmp.add(EpisodeRecord("A", i, CAP, 500))
                cmp.add(EpisodeRecord("B", i, v, int(v)))
                s = cmp.summary()
                want = "differ" if differ[run, i] else ("equivalent" if equivalent[run, i] else "undecided")
                assert s.verdict == want, (bounds, run, i)
                if np.isnan(lo[run, i]):
                    assert s.diff_cs95 is None
                else:
                    assert s.diff_cs95 == pytest.approx([lo[run, i], hi[run, i]], rel=1e-9)
            if not np.isnan(margin[run]):
                assert s.margin == pytest.approx(margin[run])


@pytest.mark.parametrize("bounds", [None, (0.0, CAP)], ids=["no-bounds", "bounds-0-500"])
def test_a_small_real_difference_is_never_shown_equivalent_with_a_collapsed_interval(bounds):
    row = equivalence_shown(RUNS, LOOKS, bounds=bounds, seed=13)
    print(f"\nA 500 vs B capped, {bounds}: equivalent ever {row['equivalent']:.1%}, falsely (|diff| >= margin) "
          f"{row['false_equivalent']:.1%}, zero width {row['zero_width']:.1%}, ever-miss {row['ever_miss']:.1%}, "
          f"differ at look {LOOKS} {row['final_differ']:.1%}")
    assert row["zero_width"] == 0.0
    assert row["false_equivalent"] <= LIMIT
    assert row["ever_miss"] <= LIMIT


def test_deterministic_paths_differing_on_ten_percent_of_seeds_are_never_shown_equivalent():
    assert exact_equivalent_shown(RUNS, LOOKS, p_differ=0.1, seed=17) <= LIMIT
    assert exact_equivalent_shown(RUNS, LOOKS, p_differ=0.0, seed=17) == 1.0  # identical: equivalent
    # and the Comparison itself, after every pair (fewer runs: it is per record)
    rng = np.random.default_rng(19)
    shown = 0
    for _run in range(100):
        cmp = Comparison("A", "B", deterministic=True)
        ever = False
        for seed in range(200):
            ret_b = 500.0 if rng.random() >= 0.1 else 123.0
            cmp.add(EpisodeRecord("A", seed, 500.0, 500))
            cmp.add(EpisodeRecord("B", seed, ret_b, 500))
            ever |= cmp.summary().verdict == "equivalent"
        shown += ever
    assert shown <= 0.05 * 100 + 3 * math.sqrt(0.05 * 0.95 * 100)

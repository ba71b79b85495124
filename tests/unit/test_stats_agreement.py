"""Same action on the same observation, to a tolerance; the noise floor (tui_eval/stats/agreement.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tui_eval.stats.agreement import (
    ActionPairs,
    Agreement,
    NoiseFloor,
    Tolerance,
    action_scale,
    default_tolerance,
    measure,
    noise_floor,
)

F32 = Tolerance(1e-5, 1e-5, "float32")


def pairs(sent, given, seed=7, on="a", other="b") -> ActionPairs:
    obs = [np.array([float(t)]) for t in range(len(sent))]
    return ActionPairs(seed, on, other, obs, [np.asarray(x, dtype=np.float32) for x in sent],
                       [np.asarray(x, dtype=np.float32) for x in given])


def test_the_tolerance_follows_the_coarser_float_type_unless_given():
    assert (default_tolerance(["float32", "float64"]).atol, default_tolerance(["float64", "float64"]).atol) == \
        (1e-5, 1e-9)
    assert default_tolerance(["float16", "float32"]).atol == 1e-2
    assert default_tolerance(["int"]).source.startswith("float32 actions (assumed")
    assert default_tolerance(["float32"], 3e-4) == Tolerance(3e-4, 3e-4, "--action-tolerance")


def test_rounding_below_the_tolerance_is_within_and_its_numbers_are_the_largest_gaps():
    sent = [[0.5, -0.25], [1.0, 0.0], [0.125, 0.75]]
    given = [[0.5 + 2e-7, -0.25], [1.0, 0.0], [0.125, 0.75 - 4e-7]]
    found = measure([pairs(sent, given)], F32, np.array([2.0, 2.0]), "half the action space's width")
    assert found.within and found.steps == 3 and found.mismatches == 0
    assert found.max_abs == pytest.approx(4e-7, rel=0.1)  # float32's step near 0.75 rounds it
    assert found.max_rel == pytest.approx(found.max_abs / 2.0)
    assert found.worst is not None and found.worst.step == 2 and found.worst.actions["a"] == [0.125, 0.75]


def test_one_step_beyond_the_tolerance_is_a_difference_with_that_step_and_both_actions():
    sent = [[0.5], [0.5], [0.5]]
    given = [[0.5], [0.5016], [0.5]]
    found = measure([pairs(sent, given)], F32)
    assert not found.within and found.mismatches == 1
    assert found.worst is not None and found.worst.step == 1 and found.worst.observation == [1.0]
    assert found.worst.actions == {"a": [0.5], "b": [pytest.approx(0.5016)]}


def test_relative_tolerance_admits_larger_gaps_on_larger_actions():
    big = measure([pairs([[1000.0]], [[1000.0 + 6e-3]])], F32)  # 6e-3 <= 1e-5 + 1e-5 * 1000
    assert big.within
    small = measure([pairs([[1.0]], [[1.0 + 6e-3]])], F32)
    assert not small.within


def test_discrete_actions_must_be_equal_and_count_mismatches():
    sent = [np.int64(0), np.int64(1), np.int64(1)]
    given = [np.int64(0), np.int64(0), np.int64(1)]
    direction = ActionPairs(3, "a", "b", [[0.0]] * 3, sent, given)
    found = measure([direction], F32)
    assert found.discrete and not found.within and found.mismatches == 1 and found.worst.step == 1


def test_shapes_that_differ_or_non_finite_actions_are_never_within():
    assert not measure([pairs([[0.5, 0.5]], [[0.5]])], F32).within
    nan = measure([pairs([[0.5]], [[math.nan]])], F32)
    assert not nan.within and nan.max_abs == math.inf


def test_both_directions_are_counted_and_the_agreement_round_trips_through_json():
    there = pairs([[0.1], [0.2]], [[0.1], [0.2]], on="a", other="b")
    back = pairs([[0.3]], [[0.3 + 1e-7]], on="b", other="a")
    found = measure([there, back], F32, dtypes={"a": "float32", "b": "float64"})
    assert found.steps == 3 and found.worst.on == "b" and found.seeds == (7,)
    assert Agreement.from_json(found.to_json()) == found


def test_nothing_to_compare_is_not_within():
    assert not measure([], F32).within


def test_the_action_scale_is_half_the_bounded_width_else_the_largest_action_sent():
    scale, source = action_scale([[0.5]], [-2.0], [2.0])
    assert scale.tolist() == [2.0] and "width" in source
    scale, source = action_scale([[0.5, -3.0], [-1.0, 1.0]], [-np.inf, -np.inf], [np.inf, np.inf])
    assert scale.tolist() == [1.0, 3.0] and "largest" in source


def test_the_noise_floor_is_the_spread_of_a_path_against_itself():
    floor = noise_floor("runner", [10.0, 12.0, 9.0], [10.0, 11.0, 10.0], [True, False, False])
    assert (floor.seeds, floor.repeated, floor.diff_mean, floor.max_abs) == (3, 1, 0.0, 1.0)
    assert floor.diff_spread == pytest.approx(np.std([0.0, 1.0, -1.0], ddof=1))
    assert not floor.zero and NoiseFloor.from_json(floor.to_json()) == floor
    zero = noise_floor("runner", [5.0, 6.0], [5.0, 6.0], [True, True])
    assert zero.zero and zero.diff_spread == 0.0


def test_a_same_policy_comparison_is_statistical_and_every_view_says_same_policy_first():
    """The views' words for a checked pair (the headless table and report, `ls`, the app's bar), from a real
    `Comparison` whose shared proof holds a check's answer: within the tolerance, refuted, a floor of 0."""
    from tui_eval.commands.ls import verdict_cell
    from tui_eval.records import EpisodeRecord
    from tui_eval.stats.compare import Comparison
    from tui_eval.stats.exact_proof import REFUTED, ExactProof
    from tui_eval.ui.widgets.verdict import verdict_text
    from tui_eval.views.format import verdict_line

    proof = ExactProof()
    cmp = Comparison("runner", "onnx", deterministic=True, proof=proof, margin=1.0)
    for seed in range(40):
        for path, ret in (("runner", 10.0 + seed), ("onnx", 10.0 + seed + (1e-6 if seed == 3 else 0.0))):
            cmp.add(EpisodeRecord(path=path, seed=seed, block=0, ret=ret, length=100, explore=False))
    assert cmp.summary().verdict == "undecided"  # a differing seed waits for its check
    proof.state, proof.seed = REFUTED, 3
    proof.agreement = measure([pairs([[0.5]], [[0.5 + 1e-7]])], F32)
    proof.floor = noise_floor("runner", [13.0], [13.0], [True])
    summary = cmp.summary()
    assert summary.same_policy is True and not summary.exact and summary.verdict == "equivalent"
    line = verdict_line(summary)
    assert line.startswith("verdict: SAME POLICY (max |Δaction| 1.2e-07 ≤ 1e-05); returns EQUIVALENT within ±1.00")
    assert "noise floor 0: runner against itself on 1 seed(s)" in line
    assert verdict_cell({"verdict": "equivalent", "snapshot": {"comparison": summary.to_json()}}) == \
        "SAME POLICY (returns equivalent)"
    assert verdict_text(summary).plain.startswith(" SAME POLICY  max |Δaction| 1.2e-07 ≤ 1e-05;  returns EQUIVALENT")


def test_a_contract_number_rounded_to_the_exports_precision_is_kept_and_said():
    from tui_eval.envs.contract import compare_names, compare_numbers

    rounded = compare_numbers("action scale", [0.373, 0.249], [0.372753, 0.24925], 3, ["hip", "knee"])
    assert rounded.ok and rounded.note == "rounded to 3 decimals (0.249 vs 0.24925, 0.1 %)"  # the largest rounding
    go1 = compare_numbers("action scale", [0.373], [0.372753], 3)
    assert go1.ok and go1.note == "rounded to 3 decimals (0.373 vs 0.372753, 0.066 %)"
    wrong = compare_numbers("action scale", [0.186, 0.249], [0.372753, 0.24925], 3, ["hip", "knee"])
    assert not wrong.ok and wrong.note == "hip: 0.186 in the export, 0.372753 in the env"
    assert not compare_numbers("joint stiffness", [1.0], [1.0, 2.0]).ok
    assert compare_names("joint order", ["a", "b"], ["a", "c"]).note == "not in the env: b; not in the export: c"
    unsaid = compare_numbers("joint damping", None, [0.5])
    assert unsaid.ok and unsaid.note == "the export does not say"

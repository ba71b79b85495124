"""Every kind of path is fed the other's observations (tui_eval/paths/agreement.py), or says why it cannot: RLlib's
connectors and a `--vs` checkpoint, rsl_rl's runner against its TorchScript and its ONNX export (batch 1), and an
episode-form `--path` loop, which exposes no policy and records no observations."""

from __future__ import annotations

import pytest

from tests.support.common import ROOT
from tui_eval.config.spec import RunSpec
from tui_eval.kinds import load_kind
from tui_eval.paths.agreement import agreement

PENDULUM, CARTPOLE = ROOT / "assets" / "ppo_pendulum", ROOT / "assets" / "ppo_cartpole"
POINTGOAL = ROOT / "assets" / "rsl_pointgoal" / "model_39.pt"
SEED = 1000000003


def agreed(checkpoint, names, **spec):
    kind = load_kind(RunSpec(checkpoint=str(checkpoint), num_envs=2, **spec))
    paths = {n: kind.build_path(n, False) for n in names}
    try:
        found, notes, _ = agreement(paths, names[0], names[1], SEED)
        return found, notes
    finally:
        for path in paths.values():
            path.close()


@pytest.mark.parametrize("checkpoint, names, spec, steps", [
    (PENDULUM, ["connectors", "vs"], {"vs": str(PENDULUM)}, 400),  # the same checkpoint: the same actions, bit for bit
    (POINTGOAL, ["runner", "jit"], {}, None),
    (POINTGOAL, ["runner", "onnx"], {}, None),
])
def test_each_path_is_fed_the_others_observations_both_ways(checkpoint, names, spec, steps):
    found, notes = agreed(checkpoint, names, **spec)
    assert found is not None and not notes, notes
    assert found.within and found.max_abs <= 1e-5 and found.seeds == (SEED,)
    assert found.steps == steps if steps is not None else found.steps >= 2 and found.steps % 2 == 0
    assert set(found.dtypes) == set(names) and found.worst is not None and found.worst.on in names


def test_an_episode_form_loop_says_it_cannot_be_fed_and_no_agreement_is_claimed():
    found, notes = agreed(CARTPOLE, ["connectors", "ep"],
                          custom_paths=[f"ep={ROOT / 'tests/support/doctor_loops.py'}:raw_action_episode"])
    assert found is None
    assert "ep does not expose its policy to be fed other observations" in notes
    assert any("records the actions it sent but not its observations" in n for n in notes)

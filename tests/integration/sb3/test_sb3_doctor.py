"""The doctor on SB3's deployment bugs, each planted in a real export of a real model and named with its proof:
an ONNX export without the VecNormalize statistics, one whose Box action is not unscaled as `predict` unscales it,
one with neither (the bare policy, as SB3's recipe writes it), one whose action is not clipped as `predict` clips
it (SB3's own recipe on a PPO Pendulum), and `predict` sampling
where the export takes the deterministic action; each fix in SB3's terms."""

from __future__ import annotations

import re
import shutil

import pytest

from tests.support.engines import plan_for
from tests.support.sb3_runs import ZOO_ENV, export_onnx
from tui_eval.doctor.diagnosis import diagnose_plan

SEED = 1_000_000_000


def _planted(sac_run, tmp_path, **export):
    run = tmp_path / "logs" / "sac" / sac_run.name
    shutil.copytree(sac_run, run)
    export_onnx(run / f"{ZOO_ENV}.zip", run / f"{ZOO_ENV}.onnx", **export)
    return run


@pytest.mark.parametrize("normalized, unscaled, cause, proof, fix", [
    (False, True, "`onnx` lacks the observation normalizer",
     "with `predict`'s normalized observation (its env_to_module stage) as input, `onnx`'s action equals "
     "`predict`'s", "put the run's VecNormalize into the export"),
    (True, False, "`onnx` sends the policy's squashed action (in [-1, 1]) to the env",
     "unsquashed from [-1, 1] to the action space's bounds [[-2.0], [2.0]], `onnx`'s actions equal `predict`'s",
     "unscale the export's action as predict does: policy.unscale_action(action)"),
    (False, False, "`onnx` lacks the observation normalizer and sends the policy's squashed action",
     "and its output unsquashed from [-1, 1] to the action space's bounds [[-2.0], [2.0]], `onnx`'s action equals "
     "`predict`'s at steps 0-19", "put both into the export, as predict applies them"),
], ids=["no-vecnormalize", "not-unscaled", "bare-policy"])
def test_the_doctor_names_a_planted_export_with_its_proof(sac_run, tmp_path, normalized, unscaled, cause, proof,
                                                          fix):
    stats = sac_run / ZOO_ENV / "vecnormalize.pkl"
    run = _planted(sac_run, tmp_path, vecnormalize=stats if normalized else None, unscale=unscaled)
    d = diagnose_plan(plan_for(run, "--episodes", "2", "--num-envs", "2", log=tmp_path / "r.sqlite"), seed=SEED)
    top = d.findings[0]
    assert top.cause.startswith(cause), top.cause
    assert "proof: " in top.evidence and proof in top.evidence, top.evidence
    assert top.step == 0 and set(top.paths) == {"predict", "onnx"}
    assert top.fix.startswith(fix), top.fix  # the kind's own fix (probe_fix), in SB3's terms


def test_the_doctor_names_predict_sampling_against_a_deterministic_export(sac_run, tmp_path):
    stats = sac_run / ZOO_ENV / "vecnormalize.pkl"
    run = _planted(sac_run, tmp_path, vecnormalize=stats, unscale=True)  # faithful: only explore differs
    plan = plan_for(run, "--episodes", "2", "--num-envs", "2", "--explore", "predict=on", log=tmp_path / "r.sqlite")
    top = diagnose_plan(plan, seed=SEED).findings[0]
    assert top.cause == "path `predict` samples actions (explore on); `onnx` takes the distribution's mode"
    assert "proof: asked 4 times for its action on the same observation at step 0, `predict` returns" in top.evidence


def test_the_doctor_names_sb3s_own_recipe_leaving_ppos_action_unclipped(ppo_pendulum_zip, tmp_path):
    """No export next to the model: the kind writes one with SB3's documented recipe, whose Gaussian mean goes to
    the env unclipped where `predict` clips it to the action space's ±2."""
    plan = plan_for(ppo_pendulum_zip, "--env", ZOO_ENV, "--episodes", "2", "--num-envs", "2",
                    log=tmp_path / "r.sqlite")
    top = diagnose_plan(plan, seed=SEED).findings[0]
    assert top.cause == "`predict` clips its actions where `onnx` does not (or at other bounds)", top.cause
    assert "proof: `onnx`'s actions clipped to ±2 equal `predict`'s at steps" in top.evidence, top.evidence
    sent = re.search(r"`onnx` sends \[([-0-9.e]+)\], `predict` \[(-?2\.0)\]", top.evidence)
    assert sent is not None and abs(float(sent.group(1))) > 2.0, top.evidence  # past the bound, as said
    assert top.fix.startswith("clip the export's action to the action space as predict does: np.clip"), top.fix

"""The divergence doctor on real checkpoints, one cause injected each: it ranks that cause first; two
faithful deterministic paths give no findings. Custom paths (episode and act form) and --vs run here too."""

from __future__ import annotations

import json
import pickle
import shutil
from pathlib import Path

import numpy as np
import pytest

from tests.support.common import CARTPOLE, PENDULUM, SUPPORT
from tests.support.engines import plan_for
from tests.support.jobs import DOCTOR
from tui_eval.cli import main
from tui_eval.doctor import diagnose_plan
from tui_eval.paths.rerun import STAGES

LOOPS = SUPPORT / "doctor_loops.py"


@pytest.fixture(scope="module")
def trained(prefetcher, tmp_path_factory) -> Path:
    """A MeanStdFilter CartPole and a Pendulum whose evaluation_config cuts episodes to 100 steps."""
    proc, out = prefetcher.wait(DOCTOR, tmp_path_factory.mktemp("doctor_checkpoints"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def diagnose(checkpoint: Path, tmp_path: Path, *args: str, seed: int | None = None):
    plan = plan_for(checkpoint, "--episodes", "3", *args, log=tmp_path / "run.sqlite")
    return diagnose_plan(plan, seed=seed)


def test_faithful_deterministic_paths_have_no_findings(tmp_path):
    # three paths: RLlib's evaluate with explore off, the connectors, and a custom act-form policy
    d = diagnose(CARTPOLE, tmp_path, "--paths", "evaluate,connectors,mine", "--explore", "evaluate=off",
                 "--path", f"mine={LOOPS}:greedy_policy")
    assert d.findings == []
    assert set(d.batch) == {"evaluate", "connectors", "mine"} and len(d.batch["mine"]) == 3
    assert d.batch["mine"] == d.batch["connectors"] == d.batch["evaluate"]
    assert {"explore", "weights", "time limit"} <= {s["fact"] for s in d.same}
    assert d.to_json()["findings"] == []


def test_explore_on_for_one_path_only_is_ranked_first_and_written_as_json(run_dir, capsys):
    out = run_dir / "doctor.json"
    # in-process, as `tui-eval diagnose` runs it (the ray this process already started is reused)
    assert main(["diagnose", str(CARTPOLE), "--episodes", "3", "--json", str(out)]) == 0
    stdout = capsys.readouterr().out
    data = json.loads(out.read_text())
    assert set(data) >= {"findings", "same", "replay"}
    top = data["findings"][0]
    assert set(top) == {"cause", "evidence", "fix", "paths", "stage", "seed", "step"}
    assert "`evaluate` samples actions" in top["cause"] and "--explore evaluate=off" in top["fix"]
    assert top["stage"] == "action" and top["step"] is not None
    assert "samples actions" in stdout.splitlines()[1]


def test_raw_module_action_sent_to_a_box_env_is_ranked_first(tmp_path):
    d = diagnose(PENDULUM, tmp_path, "--paths", "connectors,raw", "--path", f"raw={LOOPS}:raw_action_episode")
    top = d.findings[0]
    assert "`raw` sends the module's `action` to the env" in top.cause
    assert "ACTIONS_FOR_ENV" in top.fix and top.step == 0
    pair = d.replay["pairs"][0]
    assert pair["stage_match"] == {"path": "raw", "stage": "action", "of": "connectors"}


def test_reset_connector_state_is_ranked_first(trained, tmp_path):
    d = diagnose(trained / "meanstd", tmp_path, "--paths", "connectors,fresh",
                 "--path", f"fresh={LOOPS}:fresh_filter_episode")
    top = d.findings[0]
    assert "stateful connector" in top.cause and "MeanStdFilter" in top.evidence
    assert "from_checkpoint" in top.fix
    assert "MeanStdFilter" in json.dumps(d.replay["checkpoint connector state"])


def test_stale_observation_statistics_are_proven_by_the_module_given_the_checkpoints_filter_output(trained, tmp_path):
    d = diagnose(trained / "meanstd", tmp_path, "--paths", "connectors,stale",
                 "--path", f"stale={LOOPS}:stale_statistics_policy")
    top = d.findings[0]
    assert top.cause.startswith("`stale` runs the same module on other inputs: its observation statistics")
    assert "proof: given `connectors`'s env_to_module output" in top.evidence
    assert "`stale`'s module gives `connectors`'s module_out at steps 0-" in top.evidence


def test_perturbed_module_weights_via_vs_are_ranked_first(tmp_path):
    other = tmp_path / "perturbed"
    shutil.copytree(CARTPOLE, other)
    state_file = other / "learner_group" / "learner" / "rl_module" / "default_policy" / "module_state.pkl"
    state = pickle.loads(state_file.read_bytes())
    w = state["pi.net.mlp.0.weight"]
    state["pi.net.mlp.0.weight"] = w + np.random.default_rng(0).normal(0, 1.0, w.shape).astype(w.dtype)
    state_file.write_bytes(pickle.dumps(state))
    d = diagnose(CARTPOLE, tmp_path, "--vs", str(other))
    assert d.paths == ["connectors", "vs"]
    top = d.findings[0]
    assert top.cause == "module weights differ between paths" and "pi.net.mlp.0.weight" in top.evidence
    assert top.stage == "module_out"
    assert "counterfactual: with `" in top.evidence and "'s weights put in, `" in top.evidence


def test_a_value_head_that_differs_is_no_finding_and_is_listed_as_not_acting(tmp_path):
    """The value head chooses no action: its weights may differ (RLlib's policy-inference example's users load
    a module whose value head is not the checkpoint's) without any finding; they are listed apart."""
    other = tmp_path / "value_head"
    shutil.copytree(CARTPOLE, other)
    state_file = other / "learner_group" / "learner" / "rl_module" / "default_policy" / "module_state.pkl"
    state = pickle.loads(state_file.read_bytes())
    for key in ("vf.net.mlp.0.weight", "vf.net.mlp.0.bias"):
        state[key] = state[key] + np.float32(0.5)
    state_file.write_bytes(pickle.dumps(state))
    d = diagnose(CARTPOLE, tmp_path, "--vs", str(other))
    assert not d.findings  # the actions are the checkpoint's: the paths do not diverge
    assert "weights" not in d.differ
    assert d.idle == {"vs": ["vf.net.mlp.0.bias", "vf.net.mlp.0.weight"]}
    assert "differs, does not act" in d.text() and "vf.net.mlp.0.weight" in d.text()
    assert "differing facts" not in d.text()


@pytest.fixture(scope="module")
def time_limit_diagnosis(trained, tmp_path_factory):
    """One diagnosis of the 100-step evaluation checkpoint, read by the tests of its ranking and of its inert list."""
    return diagnose(trained / "eval_time_limit", tmp_path_factory.mktemp("time_limit"), "--explore", "evaluate=off")


def test_evaluation_time_limit_is_ranked_first(time_limit_diagnosis):
    d = time_limit_diagnosis
    top = d.findings[0]
    assert top.cause == "the env's time limit differs between paths"
    assert top.step == 100 and top.stage == "env"
    assert "evaluate: 100; connectors: 200" in top.evidence


def test_a_setting_that_changes_no_action_is_listed_as_not_acting_with_its_swap(time_limit_diagnosis):
    """The evaluation config clips actions that unsquashing already keeps in bounds: putting either path's
    clip_actions into the other changes no action on the replayed steps, so it is no finding."""
    d = time_limit_diagnosis
    assert d.findings[0].cause == "the env's time limit differs between paths"
    assert not any("clip" in f.cause for f in d.findings) and "clip_actions" not in d.differ
    entry = d.inert["clip_actions"]
    assert entry["values"] == {"evaluate": True, "connectors": False}
    assert "with `evaluate`'s clip_actions put in, `connectors` sends the same actions on steps 0-199" in entry["proof"]
    assert "differs, does not act: clip_actions (evaluate: true; connectors: false)" in d.text()


def test_connector_state_is_a_difference_only_where_it_changes_an_action(trained, tmp_path):
    """The evaluation runner's MeanStdFilter counted its own episodes: its state differs from the checkpoint's.
    Whether that changes an action depends on the statistics training left (the fixture is trained afresh): where
    the paths do not part, the state is listed as not acting, with its swap; where they part, the state's
    finding is proven and it is never listed as not acting."""
    d = diagnose(trained / "meanstd", tmp_path, "--explore", "evaluate=off")
    if not d.findings:
        assert "connector state" not in d.differ and "changed no action on the seeds run" not in d.text()
        assert "sends the same actions" in d.inert["connector state"]["proof"]
    else:
        assert "connector state" not in d.inert
        assert d.findings[0].topic in ("normalizer", "connector state") and "proof:" in d.findings[0].evidence


def test_a_freshly_built_evaluate_path_holds_the_weights_evaluate_uses(trained, tmp_path):
    """Replaying a chosen seed runs no batch first: the evaluation runner restored from the checkpoint holds
    its last evaluation's weights until evaluate() syncs them, and must not be reported as other weights."""
    d = diagnose(trained / "eval_time_limit", tmp_path, "--explore", "evaluate=off", seed=1_000_000_000)
    assert d.findings[0].cause == "the env's time limit differs between paths"
    assert not any("weights" in f.cause for f in d.findings)


def test_bad_custom_path_is_one_line_exit_2(run_dir, capsys):
    assert main(["diagnose", str(CARTPOLE), "--path", "nocolon"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "NAME=MODULE:FACTORY" in err


def test_rsl_rl_explore_on_for_the_runner_only_is_ranked_first(tmp_path):
    from tui_eval.demos import demo_checkpoint

    d = diagnose(demo_checkpoint("rsl_rl"), tmp_path, "--explore", "runner=on")
    top = d.findings[0]
    assert "`runner` samples actions" in top.cause and top.step == 0
    # the paths themselves, replayed on the seed, record every stage their policies expose
    assert d.replay["paths"]["jit"]["stages"] == list(STAGES) == d.replay["paths"]["runner"]["stages"]
    pair = d.replay["pairs"][0]
    assert (pair["step"], pair["stage"]) == (0, "action")  # same input, normalizer and MLP: the sampling differs


def test_rsl_rl_runner_and_its_torchscript_export_agree_stage_by_stage(tmp_path):
    from tui_eval.demos import demo_checkpoint

    d = diagnose(demo_checkpoint("rsl_rl"), tmp_path)
    assert d.findings == [] and d.replay["pairs"][0]["kind"] == "none"
    assert d.replay["paths"]["runner"]["stages"] == list(STAGES)

"""The doctor's counterfactual probes on faulty deployments, one mistake each: the top finding names the
mistake and carries its proof (the transformed path agrees with the other). Faithful paths give none."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.support.common import PENDULUM, SUPPORT
from tests.support.doctor_exports import faulty_export, hand_made_export, other_statistics, without_normalizer
from tests.support.engines import plan_for
from tui_eval.doctor import diagnose_plan
from tui_eval.doctor.probes import PROBES

LOOPS = SUPPORT / "doctor_faulty_loops.py"
SEED = 1_000_000_000  # replayed at once where the mistake shows on any seed (no batch run first: faster)


def diagnose(checkpoint: Path, tmp_path: Path, *args: str, seed: int | None = None):
    return diagnose_plan(plan_for(checkpoint, "--episodes", "2", *args, log=tmp_path / "run.sqlite"), seed=seed)


def loops(tmp_path: Path, *names: str, checkpoint: Path = PENDULUM, seed: int | None = SEED):
    """A diagnosis of `names` (connectors or factories in doctor_faulty_loops.py) on the checkpoint."""
    args = ["--paths", ",".join(names)]
    for name in names:
        if name != "connectors":
            factory = name.rstrip("0123456789")
            args += ["--path", f"{name}={LOOPS}:{factory}"]
    return diagnose(checkpoint, tmp_path, *args, seed=seed)


def test_probes_have_distinct_names_and_one_small_interface():
    assert len({p.name for p in PROBES}) == len(PROBES) >= 12
    for p in PROBES:
        assert p.topic and "{sus}" in p.cause and callable(p.applies) and callable(p.test)


@pytest.mark.parametrize("change, cause, proof", [
    (without_normalizer, "`jit` lacks the observation normalizer",
     "with `runner`'s normalized observation (its env_to_module stage) as input, `jit`'s action equals `runner`'s"),
    (other_statistics, "`jit`'s observation normalizer holds other statistics than `runner`'s",
     "the normalizers' statistics differ by up to 0.3 (mean) and"),
], ids=["missing", "other-statistics"])
def test_rsl_rl_export_with_a_faulty_normalizer_is_named_with_its_proof(tmp_path, change, cause, proof):
    from tui_eval.demos import demo_checkpoint

    checkpoint = faulty_export(Path(demo_checkpoint("rsl_rl")).parent, tmp_path / "run", change)
    d = diagnose(checkpoint, tmp_path, seed=SEED)
    top = d.findings[0]
    assert top.cause.startswith(cause) and "proof: with `runner`" in top.evidence and proof in top.evidence
    assert "to 1e-5" in top.evidence and top.step == 0 and top.stage == "env_to_module"
    assert "export" in top.fix and len(d.findings) == 1  # the 'no setting differs' fallback is gone


@pytest.mark.parametrize("form, paths, cause", [
    ("sequential", "runner,jit", "`jit` lacks the observation normalizer"),
    ("onnx", "runner,onnx", "`onnx` lacks the observation normalizer"),
    ("onnx-batch-1", "runner,onnx", "`onnx` lacks the observation normalizer"),
    ("wrapper", "runner,jit", None),
], ids=["plain-sequential", "onnx-other-names", "onnx-batch-1", "wrapper-that-normalizes"])
def test_exports_written_by_hand_are_probed_whole(tmp_path, form, paths, cause):
    """Exports not written by rsl_rl's exporter (no `mlp` or `obs_normalizer` inside to read): the probes run
    them whole, as the path does, on the other path's stages."""
    from tui_eval.demos import demo_checkpoint

    run = tmp_path / "run"
    shutil.copytree(Path(demo_checkpoint("rsl_rl")).parent, run)
    checkpoint = next(run.glob("model_*.pt"))
    (run / "exported" / "policy.pt").unlink()
    hand_made_export(checkpoint, form)
    d = diagnose(checkpoint, tmp_path, "--paths", paths, seed=SEED)
    if cause is None:
        assert not d.findings, d.text()  # its own normalize step: the runner's actions
        return
    top = d.findings[0]
    assert top.cause.startswith(cause), d.text()
    assert f"proof: with `runner`'s normalized observation (its env_to_module stage) as input, `{paths[7:]}`'s " \
           "action equals `runner`'s" in top.evidence


@pytest.mark.parametrize("sus, cause, proof", [
    ("sampling", "`sampling` samples its actions (explore on); `connectors` takes the distribution's mode",
     "asked 4 times for its action on the same observation at step 0, `sampling` returns"),
    ("train_mode", "`train_mode` runs its torch module in train mode",
     "with its torch module switched to eval mode (it holds Dropout in train mode), `train_mode`'s action equals"),
    ("clipped", "`clipped` clips its actions where `connectors` does not",
     "`connectors`'s actions clipped to ±0.5 equal `clipped`'s at steps"),
    ("raw_actions", "path `raw_actions` sends the module's `action` to the env; `connectors` sends the action for "
     "the env", "unsquashed from [-1, 1] to the action space's bounds [[-2.0], [2.0]], `raw_actions`'s actions equal "
     "`connectors`'s at steps 0-19"),
    ("scaled", "`scaled` scales its actions by another factor", "`connectors`'s actions times 0.8 equal `scaled`'s"),
    ("swapped_observation", "`swapped_observation` gives its policy the observation's parts in another order",
     "with the observation's elements 0 and 1 swapped, `swapped_observation`'s action equals `connectors`'s"),
])
def test_a_faulty_loop_against_the_connectors_is_named_with_its_proof(tmp_path, sus, cause, proof):
    d = loops(tmp_path, "connectors", sus)
    top = d.findings[0]
    assert top.cause.startswith(cause), top.cause
    assert "proof: " + proof in top.evidence, top.evidence
    assert top.paths == ["connectors", sus] and top.step is not None


@pytest.mark.parametrize("sus, cause, proof", [
    ("gru_carried_over", "`gru_carried_over` carries its recurrent state over from one episode to the next",
     "built afresh, `gru_carried_over` gives `gru`'s actions at steps 0-"),
    ("gru_reset_every_step", "`gru_reset_every_step` resets its recurrent state on every step",
     "with its recurrent state reset before every step, `gru` gives the actions `gru_reset_every_step` sent"),
])
def test_a_recurrent_state_handled_wrong_is_named_with_its_proof(tmp_path, sus, cause, proof):
    d = loops(tmp_path, "gru", sus, seed=None)  # a state carried over needs episodes played before the replay
    top = d.findings[0]
    assert top.cause.startswith(cause) and "proof: " + proof in top.evidence, top
    assert d.replay["pairs"][0]["step"] == (0 if "carried" in sus else 1)


@pytest.mark.parametrize("names", [("connectors", "faithful"), ("gru", "gru2")], ids=["module", "recurrent"])
def test_faithful_loops_have_no_findings_and_no_probe_notes(tmp_path, names):
    d = loops(tmp_path, *names, seed=None)
    assert d.findings == [] and len(d.batch[names[1]]) == 2 and d.replay["pairs"][0]["kind"] == "none"
    assert not any("probe" in n for n in d.notes)


def test_float64_where_the_other_path_rounds_to_float32_is_named_with_its_proof(tmp_path):
    # --import: the loops' file registers FarPendulum-v0, whose observations are float64
    d = diagnose(PENDULUM, tmp_path, "--import", str(LOOPS), "--env", "FarPendulum-v0", "--paths", "float32,float64",
                 "--path", f"float32={LOOPS}:float32", "--path", f"float64={LOOPS}:float64", seed=SEED)
    top = d.findings[0]
    assert top.cause.startswith("`float64` computes on the float64 observation where `float32` rounds it to float32")
    assert "proof: with the float64 observation rounded to float32" in top.evidence


RSL_LOOPS = SUPPORT / "doctor_rsl_loops.py"
POINT_GOAL = ("--env", "PointGoal-v0", "--env-config", '{"max_episode_steps": 25}')


@pytest.fixture(scope="module")
def rsl_lstm(tmp_path_factory) -> Path:
    """A tiny LSTM actor trained here, with rsl_rl's own TorchScript export next to it (exported/policy.pt)."""
    import json

    from tests.support.doctor_exports import export_next_to
    from tests.support.rsl_train import recurrent_cfg, train

    config = json.loads(POINT_GOAL[3])
    checkpoint = train(tmp_path_factory.mktemp("lstm"), recurrent_cfg("lstm"), "PointGoal-v0", config)
    return export_next_to(checkpoint, env_id="PointGoal-v0", env_config=config)


def rsl_loops(checkpoint: Path, tmp_path: Path, *names: str, seed: int | None = None):
    args = [a for n in names if n.startswith("export_loop") for a in ("--path", f"{n}={RSL_LOOPS}:{n}")]
    return diagnose(checkpoint, tmp_path, *POINT_GOAL, "--paths", ",".join(names), *args, seed=seed)


@pytest.mark.parametrize("ref, sus, cause, proof, step", [
    ("runner", "export_loop_reset_every_step",
     "`export_loop_reset_every_step` resets its recurrent state on every step",
     "with its recurrent state reset before every step, `runner` gives the actions `export_loop_reset_every_step` "
     "sent at steps 1-", 1),
    ("jit", "export_loop_reset_every_step", "`export_loop_reset_every_step` resets its recurrent state on every step",
     "with its recurrent state reset before every step, `jit` gives the actions", 1),
    ("runner", "export_loop_carried_over", "`export_loop_carried_over` carries its recurrent state over from one "
     "episode to the next", "built afresh, `export_loop_carried_over` gives `runner`'s actions at steps 0-19", 0),
], ids=["runner-reset-every-step", "jit-reset-every-step", "runner-carried-over"])
def test_an_rsl_rl_recurrent_export_deployed_with_its_state_handled_wrong_is_named(rsl_lstm, tmp_path, ref, sus,
                                                                                   cause, proof, step):
    d = rsl_loops(rsl_lstm, tmp_path, ref, sus)  # the batch first: a state carried over needs earlier episodes
    top = d.findings[0]
    assert top.cause.startswith(cause) and "proof: " + proof in top.evidence, top
    assert top.step == step and d.replay["probes"]["paths"][ref] == ["stepper"]


def test_an_rsl_rl_recurrent_export_deployed_right_has_no_findings(rsl_lstm, tmp_path):
    d = rsl_loops(rsl_lstm, tmp_path, "runner", "export_loop")
    assert d.findings == [] and d.replay["pairs"][0]["kind"] == "none" and len(d.batch["export_loop"]) == 2


def test_an_rsl_rl_export_loop_without_the_env_cfgs_clip_actions_is_named(tmp_path):
    """The agent cfg's clip_actions (applied by the env wrapper, as Isaac Lab's) clips the runner's actions; a
    deployment loop that calls exported/policy.pt and sends its output as it is does not clip."""
    import shutil

    import yaml

    from tui_eval.demos import demo_checkpoint

    run = tmp_path / "run"
    shutil.copytree(Path(demo_checkpoint("rsl_rl")).parent, run)
    cfg = yaml.safe_load((run / "params" / "agent.yaml").read_text())
    (run / "params" / "agent.yaml").write_text(yaml.safe_dump({**cfg, "clip_actions": 0.3}))
    checkpoint = next(run.glob("model_*.pt"))
    d = diagnose(checkpoint, tmp_path, "--paths", "runner,export_loop", "--path",
                 f"export_loop={RSL_LOOPS}:export_loop", seed=SEED)
    top = d.findings[0]
    assert top.cause.startswith("`runner` clips its actions where `export_loop` does not"), top
    assert "proof: `export_loop`'s actions clipped to ±0.3 equal `runner`'s at steps 0-" in top.evidence
    assert "clip_actions" in top.fix and d.replay["pairs"][0]["values"]["runner"] == [-0.3, -0.3]


RLLIB_LOOPS = SUPPORT / "doctor_loops.py"


def test_an_rllib_lstm_loop_that_never_resets_its_state_between_episodes_is_named(connector_zoo, tmp_path):
    """The LSTM checkpoint's connectors vs a user loop carrying the last episode's state into the next: a few
    episodes first (discrete actions shrug off a small state error), then the replay of the first that differs."""
    d = diagnose(connector_zoo / "lstm", tmp_path, "--episodes", "4", "--paths", "connectors,lstm_carried_over",
                 "--path",
                 f"lstm_carried_over={RLLIB_LOOPS}:lstm_carried_over")
    top = d.findings[0]
    assert top.cause.startswith("`lstm_carried_over` carries its recurrent state over from one episode to the next")
    assert "proof: built afresh, `lstm_carried_over` gives `connectors`'s actions at steps 0-" in top.evidence
    assert d.seed != min(d.batch["connectors"])  # not the first episode: the state came from an earlier one


def test_an_rllib_lstm_path_reruns_its_own_episode_step_by_step(connector_zoo, tmp_path):
    """The doctor's stepper for a built-in recurrent path (its module's state carried in an episode of its own)
    gives back the actions the path's replay sent, step by step, from the episode's start or after its history."""
    from tui_eval.doctor.replay import replay
    from tui_eval.doctor.sides import build_side
    from tui_eval.doctor.static_diff import probe
    from tui_eval.paths.rerun import run_policy
    from tui_eval.session import start_engine

    plan = plan_for(connector_zoo / "lstm", "--episodes", "1", "--paths", "connectors", log=tmp_path / "run.sqlite")
    engine = start_engine(plan)
    try:
        pr = probe(engine.paths["connectors"], plan.kind)
        side = build_side(pr, replay(pr, SEED))
    finally:
        engine.close()
    assert side.stepper is not None and not side.stateless
    obs, sent = side.steps("obs"), [int(a) for a in side.steps("action_for_env")]
    assert [int(a) for a in run_policy(side.stepper, [], obs)] == sent and len(sent) >= 5
    assert [int(a) for a in run_policy(side.stepper, obs[:3], obs[3:])] == sent[3:]  # after its own history


@pytest.mark.parametrize("sus", ["export_loop_carried_over", "export_loop"])
def test_the_apps_diagnosis_on_fresh_paths_says_what_a_carried_state_hides(rsl_lstm, tmp_path, sus):
    """`d` in the app rebuilds the paths: a state carried over between the run's episodes cannot show in the
    replay. The diagnosis says so, and names a carried state where only the run's returns differ; a faithful
    loop has no findings."""
    from tests.support.engines import run_to_end
    from tui_eval.doctor.live import diagnose_live

    args = (*POINT_GOAL, "--episodes", "3", "--paths", f"runner,{sus}", "--path", f"{sus}={RSL_LOOPS}:{sus}")
    _, records = run_to_end(rsl_lstm, *args, log=tmp_path / "run.sqlite")
    d = diagnose_live(plan_for(rsl_lstm, *args, log=tmp_path / "live.sqlite"), records, {"runner": False, sus: False})
    assert any(n.startswith("the paths were built afresh for this diagnosis") and f"`{sus}`" in n for n in d.notes)
    if sus == "export_loop":
        assert d.findings == []
        return
    top = d.findings[0]
    assert top.cause.startswith("a state carried over from earlier episodes")
    assert "the run's returns differ" in top.cause
    assert f"tui-eval diagnose {rsl_lstm} --paths runner,{sus}" in top.fix and len(d.findings) == 1

"""The `deploy` path of an mjlab run (its `<run>.onnx` driven as its deployment contract states): on another task
with `--vs-env` (sim-to-sim), with a contract field of the wrong length (one line, not the env's own values
played silently), and with observations built in the contract's joint order as a deploy fills them."""

from __future__ import annotations

import pytest

pytest.importorskip("mjlab", reason="the mjlab extra is not installed: pip install -e '.[mjlab]'")

from tests.support.cli_jobs import result_of  # noqa: E402
from tests.support.mjlab_jobs import WRONG_LENGTH  # noqa: E402
from tests.support.mjlab_run import with_metadata  # noqa: E402
from tui_eval.config.spec import RunSpec  # noqa: E402
from tui_eval.errors import BadInput  # noqa: E402
from tui_eval.kinds import load_kind  # noqa: E402

TASK, OTHER = "Mjlab-Cartpole-Balance", "Mjlab-Cartpole-Swingup"
SHORT = {"episode_length_s": 1.0}


def test_the_deploy_path_plays_on_another_task_with_vs_env(mjlab_deploy_run):
    proc, summary = mjlab_deploy_run  # deploy,onnx --vs-env Mjlab-Cartpole-Swingup (conftest.py)
    paths = summary["paths"]
    assert [paths[p]["episodes"] for p in ("deploy", "onnx", "deploy@vs-env")] == [8, 8, 8]
    assert paths["deploy@vs-env"]["mean"] != paths["deploy"]["mean"]  # the swing-up starts hanging down
    assert "deploy@vs-env" in proc.stdout and "Mjlab-Cartpole-Swingup" in proc.stderr


def _gains_on(kind, name: str) -> list[float]:
    path = kind.build_path(name, False)
    try:
        path.env.get_observations()  # builds the worlds
        model = path.env.inner.unwrapped.sim.model
        return model.actuator_gainprm[0, :, 0].tolist()
    finally:
        path.close()


def test_the_other_tasks_deploy_env_takes_the_contracts_gains(mjlab_run_folder, tmp_path):
    planted = with_metadata(mjlab_run_folder, tmp_path, joint_stiffness="5.000")
    kind = load_kind(RunSpec(checkpoint=str(planted), env_id=TASK, num_envs=1, env_config=SHORT))
    other = kind.on_other_env(RunSpec(checkpoint=str(planted), vs_env=OTHER, vs_env_config=SHORT))
    assert other.env_id == OTHER
    assert _gains_on(other, "deploy") == [5.0] and _gains_on(other, "onnx") == [1.0]


def test_a_field_of_the_wrong_length_is_one_note_and_one_line_for_the_deploy_path(mjlab_run_folder, prefetcher,
                                                                                  tmp_path):
    three = with_metadata(mjlab_run_folder, tmp_path / "three", joint_stiffness="5.000,5.000,5.000")
    contract = load_kind(RunSpec(checkpoint=str(three), env_id=TASK, num_envs=1)).deploy_contract().to_json()
    assert contract["notes"] == ["the export's metadata field joint_stiffness has 3 values for the 2 joints of "
                                 "joint_names: export again"]
    assert [i["name"] for i in contract["items"]] == ["normalizer"]  # the rest of the run reads no metadata
    # two gains for the cartpole's one actuated joint: consistent in the file, not for the env
    two = with_metadata(mjlab_run_folder, tmp_path / "two", joint_stiffness="5.000,5.000", joint_damping="0.000,0.000")
    kind = load_kind(RunSpec(checkpoint=str(two), env_id=TASK, num_envs=1, env_config=SHORT))
    with pytest.raises(BadInput, match="^the deploy path drives the export by its metadata, whose joint_stiffness "
                                       "has 2 values for the env's 1 actuated joints; run the other paths"):
        _gains_on(kind, "deploy")
    # the same line from the path's own process (where a run builds it): the message alone, not its type's name
    proc, _ = result_of(prefetcher, WRONG_LENGTH, tmp_path / "job")  # onnx,deploy on the same copy (a background job)
    assert proc.returncode == 2 and proc.stderr.splitlines()[-1].startswith(
        "tui-eval: error: the deploy path drives the export by its metadata, whose joint_stiffness"), proc.stderr[-800:]


def test_a_deploys_observations_follow_the_contracts_joint_order():
    from tui_eval.integrations.rsl_rl.mjlab.contract import robot_of
    from tui_eval.integrations.rsl_rl.mjlab.deploy import observation_order
    from tui_eval.integrations.rsl_rl.mjlab.env import make_env

    env = make_env(1, "cpu", 1, "Mjlab-Velocity-Flat-Unitree-Go1", {}, {})
    try:
        joints = list(robot_of(env.unwrapped).joint_names)
        swapped = [joints[1], joints[0], *joints[2:]]
        order = observation_order({"joint_names": swapped}, env.unwrapped)
        assert observation_order({"joint_names": joints}, env.unwrapped) is None
    finally:
        env.close()
    # base_lin_vel, base_ang_vel, projected_gravity (3 each), then joint_pos, joint_vel, actions (12 each), command
    moved = {k: v for k, v in enumerate(order) if k != v}
    assert moved == {9: 10, 10: 9, 21: 22, 22: 21, 33: 34, 34: 33}
    cartpole = make_env(1, "cpu", 1, TASK, {}, {})
    try:  # its terms each read one named joint: no joint order to follow
        assert observation_order({"joint_names": ["hinge_1", "slider"]}, cartpole.unwrapped) is None
    finally:
        cartpole.close()

"""A tiny mjlab run, made the way a user makes one: mjlab's own `train` command, unchanged (3 PPO iterations
of its cartpole task on 8 worlds, on the CPU), writing `logs/rsl_rl/cartpole/<run>/` with `model_*.pt` and
`params/`. Then `<run>.onnx`, written as mjlab's velocity runner writes it at each save (its
`export_policy_to_onnx` and `attach_metadata_to_onnx`; cartpole's default runner writes none).

    python -m tests.support.mjlab_run FOLDER    (prints the run folder)
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

TASK = "Mjlab-Cartpole-Balance"
ITERATIONS = 3


def train(folder: Path) -> Path:
    train_command = shutil.which("train", path=os.pathsep.join([str(Path(sys.executable).parent),
                                                                 os.environ.get("PATH", "")]))
    assert train_command, "mjlab's train command is not installed"
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "MJLAB_WARP_QUIET": "1"}
    subprocess.run([train_command, TASK, "--gpu-ids", "None", "--env.scene.num-envs", "8",
                    "--agent.max-iterations", str(ITERATIONS), "--agent.logger", "tensorboard"],
                   cwd=folder, env=env, check=True, stdout=subprocess.DEVNULL)
    (run,) = (folder / "logs" / "rsl_rl" / "cartpole").iterdir()
    return run


def write_onnx(run: Path) -> Path:
    from mjlab.envs import ManagerBasedRlEnv
    from mjlab.rl import MjlabOnPolicyRunner, RslRlVecEnvWrapper
    from mjlab.rl.exporter_utils import attach_metadata_to_onnx
    from mjlab.tasks.registry import load_env_cfg, load_rl_cfg

    cfg = load_env_cfg(TASK)
    cfg.scene.num_envs = 1
    env = RslRlVecEnvWrapper(ManagerBasedRlEnv(cfg=cfg, device="cpu"))
    runner = MjlabOnPolicyRunner(env, asdict(load_rl_cfg(TASK)), device="cpu")
    runner.load(str(run / f"model_{ITERATIONS - 1}.pt"), load_cfg={"actor": True}, strict=True, map_location="cpu")
    with contextlib.redirect_stdout(io.StringIO()):  # the runner prints its models
        runner.export_policy_to_onnx(str(run), f"{run.name}.onnx")
    attach_metadata_to_onnx(str(run / f"{run.name}.onnx"), base_metadata(env.unwrapped))
    env.close()
    return run / f"{run.name}.onnx"


def base_metadata(env) -> dict:
    """mjlab's `get_base_metadata(env, "local")`, written out for the cartpole (whose entity is `cartpole`, not
    `robot`, and whose action term is `effort`, not `joint_pos`): the same fields from the same places."""
    robot = env.scene["cartpole"]
    action = env.action_manager.get_term("effort")
    ctrl = {a.target.split("/")[-1]: a.id for a in robot.spec.actuators}
    ids = [ctrl[j] for j in robot.joint_names if j in ctrl]
    model = env.sim.mj_model
    terms = list(env.observation_manager.active_terms["actor"])
    cfgs = [env.observation_manager.get_term_cfg("actor", t) for t in terms]
    scale = action._scale
    return {
        "run_path": "local", "joint_names": list(robot.joint_names),
        "joint_stiffness": model.actuator_gainprm[ids, 0].tolist(),
        "joint_damping": (-model.actuator_biasprm[ids, 2]).tolist(),
        "default_joint_pos": robot.data.default_joint_pos[0].cpu().tolist(),
        "command_names": list(env.command_manager.active_terms), "observation_names": terms,
        "observation_terms_scale": [1.0 if c.scale is None else c.scale for c in cfgs],
        "observation_terms_flatten_history_dim": [c.flatten_history_dim for c in cfgs],
        "observation_terms_history_length": [c.history_length for c in cfgs],
        "observation_terms_clip": [[float("-inf"), float("inf")] if c.clip is None else list(c.clip) for c in cfgs],
        "action_scale": scale[0].cpu().tolist() if hasattr(scale, "cpu") else [float(scale)] * action.action_dim,
    }


if __name__ == "__main__":
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("MJLAB_WARP_QUIET", "1")
    run_folder = train(out)
    write_onnx(run_folder)
    print(run_folder)


def with_metadata(run: Path, out: Path, **changes: str) -> Path:
    """A copy of the run folder whose `<run>.onnx` metadata has `changes` (field -> text as mjlab writes it)."""
    import onnx

    copy = out / run.name
    shutil.copytree(run, copy)
    path = copy / f"{run.name}.onnx"
    model = onnx.load(str(path), load_external_data=False)
    for prop in model.metadata_props:
        if prop.key in changes:
            prop.value = changes[prop.key]
    onnx.save(model, str(path))
    return copy

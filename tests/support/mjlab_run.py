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
    joints = list(env.unwrapped.scene["cartpole"].joint_names)
    attach_metadata_to_onnx(str(run / f"{run.name}.onnx"),
                            {"run_path": "local", "joint_names": joints,
                             "observation_names": list(env.unwrapped.observation_manager.active_terms["actor"])})
    env.close()
    return run / f"{run.name}.onnx"


if __name__ == "__main__":
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("MJLAB_WARP_QUIET", "1")
    run_folder = train(out)
    write_onnx(run_folder)
    print(run_folder)

"""Paths `jit` and `onnx`: the policy as it is deployed, from rsl_rl's exporters.

Isaac Lab's play script writes `exported/policy.pt` (TorchScript) and `exported/policy.onnx` next to
the checkpoint it played. When such a file is there, the path runs it as it is: a stale export (of
another iteration) is exactly the kind of difference tui-eval is for. When it is not, the path builds
the runner, calls `runner.export_policy_to_jit` / `export_policy_to_onnx` into a cache folder (see
`export_dir`), and says where in its description. Both exports bake in the observation normalizer and
output the deterministic mean; the input is the actor's flat observation groups concatenated in order,
then (a CNNModel) its image groups, one tensor each, as rsl_rl's exports take them.

The TorchScript module runs batched. rsl_rl's ONNX export (dynamo exporter, torch >= 2.9) fixes the
batch size at 1: then the path runs one row per world that needs an action. A recurrent export's state
is kept per world and reset at each world's episode start (see `memory`). onnxruntime is optional
(`pip install onnxruntime`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shutil
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tensordict import TensorDict

from tui_eval.errors import BadInput, first_line
from tui_eval.integrations.rsl_rl.paths.eval_env import EvalVecEnv
from tui_eval.integrations.rsl_rl.paths.memory import JitMemory, OnnxMemory
from tui_eval.integrations.rsl_rl.paths.model import finalise_obs_groups, quiet
from tui_eval.integrations.rsl_rl.paths.runner import RslLoopPath, build_runner
from tui_eval.paths.cache import cache_root


def export_dir(checkpoint: Path, cfg: dict[str, Any]) -> Path:
    """A cache folder for one checkpoint's exports, keyed by its bytes and the actor cfg."""
    digest = hashlib.sha256()
    with checkpoint.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    digest.update(json.dumps(cfg.get("actor"), sort_keys=True, default=str).encode())
    return cache_root() / "rsl_rl" / f"{checkpoint.stem}-{digest.hexdigest()[:16]}"


@contextlib.contextmanager
def _quiet_export() -> Iterator[None]:
    """torch.onnx logs warnings about optional packages; not the user's business."""
    logger = logging.getLogger("torch.onnx")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        with quiet(), open(os.devnull, "w") as devnull, contextlib.redirect_stderr(devnull):
            yield
    finally:
        logger.setLevel(level)


def _export(env: EvalVecEnv, cfg: dict[str, Any], checkpoint: Path, runner_checkpoint: Path, device: str,
            filename: str, cfg_label: str) -> Path:
    """Export the policy with rsl_rl's own exporter into the cache; reuse an earlier export."""
    folder = export_dir(checkpoint, cfg)
    target = folder / filename
    if target.is_file():
        return target
    runner, _ = build_runner(env, cfg, runner_checkpoint, device, cfg_label)
    staging = folder / f".staging-{os.getpid()}-{id(env)}"
    try:
        with _quiet_export():
            if filename.endswith(".onnx"):
                runner.export_policy_to_onnx(str(staging), filename)
            else:
                runner.export_policy_to_jit(str(staging), filename)
        # an ONNX export may keep its weights in `<name>.data`, named inside the .onnx: move that first,
        # so that a .onnx in the cache always has its weights next to it
        for produced in sorted(staging.iterdir(), key=lambda p: p.name == filename):
            os.replace(produced, folder / produced.name)
    except BadInput:
        raise
    except Exception as exc:  # the exporters raise torch.onnx / jit errors of many classes
        raise BadInput(f"rsl_rl could not export the policy ({first_line(exc, 180)})") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


class _ExportPath(RslLoopPath):
    """Shared: find or make the exported file, and concatenate the actor's observation groups."""

    filename: str

    def _setup(self, env: EvalVecEnv, cfg: dict[str, Any], checkpoint: Path, runner_checkpoint: Path,
               exported: Path | None, device: str, cfg_label: str) -> Path:
        self.env = env
        self.explore = False
        self.device = device
        obs = env.get_observations()
        cfg = finalise_obs_groups(dict(cfg), list(obs.keys()))
        actor_groups = list(cfg["obs_groups"]["actor"])
        self.groups = [g for g in actor_groups if obs[g].dim() == 2]
        self.image_groups = [g for g in actor_groups if obs[g].dim() == 4]
        if exported is not None and exported.is_file():
            self.source = f"{exported} (next to the checkpoint)"
            return exported
        path = _export(env, cfg, checkpoint, runner_checkpoint, device, self.filename, cfg_label)
        self.source = f"exported from the runner into {path}"
        return path

    def _x(self, obs: TensorDict) -> torch.Tensor:
        """The flat input: the actor's 1-D groups concatenated (width 0 for a CNN on images alone)."""
        if len(self.groups) == 1:
            return obs[self.groups[0]]
        if not self.groups:
            return torch.zeros(obs.batch_size[0], 0, device=obs.device)
        return torch.cat([obs[g] for g in self.groups], dim=-1)

    def _images(self, obs: TensorDict) -> list[torch.Tensor]:
        return [obs[g] for g in self.image_groups]

    def set_explore(self, explore: bool) -> None:
        self.explore = False  # an exported policy is the deterministic mean; nothing to sample from


class RslJitPath(_ExportPath):
    name = "jit"
    filename = "policy.pt"

    def __init__(self, *, env: EvalVecEnv, cfg: dict[str, Any], checkpoint: Path, runner_checkpoint: Path,
                 exported: Path | None, device: str, cfg_label: str = "the agent cfg"):
        try:
            path = self._setup(env, cfg, checkpoint, runner_checkpoint, exported, device, cfg_label)
            try:
                with warnings.catch_warnings():  # torch 2.13 deprecates jit.load; deployments still use it
                    warnings.simplefilter("ignore")
                    self.module = torch.jit.load(str(path), map_location=device)
            except Exception as exc:  # torch.jit.load raises RuntimeError or pickle errors
                raise BadInput(f"{path} is not a TorchScript module ({type(exc).__name__}); delete it or "
                               "export the policy again") from None
            self.module.eval()
            self.memory = JitMemory(self.module, env.num_envs)
            self.recurrent = self.memory.recurrent
            self._check_shapes(path)
        except BaseException:
            env.close()
            raise
        self.description = (f"TorchScript policy {self.source}, {env.description}, batched, {device}"
                            + (f", {self.memory.describe()}" if self.recurrent else ""))

    def _check_shapes(self, path: Path) -> None:
        obs = self.env.get_observations()
        x = self._x(obs)
        try:
            with torch.inference_mode():
                out = self._forward(obs)
                if self.recurrent:
                    self.memory.reset(None)  # the check's step is no episode's
        except Exception as exc:  # a TorchScript module raises its own error classes
            raise BadInput(f"{path} does not take this env's observations of size {x.shape[-1]} "
                           f"({type(exc).__name__}); it is not this checkpoint's policy") from None
        if tuple(out.shape) != (self.env.num_envs, self.env.num_actions):
            raise BadInput(f"{path} outputs shape {tuple(out.shape[1:])}, the env takes {self.env.num_actions} "
                           "actions; it is not this checkpoint's policy")

    def _forward(self, obs: TensorDict) -> torch.Tensor:
        if self.image_groups:
            return self.module(self._x(obs), self._images(obs))
        return self.module(self._x(obs))

    def _act(self, obs: TensorDict) -> torch.Tensor:
        return self._forward(obs)

    def _reset_memory(self, starting: torch.Tensor | None) -> None:
        self.memory.reset(starting)


class RslOnnxPath(_ExportPath):
    name = "onnx"
    filename = "policy.onnx"

    def __init__(self, *, env: EvalVecEnv, cfg: dict[str, Any], checkpoint: Path, runner_checkpoint: Path,
                 exported: Path | None, device: str, cfg_label: str = "the agent cfg"):
        try:
            import onnxruntime as ort
        except ImportError:
            env.close()
            raise BadInput("the onnx path needs onnxruntime: pip install onnxruntime") from None
        try:
            path = self._setup(env, cfg, checkpoint, runner_checkpoint, exported, device, cfg_label)
            options = ort.SessionOptions()
            options.intra_op_num_threads = 1
            options.log_severity_level = 3
            try:
                self.session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
            except Exception as exc:  # onnxruntime raises its own exception classes
                raise BadInput(f"onnxruntime cannot load {path} ({first_line(exc, 140)})") from None
        except BaseException:
            env.close()
            raise
        inputs = self.session.get_inputs()
        self.input_name = inputs[0].name
        # rsl_rl names the image inputs after their groups, in the actor's order
        self.image_inputs = [i.name for i in inputs[1:] if i.name in self.image_groups]
        self.memory = OnnxMemory(self.session, env.num_envs, self.image_inputs)
        self.recurrent = self.memory.recurrent
        shape = inputs[0].shape
        self.fixed_batch = isinstance(shape[0], int) and shape[0] == 1 and env.num_envs > 1
        self._out = np.zeros((env.num_envs, env.num_actions), dtype=np.float32)
        mode = "one row per call (the export fixes batch size 1)" if self.fixed_batch else "batched"
        self.description = (f"ONNX policy {self.source} on onnxruntime (CPU), {env.description}, {mode}"
                            + (f", {self.memory.describe()}" if self.recurrent else ""))

    def _reset_memory(self, starting: torch.Tensor | None) -> None:
        self.memory.reset(starting)

    def _feeds(self, obs: TensorDict) -> dict[str, np.ndarray]:
        feeds = {self.input_name: self._x(obs).detach().to("cpu", torch.float32).numpy()}
        for name in self.image_inputs:
            feeds[name] = obs[name].detach().to("cpu", torch.float32).numpy()
        return feeds

    def _act(self, obs: TensorDict) -> torch.Tensor:
        feeds = self._feeds(obs)
        run, memory = self.session.run, self.memory
        if self.fixed_batch:
            out = self._out
            out.fill(0.0)
            for i in self._acting_rows().tolist():
                row = {name: value[i:i + 1] for name, value in feeds.items()}
                if memory.recurrent:
                    row.update(memory.feed(i))
                    result = run(None, row)
                    memory.store(i, result[1:])
                else:
                    result = run(None, row)
                out[i] = result[0][0]
            out = out.copy()
        else:
            every = slice(None)
            result = run(None, {**feeds, **memory.feed(every)} if memory.recurrent else feeds)
            memory.store(every, result[1:])
            out = result[0]
        return torch.from_numpy(np.asarray(out, dtype=np.float32)).to(self.env.device)

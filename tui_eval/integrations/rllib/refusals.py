"""RLlib checkpoint features a path cannot replicate, refused before any episode runs.

A path that ran anyway would not be what it claims to be (a single-agent loop stepping a MultiAgentEnv,
`evaluate()` running the user's own evaluation function instead of seeded episodes), and its verdict
would be about tui-eval, not the checkpoint. Each refusal is one BadInput line: the feature, the path,
what to run instead.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tui_eval.spec import BadInput

ENV_RUNNER_DIR = "env_runner"


def refuse_without_env_runner(checkpoint: Path, algorithm: str) -> None:
    """A checkpoint saved without EnvRunners (offline algorithms: BC, MARWIL, CQL) has no connector pipelines
    for path connectors, and `Algorithm.from_checkpoint` itself fails on it in ray 2.60 (its
    restore_from_path syncs weights to a training EnvRunner group the algorithm does not have)."""
    if (checkpoint / ENV_RUNNER_DIR).is_dir():
        return
    raise BadInput(f"this {algorithm} checkpoint has no {ENV_RUNNER_DIR}/ folder (offline algorithms such as BC, "
                   "MARWIL, CQL train without EnvRunners): path evaluate cannot restore it (Algorithm."
                   "from_checkpoint fails on it in ray 2.60) and path connectors has no pipelines to restore; "
                   "checkpoints without EnvRunners are not supported yet")


def refuse_multi_agent(config, module_ids: list[str], env: Any = None) -> None:
    """Multi-agent checkpoints (several modules, a policy_mapping_fn, a MultiAgentEnv): neither path steps
    a MultiAgentEnv as MultiAgentEnvRunner does yet. `env`: the env class or an instance, when known."""
    from ray.rllib.env.multi_agent_env import MultiAgentEnv

    env_class = env if isinstance(env, type) else type(env) if env is not None else None
    multi_env = env_class is not None and issubclass(env_class, MultiAgentEnv)
    if not (multi_env or config.is_multi_agent):
        return
    found = [f"modules {', '.join(module_ids)}"]
    if config.policy_mapping_fn is not type(config).DEFAULT_POLICY_MAPPING_FN:
        found.append(f"policy_mapping_fn {getattr(config.policy_mapping_fn, '__name__', 'set')}")
    if multi_env:
        found.append(f"env {env_class.__name__} is a MultiAgentEnv")  # type: ignore[union-attr]
    raise BadInput(f"multi-agent checkpoints are not supported yet (found {', '.join(found)}); "
                   "evaluate it with RLlib's Algorithm.evaluate() directly")


def refuse_for_paths(config, eval_config, paths: list[str]) -> None:
    """Features of the checkpoint's config that one of the chosen paths cannot replicate."""
    if "evaluate" in paths and config.custom_evaluation_function is not None:
        raise BadInput(f"the checkpoint sets custom_evaluation_function "
                       f"({getattr(config.custom_evaluation_function, '__name__', '?')}): path evaluate would run "
                       "that function, not seeded episodes it can pair; run --paths connectors")
    if "connectors" in paths:
        runner = _runner_class_name(eval_config) or _runner_class_name(config)
        if runner is not None:
            raise BadInput(f"the checkpoint sets env_runner_cls={runner}: path connectors steps envs as "
                           f"SingleAgentEnvRunner does, not as {runner}; run --paths evaluate")


def _runner_class_name(config) -> str | None:
    """The config's own EnvRunner class, when it is not RLlib's SingleAgentEnvRunner."""
    cls = getattr(config, "env_runner_cls", None)
    if cls is None:
        return None
    from ray.rllib.env.single_agent_env_runner import SingleAgentEnvRunner

    if isinstance(cls, type) and cls is SingleAgentEnvRunner:
        return None
    return getattr(cls, "__name__", str(cls))

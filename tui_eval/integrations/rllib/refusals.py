"""RLlib checkpoint features a path cannot replicate, refused before any episode runs.

A path that ran anyway would not be what it claims to be (a single-agent checkpoint stepping a MultiAgentEnv,
`evaluate()` running the user's own evaluation function instead of seeded episodes), and its verdict
would be about tui-eval, not the checkpoint. Each refusal is one BadInput line: the feature, the path,
what to run instead.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tui_eval.errors import BadInput
from tui_eval.integrations.rllib.paths.layout import RUNNER_DIRS, runner_dir


def refuse_without_env_runners(checkpoint: Path, algorithm: str) -> None:
    """A checkpoint saved with no EnvRunner at all (an offline algorithm, BC / MARWIL / CQL, trained without an
    evaluation config) has no connector pipelines for path connectors and no evaluation runner for path
    evaluate. (With an evaluation config, offline checkpoints keep `eval_env_runner/`, and both paths run.)"""
    if runner_dir(checkpoint) is not None:
        return
    raise BadInput(f"this {algorithm} checkpoint has neither {RUNNER_DIRS[0]}/ nor {RUNNER_DIRS[1]}/ (an offline "
                   "algorithm trained without an evaluation config): there are no connector pipelines to restore "
                   "and no evaluation runner; train with .evaluation(evaluation_interval=1, ...) so that the "
                   "checkpoint keeps its evaluation EnvRunner")


def is_multi_agent(config, env: Any = None) -> bool:
    """A multi-agent checkpoint: its config has several policies or a policy_mapping_fn of its own, or its
    env (the class or an instance, when known) is a MultiAgentEnv."""
    from ray.rllib.env.multi_agent_env import MultiAgentEnv

    env_class = env if isinstance(env, type) else type(env) if env is not None else None
    return bool(config.is_multi_agent) or (env_class is not None and issubclass(env_class, MultiAgentEnv))


def refuse_multi_agent_env(config, env: Any) -> None:
    """A single-agent checkpoint run on a MultiAgentEnv (`--env`): no path can step it with one module."""
    if is_multi_agent(config, env):
        raise BadInput(f"env {type(env).__name__} is a MultiAgentEnv, but the checkpoint is single-agent (one module, "
                       "no policy_mapping_fn); run it on the single-agent env it was trained on (--env)")


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
                           f"{'MultiAgentEnvRunner' if config.is_multi_agent else 'SingleAgentEnvRunner'} does, "
                           f"not as {runner}; run --paths evaluate")


def _runner_class_name(config) -> str | None:
    """The config's own EnvRunner class, when it is not RLlib's SingleAgentEnvRunner (MultiAgentEnvRunner
    for a multi-agent config)."""
    cls = getattr(config, "env_runner_cls", None)
    if cls is None:
        return None
    from ray.rllib.env.multi_agent_env_runner import MultiAgentEnvRunner
    from ray.rllib.env.single_agent_env_runner import SingleAgentEnvRunner

    if isinstance(cls, type) and cls is (MultiAgentEnvRunner if config.is_multi_agent else SingleAgentEnvRunner):
        return None
    return getattr(cls, "__name__", str(cls))


def refuse_incomplete(checkpoint: Path) -> None:
    """Every component `Algorithm.save()` writes (the algorithm, its EnvRunners, connectors, learners, modules) is
    a folder with its constructor, its state and (below the top) its metadata; restoring needs all three. A file
    gone is said now, by name, not when a path restores the component."""
    for folder in [checkpoint, *sorted(p for p in checkpoint.rglob("*") if p.is_dir())]:
        names = {p.name for p in folder.iterdir() if p.is_file()}
        needed = ["class_and_ctor_args.pkl"] + ([] if folder == checkpoint else ["metadata.json"])
        missing = [n for n in needed if n not in names]
        if not any("state" in n for n in names):
            missing.append("its state (state.pkl)")
        if missing:
            raise BadInput(f"checkpoint {checkpoint} is incomplete: {folder} has no {', '.join(missing)}; copy the "
                           "whole checkpoint folder again, or save it again with algo.save()")

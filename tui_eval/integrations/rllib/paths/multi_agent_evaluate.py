"""Path `evaluate` of a multi-agent checkpoint: `Algorithm.evaluate()` on RLlib's MultiAgentEnvRunner.

Everything is the single-agent evaluate path's (evaluate.py beside it: the checkpoint's config as
RLlib merges it, episodes that carry on across calls, one `on_episode_end` item per episode), except:
- the evaluation env is the user's MultiAgentEnv behind a MultiAgentGuardedEnv, registered under its own
  Tune name; the runner's vector env resets each sub-env, and the guard takes that reset's seed from the
  run's feed (the runner's own seed goes only into the first reset, which the guard overrides);
- the runner's env check is off: it resets and steps a sub-env once with seed 42 before sampling, which
  would take a seed from the feed for an episode nobody reports (the env is the user's, checked in training);
- the callback reads the episode's seed and state from the guard (its sub-env is reset only on the next
  step) and each module's return from the episode's agents, as RLlib's own module metrics add them.
With `--workers N` it scales as the single-agent path does: N remote evaluation runners (MultiAgentEnvRunners)
whose guards take seeds from the seed dispenser, a dead runner's seeds run again and the runner brought back.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from tui_eval.integrations.rllib.paths.evaluate import ITEM_SINKS, RllibEvaluatePath, evaluation_env_parts
from tui_eval.integrations.rllib.paths.multi_agent_env import MultiAgentGuardedEnv
from tui_eval.integrations.rllib.paths.multi_agent_record import module_returns
from tui_eval.records import EpisodeRecord

GUARDED_MULTI_AGENT_ENV = "tui_eval_guarded_multi_agent_env"


def guarded_multi_agent_env_creator(env_context):
    """The evaluation env: the user's MultiAgentEnv, made as RLlib would make it, behind the guard."""
    recipe, seeds, success_key, step_timeout = evaluation_env_parts(env_context)
    return MultiAgentGuardedEnv(recipe.make_one(env_context, env_checker=False), feed=seeds,
                                success_key=success_key, step_timeout=step_timeout)


def log_multi_agent_episode(*, episode, env, env_index, metrics_logger, prev_episode_chunks=(), env_runner=None,
                            **kwargs) -> None:
    """on_episode_end callback: one item per finished multi-agent episode (none for an idle one)."""
    guard = env.envs[env_index].unwrapped
    if not isinstance(guard, MultiAgentGuardedEnv):
        return
    facts = guard.episode_facts()
    if facts["idle"] or facts["seed"] is None:
        return
    chunks = [*prev_episode_chunks, episode]
    modules = module_returns(chunks, ())
    ITEM_SINKS.report(env_runner, metrics_logger, {
        "seed": int(facts["seed"]), "block": int(facts["block"]), "return": sum(r for _, r, _ in modules),
        "modules": [list(m) for m in modules], "length": sum(len(c) for c in chunks),
        "success": facts["success"], "invalid": facts["invalid"],
        "wall_s": float(sum(c.get_duration_s() for c in chunks)),
    })


class RllibMultiAgentEvaluatePath(RllibEvaluatePath):
    env_name = GUARDED_MULTI_AGENT_ENV
    env_creator = staticmethod(guarded_multi_agent_env_creator)
    # RLlib passes every callback the same keyword arguments; this one reads env and env_index too
    episode_callback = staticmethod(log_multi_agent_episode)  # type: ignore[assignment]
    evaluation_extras = {"disable_env_checking": True}

    def __init__(self, *, module_ids: list[str], view: str | None, **kwargs: Any):
        self.module_ids, self.view = list(module_ids), view
        super().__init__(module_id=",".join(module_ids), **kwargs)
        self.description = self.description.replace("Algorithm.evaluate()",
                                                    "Algorithm.evaluate() (MultiAgentEnvRunner)", 1)

    def replay(self, seed: int) -> None:
        """Not replayed: RLlib's EnvRunner steps it; its episodes' returns are compared."""
        return None

    def rerun(self, trace: Any) -> None:
        return None

    def _record(self, item: dict[str, Any]) -> EpisodeRecord:
        record = super()._record(item)
        if "modules" not in item:  # a step that froze in a remote runner: invalid, no module took a step
            return record
        found = {m: (float(r), int(n)) for m, r, n in item.get("modules", [])}
        modules = tuple((m, *found.pop(m, (0.0, 0))) for m in self.module_ids)
        modules += tuple((m, r, n) for m, (r, n) in found.items())  # a module the checkpoint did not list
        record = dataclasses.replace(record, modules=modules, ret=sum(r for _, r, _ in modules))
        return record if self.view is None else dataclasses.replace(record, ret=record.for_module(self.view).ret)

"""`--path` loops as the doctor replays and reruns them (tui_eval/paths/rerun.py): the episode form is compared by
the actions it sent to the env; the act form is stepped here, recording what it saw and sent, and a deep copy
taken before the episode lets the doctor run its steps again."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import numpy as np

from tui_eval.envs.guard import INVALID_KEY
from tui_eval.paths.rerun import Side, Trace, flat


def replay_custom(path: Any, seed: int) -> Trace:
    """A `--path` loop on `seed`: the episode form's actions sent to the env; the act form stepped here."""
    if path.form == "act":
        return _replay_act(path, seed)
    rec = path.play(seed, keep_actions=True)
    reason = rec.last_info.get(INVALID_KEY)
    end = f"invalid: {reason}" if reason else ("ended" if rec.done else "returned early")
    return Trace(path.name, {"action_for_env": list(rec.actions)}, rec.ret, rec.length, end,
                 note="custom path: only the actions sent to the env are recorded")


def _replay_act(path: Any, seed: int) -> Trace:
    """An act-form policy stepped as CustomPath.play steps it, recording what it saw and sent; a deep copy
    of the policy taken first lets the doctor run its steps again (None when it cannot be copied)."""
    try:
        snapshot = copy.deepcopy(path.target)
    except Exception:  # the user's object may hold what cannot be copied (a session, a lock)
        snapshot = None
    trace = Trace(path.name, {"obs": [], "action_for_env": []}, snapshot=snapshot,
                  note="act-form custom path: the observations it was given and the actions it sent")
    path.seed_feed.seed = (seed, 0)
    env = path.env
    env.keep_actions = False
    env.begin()
    if hasattr(path.target, "reset"):
        path.target.reset()
    obs, _ = env.reset()
    while not env.done:
        action = path.target.act(obs)
        trace.keep_input(obs)
        trace.stages["obs"].append(flat(obs))
        trace.stages["action_for_env"].append(np.array(action, copy=True))
        obs, *_ = env.step(action)
    reason = env.last_info.get(INVALID_KEY)
    trace.ret, trace.length, trace.end = env.ret, env.length, f"invalid: {reason}" if reason else "ended"
    return trace


def custom_side(path: Any, trace: Trace) -> Side:
    """What can be run again of a `--path` loop: the act form's policy as it stood before the replayed episode
    (a deep copy), the factory called again, and the library's module found inside it."""
    side = Side(path.name, trace, explore=path.explore)
    found = path.library.find(path.target)
    snapshot = trace.snapshot
    if path.form == "act" and snapshot is not None:
        side.stepper = lambda: copy.deepcopy(snapshot)
        if path.remake is not None:
            side.fresh = lambda: path.remake(bool(path.explore))
    if found["module"] is not None:
        side.logits = path.library.module_logits(found["module"], bool(path.explore))
    side.action_space = path.env.action_space
    if path.form == "act" and snapshot is not None:
        side.parts = (found["module"], found["env_to_module"], found["module_to_env"])

        def variant(change: Callable[[Any, Any, Any], None]) -> Callable[[], Any]:
            def make() -> Any:
                policy = copy.deepcopy(snapshot)
                inner = path.library.find(policy)
                change(inner["module"], inner["env_to_module"], inner["module_to_env"])
                return policy
            return make

        side.variant = variant
    return side

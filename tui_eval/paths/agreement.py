"""Two built paths on the same observations: each path's policy fed the other's observations of one seed.

Path A replays the seed (`InferencePath.replay`, recording what it was given and what it sent at every step); path
B's policy (`InferencePath.rerun(...).stepper`, a copy as it stood at the episode's start, its recurrent state
carried from step to step) is fed A's observations in order, and its actions are set beside those A sent; then the
other way round. `tui_eval.stats.agreement.measure` says how far apart they are. A path that offers no replay or no
stepper (a `--path` loop that does not expose its policy) is said to, and no agreement is claimed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tui_eval.paths.base import InferencePath
from tui_eval.paths.rerun import Side, Trace, run_policy
from tui_eval.stats.agreement import ActionPairs, Agreement, Tolerance, action_scale, default_tolerance, measure


def replay_both(paths: dict[str, InferencePath], seed: int) -> tuple[dict[str, Trace], dict[str, Side], list[str]]:
    """Each path's replay of `seed` and what can be rerun of it; notes say what a path does not offer."""
    traces: dict[str, Trace] = {}
    sides: dict[str, Side] = {}
    notes: list[str] = []
    for name, path in paths.items():
        trace = path.replay(seed)
        if trace is None or not trace.env_actions:
            notes.append(f"{name} offers no step-by-step replay (a --path loop that does not expose its policy)")
            continue
        traces[name] = trace
        side = path.rerun(trace)
        if side is None or side.stepper is None:
            notes.append(f"{name} does not expose its policy to be fed other observations")
            continue
        sides[name] = side
    return traces, sides, notes


def _inputs(trace: Trace) -> list[Any]:
    """The observations a policy is fed again: as the env gave them (a Dict stays a Dict), else the `obs` stage."""
    return trace.inputs if trace.inputs is not None else trace.stages.get("obs", [])


def one_way(seed: int, on: str, trace: Trace, other: str, side: Side) -> ActionPairs:
    """`other`'s policy on `on`'s observations of `seed`, beside the actions `on` sent."""
    assert side.stepper is not None
    inputs = _inputs(trace)
    sent = trace.env_actions[: len(inputs)]
    given = run_policy(side.stepper, [], inputs[: len(sent)], batched=True)
    return ActionPairs(seed, on, other, list(trace.stages.get("obs", [])), list(sent), given)


def action_dtype(actions: list[Any]) -> str:
    """The floating-point type of a path's actions (`int` for indices; `float32` when none was recorded)."""
    if not actions:
        return "float32"
    arr = np.asarray(actions[0])
    return "int" if arr.dtype.kind in "iub" else str(arr.dtype)


def policy_dtype(path: InferencePath, actions: list[Any]) -> str:
    """The floating-point type the path's policy computes in: its torch module's parameters where it holds one (the
    coarsest of them: a float64 policy may still hand float32 actions to a float32 env), else its actions' type
    (an ONNX graph's float32 output); `int` for index actions."""
    from tui_eval.paths.rerun import reachable_modules

    sent = action_dtype(actions)
    if sent == "int":
        return sent
    order = ("float16", "bfloat16", "float32", "float64")
    kinds = {str(p.dtype).removeprefix("torch.") for m in reachable_modules(path)
             for p in m.parameters() if p.is_floating_point()}
    known = [k for k in kinds if k in order]
    return min(known, key=order.index) if known else sent


def agreement(paths: dict[str, InferencePath], a: str, b: str, seed: int,
              tolerance: float | None = None) -> tuple[Agreement | None, list[str], tuple[str, int | None]]:
    """The agreement of paths `a` and `b` on `seed`, both ways where both can be fed (one way where only one can;
    None with the reason when neither can), and how their replays part (`how_they_part`)."""
    traces, sides, notes = replay_both({a: paths[a], b: paths[b]}, seed)
    found, more = agreement_of(seed, a, b, traces, sides, {n: paths[n] for n in (a, b)}, tolerance)
    parting = how_they_part(traces[a], traces[b]) if a in traces and b in traces else ("unknown", None)
    return found, notes + more, parting


def agreement_of(seed: int, a: str, b: str, traces: dict[str, Trace], sides: dict[str, Side],
                 paths: dict[str, Any], tolerance: float | None = None) -> tuple[Agreement | None, list[str]]:
    """`agreement` from replays and sides already made (the doctor's)."""
    notes: list[str] = []
    fed = [(on, other) for on, other in ((a, b), (b, a)) if on in traces and other in sides]
    blind = [on for on, _ in fed if not _inputs(traces[on])]
    notes += [f"{on} records the actions it sent but not its observations (an episode-form --path loop)" for on in
              blind]
    directions = [one_way(seed, on, traces[on], other, sides[other]) for on, other in fed if on not in blind]
    directions = [d for d in directions if d.sent]
    if not directions:
        return None, notes + [f"neither {a} nor {b} can be fed the other's observations"]
    dtypes = {n: policy_dtype(paths[n], traces[n].env_actions) for n in traces if n in paths}
    ref = traces[a] if a in traces else traces[b]
    space = next((s.action_space for s in sides.values() if s.action_space is not None), None)
    scale, source = action_scale(ref.env_actions, getattr(space, "low", None), getattr(space, "high", None))
    tol: Tolerance = default_tolerance(list(dtypes.values()), tolerance)
    if len(directions) == 1:
        notes.append(f"measured one way only: {directions[0].other}'s policy on {directions[0].on}'s observations")
    return measure(directions, tol, scale, source, dtypes), notes


def how_they_part(a: Trace, b: Trace) -> tuple[str, int | None]:
    """Why two replays of one seed part: ("rounding", t) when the actions sent differed (by any amount) before the
    observations did at step t; ("env", t) when the observations differ at step t after the same actions (or from
    the first one: the envs are not the same); ("none", None) when the observations never differ."""
    oa, ob = a.stages.get("obs", []), b.stages.get("obs", [])
    ea, eb = a.env_actions, b.env_actions
    for t in range(min(len(oa), len(ob))):
        x, y = np.asarray(oa[t]), np.asarray(ob[t])
        if x.shape == y.shape and np.array_equal(x, y):
            continue
        before = range(min(t, len(ea), len(eb)))
        same_actions = all(np.array_equal(np.asarray(ea[s]), np.asarray(eb[s])) for s in before)
        return ("env" if same_actions else "rounding"), t
    return "none", None

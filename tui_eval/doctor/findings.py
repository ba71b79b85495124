"""Rules that turn differing facts and the replay's first divergence into ranked findings.

Each rule looks at one kind of difference between two paths and scores it; a cause whose effect is
what the replay saw (the stage where the paths first part: explore at `action`, unsquash/clip at
`action_for_env`, connector state at `env_to_module`, weights at `module_out`, the env's time limit
as one episode ending first) scores higher. Facts alone are not findings: when the paths do not
diverge, the list is empty.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

from tui_eval.doctor.replay import Divergence

CONSISTENT = 50


@dataclass
class Finding:
    cause: str
    evidence: str
    fix: str
    paths: list[str]
    stage: str | None
    seed: int | None
    step: int | None
    score: int = 0

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("score")
        return data


def _short(value: Any, limit: int = 160) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _per_path(values: dict[str, Any], names: list[str]) -> str:
    return "; ".join(f"{n}: {_short(values.get(n, '?'))}" for n in names)


def diagnose_pair(a: str, b: str, facts: dict[str, dict[str, Any]], differ: dict[str, dict[str, Any]],
                  div: Divergence, seed: int | None, kinds: dict[str, str],
                  saved_states: dict[str, Any] | None = None, coarse: bool | None = None) -> list[Finding]:
    """Findings for paths `a` and `b` (which have diverged), best first."""
    names = [a, b]
    out: list[Finding] = []
    # only the env actions are known for one of the paths (a custom loop, a path replayed as a whole)
    custom = coarse if coarse is not None else any(kinds.get(n) == "custom" for n in names)

    def add(cause, evidence, fix, score, stages=(), lengths=False):
        consistent = (div.stage in stages) or (lengths and div.kind == "length") or \
                     (custom and div.kind == "action" and div.stage == "action_for_env" and "any" in stages)
        where = "" if div.step is None else f"; first divergence at seed {seed}, step {div.step}, stage {div.stage}"
        if div.values and consistent:
            where += f" ({_per_path(div.values, names)}, tolerance 1e-5)"
        out.append(Finding(cause, evidence + where, fix, names, div.stage, seed, div.step,
                           score + (CONSISTENT if consistent else 0)))

    def diff(key):
        d = differ.get(key, {})
        return d if a in d and b in d else None

    # the module's raw action sent to the env (stage matching)
    m = div.stage_match
    if m and m["path"] in names and m["of"] in names:
        sender, other = m["path"], m["of"]
        add(f"path `{sender}` sends the module's `{m['stage']}` to the env; `{other}` sends the action for the env "
            "(after module_to_env: unsquashed to the env's bounds / clipped)",
            f"at step {div.step} `{sender}`'s env action equals `{other}`'s `{m['stage']}` stage",
            f"in `{sender}`, step the env with the module_to_env pipeline's output Columns.ACTIONS_FOR_ENV "
            "(or unsquash_action/clip_action with the env's action space), not Columns.ACTIONS",
            95, stages=("action_for_env", "any"))

    d = diff("explore")
    if d:
        on = [n for n in names if d[n]]
        off = [n for n in names if not d[n]]
        lib = " (RLlib's evaluation default: the evaluation config copies explore=True)" if "evaluate" in on and \
            kinds.get("evaluate") == "evaluate" else ""
        fix = " or ".join([f"pass `--explore {n}=off`" for n in on] +
                          (["set `evaluation_config={'explore': False}`"] if "evaluate" in on else []))
        dist = differ.get("action distribution", {})
        add(f"path `{', '.join(on)}` samples actions (explore on{lib}); `{', '.join(off)}` takes the "
            "distribution's mode",
            f"explore: {_per_path(d, names)}" + (f"; action distribution: {_per_path(dist, names)}" if dist else ""),
            fix + " (or turn explore on for both, if sampling is what you mean to evaluate)", 85,
            stages=("action", "any"))

    for key, label in (("normalize_actions", "action normalisation (unsquash)"), ("clip_actions", "action clipping")):
        d = diff(key)
        if d:
            add(f"{label} differs between paths", f"{key}: {_per_path(d, names)}",
                f"set the same `{key}` for both (the checkpoint's config); a manual loop must apply module_to_env's "
                "NormalizeAndClipActions", 70, stages=("action_for_env", "any"))

    time_limit = diff("time limit")
    if time_limit:
        add("the env's time limit differs between paths",
            f"time limit: {_per_path(time_limit, names)}; env_config: "
            f"{_per_path(differ.get('env_config', facts_of(facts, names, 'env_config')), names)}",
            "make the evaluation env the same as the training env: drop `max_episode_steps` from "
            "`evaluation_config['env_config']` (or pass --env-config to both)", 80, lengths=True, stages=("obs", "env"))
    for key in ("env id", "env_config", "wrappers", "observation space", "action space"):
        d = diff(key)
        if d and not (time_limit and key == "env_config"):
            add(f"the env differs between paths ({key})", f"{key}: {_per_path(d, names)}",
                "run both paths on the same env: set `evaluation_config` to the training env's settings, or "
                "pass --env / --env-config", 65, lengths=True, stages=("obs", "env"))

    d = diff("connector state")
    if d:
        saved = (saved_states or {}).get("env_to_module") or (saved_states or {}).get("module_to_env")
        add("the state of a stateful connector differs between paths (e.g. running observation statistics)",
            f"connector state: {_per_path(d, names)}" + (f"; in the checkpoint: {_short(saved)}" if saved else ""),
            "restore the pipelines with their state (EnvToModulePipeline.from_checkpoint(CKPT/env_runner/"
            "env_to_module_connector)) and do not reset or rebuild the stateful connector in your loop; "
            "to keep the state fixed while evaluating, build MeanStdFilter with update_stats=False",
            80, stages=("env_to_module", "any"))

    for key in ("env_to_module pieces", "module_to_env pieces"):
        d = diff(key)
        if d:
            add(f"the {key.split()[0]} pipeline differs between paths", f"{key}: {_per_path(d, names)}",
                "build both paths' pipelines from the checkpoint (its env_runner/ connector folders)", 60,
                stages=("env_to_module", "module_out", "action", "action_for_env", "any"))

    d = diff("weights")
    if d:
        evidence = []
        for n in names:
            v = d[n]
            if isinstance(v, dict) and v:
                worst = max(v.items(), key=lambda kv: kv[1])
                evidence.append(f"{n}: {len(v)} tensor(s) differ from the checkpoint, max abs diff {worst[1]:.3g} "
                                f"in {worst[0]}")
            else:
                evidence.append(f"{n}: {v}")
        add("module weights differ between paths", "; ".join(evidence),
            "load the module from the checkpoint you mean (RLModule.from_checkpoint(CKPT/learner_group/learner/"
            "rl_module/<module_id>)); check which component's weights your loop takes", 75,
            stages=("module_out", "action", "any"))

    if not out:
        where = (f"first divergence at seed {seed}, step {div.step}, stage {div.stage}: {_per_path(div.values, names)}"
                 if div.step is not None else "episodes differ")
        out.append(Finding("the paths diverge, but no setting, connector state or weight that tui-eval reads "
                           "differs between them", where,
                           "look at what the stage does differently in each path (a custom loop's own "
                           "pre-/post-processing, an RNG, float precision)", names, div.stage, seed, div.step, 10))
    out.sort(key=lambda f: -f.score)
    return out


def facts_of(facts: dict[str, dict[str, Any]], names: list[str], key: str) -> dict[str, Any]:
    return {n: facts.get(n, {}).get(key, "?") for n in names}

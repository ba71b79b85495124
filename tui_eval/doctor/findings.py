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
UNEXPLAINED = "the paths diverge, but no setting, connector state or weight that tui-eval reads differs between them"


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
    topic: str = ""  # what the finding is about; a probe's proof on the same topic joins it

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("score")
        data.pop("topic")
        return data


def _short(value: Any, limit: int = 160) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _per_path(values: dict[str, Any], names: list[str]) -> str:
    return "; ".join(f"{n}: {_short(values.get(n, '?'))}" for n in names)


@dataclass
class Pair:
    """Two diverged paths, what differs between them, and where the replay saw them part."""

    a: str
    b: str
    facts: dict[str, dict[str, Any]]
    differ: dict[str, dict[str, Any]]
    div: Divergence
    seed: int | None
    coarse: bool  # only the env actions are known for one of them (a custom loop, a path replayed whole)
    saved_states: dict[str, Any]
    out: list[Finding]

    @property
    def names(self) -> list[str]:
        return [self.a, self.b]

    def diff(self, key: str) -> dict[str, Any] | None:
        d = self.differ.get(key, {})
        return d if self.a in d and self.b in d else None

    def add(self, cause: str, evidence: str, fix: str, score: int, stages: tuple[str, ...] = (),
            lengths: bool = False, topic: str = "") -> None:
        div = self.div
        consistent = (div.stage in stages) or (lengths and div.differs_in == "length") or \
                     (self.coarse and div.differs_in == "action" and div.stage == "action_for_env" and "any" in stages)
        where = "" if div.step is None else \
            f"; first divergence at seed {self.seed}, step {div.step}, stage {div.stage}"
        if div.values and consistent:
            where += f" ({_per_path(div.values, self.names)}, tolerance 1e-5)"
        self.out.append(Finding(cause, evidence + where, fix, self.names, div.stage, self.seed, div.step,
                                score + (CONSISTENT if consistent else 0), topic))


def _stage_match(p: Pair) -> None:
    """The module's raw action sent to the env, where the other path runs RLlib's module_to_env."""
    m = p.div.stage_match
    if not (m and m["path"] in p.names and m["of"] in p.names):
        return
    sender, other = m["path"], m["of"]
    if "module_to_env pieces" not in p.facts.get(other, {}):  # no RLlib pipeline: the action probes tell
        return
    p.add(f"path `{sender}` sends the module's `{m['stage']}` to the env; `{other}` sends the action for the env "
          "(after module_to_env: unsquashed to the env's bounds / clipped)",
          f"at step {p.div.step} `{sender}`'s env action equals `{other}`'s `{m['stage']}` stage",
          f"in `{sender}`, step the env with the module_to_env pipeline's output Columns.ACTIONS_FOR_ENV "
          "(or unsquash_action/clip_action with the env's action space), not Columns.ACTIONS",
          95, stages=("action_for_env", "any"), topic="actions")


def _explore(p: Pair) -> None:
    d = p.diff("explore")
    if not d:
        return
    on, off = [n for n in p.names if d[n]], [n for n in p.names if not d[n]]
    lib = " (the evaluation config's default: it copies explore=True)" if "evaluate" in on else ""
    fix = " or ".join([f"pass `--explore {n}=off`" for n in on] +
                      (["set `evaluation_config={'explore': False}`"] if "evaluate" in on else []))
    dist = p.differ.get("action distribution", {})
    p.add(f"path `{', '.join(on)}` samples actions (explore on{lib}); `{', '.join(off)}` takes the "
          "distribution's mode",
          f"explore: {_per_path(d, p.names)}" + (f"; action distribution: {_per_path(dist, p.names)}" if dist else ""),
          fix + " (or turn explore on for both, if sampling is what you mean to evaluate)", 85,
          stages=("action", "any"), topic="explore")


def _actions(p: Pair) -> None:
    for key, label in (("normalize_actions", "action normalisation (unsquash)"), ("clip_actions", "action clipping")):
        d = p.diff(key)
        if d:
            p.add(f"{label} differs between paths", f"{key}: {_per_path(d, p.names)}",
                  f"set the same `{key}` for both (the checkpoint's config); a manual loop must apply module_to_env's "
                  "NormalizeAndClipActions", 70, stages=("action_for_env", "any"), topic="actions")


def _env(p: Pair) -> None:
    time_limit = p.diff("time limit")
    second = [n for n in p.names if n.endswith("@vs-env")]
    if time_limit:
        env_config = p.differ.get("env_config", facts_of(p.facts, p.names, "env_config"))
        fix = ("the second env (--vs-env) ends episodes at another step: give both sims the same time limit "
               "(max_episode_steps in --vs-env-config) if they are meant to match" if second else
               "make the evaluation env the same as the training env: drop `max_episode_steps` from "
               "`evaluation_config['env_config']` (or pass --env-config to both)")
        p.add("the env's time limit differs between paths",
              f"time limit: {_per_path(time_limit, p.names)}; env_config: {_per_path(env_config, p.names)}",
              fix, 80, lengths=True, stages=("obs", "env"), topic="env")
    for key in ("env id", "env_config", "dt", "frame skip", "reward range", "wrappers", "observation space",
                "action space"):
        d = p.diff(key)
        if d and not (time_limit and key == "env_config"):
            fix = (f"the second env (--vs-env) differs in its {key}: make it match the first (--vs-env-config) if "
                   "the sims are meant to be the same" if second else
                   "run both paths on the same env: set `evaluation_config` to the training env's settings, or "
                   "pass --env / --env-config")
            p.add(f"the env differs between paths ({key})", f"{key}: {_per_path(d, p.names)}", fix,
                  65 + (5 if key in ("dt", "frame skip") else 0), lengths=True, stages=("obs", "env"), topic="env")
    if second and p.div.stage in ("obs", "env") and not any(f.topic == "env" for f in p.out):
        _unread_second_env(p, second[0])


def _unread_second_env(p: Pair, second: str) -> None:
    """The second env parts from the first where no fact tui-eval reads differs (a --vs-vecenv factory exposes
    none): the observations or the episode's end show the sims differ."""
    what = "other observations" if p.div.stage == "obs" else "another episode length"
    p.add(f"the second env (--vs-env / --vs-vecenv) gives {what} on the same seed: the sims differ",
          f"same seed, same policy; `{second}` parts from the first env at step {p.div.step} (the env facts tui-eval "
          "can read are the same, or the env exposes none)",
          "compare the two sims' reset and step (initial state drawn from the seed, physics step, time limit); an "
          "VecEnv factory (--vs-vecenv) seeds its worlds itself, so at step 0 it may draw other initial states",
          55, lengths=True, stages=("obs", "env"), topic="env")


def _connectors(p: Pair) -> None:
    d = p.diff("connector state")
    if d:
        saved = p.saved_states.get("env_to_module") or p.saved_states.get("module_to_env")
        p.add("the state of a stateful connector differs between paths (e.g. running observation statistics)",
              f"connector state: {_per_path(d, p.names)}" + (f"; in the checkpoint: {_short(saved)}" if saved else ""),
              "restore the pipelines with their state (EnvToModulePipeline.from_checkpoint(CKPT/env_runner/"
              "env_to_module_connector)) and do not reset or rebuild the stateful connector in your loop; "
              "to keep the state fixed while evaluating, build MeanStdFilter with update_stats=False",
              80, stages=("env_to_module", "any"), topic="connector state")
    for key in ("env_to_module pieces", "module_to_env pieces"):
        d = p.diff(key)
        if d:
            p.add(f"the {key.split()[0]} pipeline differs between paths", f"{key}: {_per_path(d, p.names)}",
                  "build both paths' pipelines from the checkpoint (its env_runner/ connector folders)", 60,
                  stages=("env_to_module", "module_out", "action", "action_for_env", "any"))


def _weights(p: Pair) -> None:
    d = p.diff("weights")
    if not d:
        return
    evidence = []
    for n in p.names:
        v = d[n]
        if isinstance(v, dict) and v:
            worst = max(v.items(), key=lambda kv: kv[1])
            evidence.append(f"{n}: {len(v)} tensor(s) differ from the checkpoint, max abs diff {worst[1]:.3g} "
                            f"in {worst[0]}")
        else:
            evidence.append(f"{n}: {v}")
    p.add("module weights differ between paths", "; ".join(evidence),
          "load the module from the checkpoint you mean (RLModule.from_checkpoint(CKPT/learner_group/learner/"
          "rl_module/<module_id>)); check which component's weights your loop takes", 75,
          stages=("module_out", "action", "any"), topic="weights")


RULES = (_stage_match, _explore, _actions, _env, _connectors, _weights)


def diagnose_pair(a: str, b: str, facts: dict[str, dict[str, Any]], differ: dict[str, dict[str, Any]],
                  div: Divergence, seed: int | None, labels: dict[str, str],
                  saved_states: dict[str, Any] | None = None, coarse: bool | None = None) -> list[Finding]:
    """Findings for paths `a` and `b` (which have diverged), best first."""
    if coarse is None:
        coarse = any(labels.get(n) == "custom" for n in (a, b))
    pair = Pair(a, b, facts, differ, div, seed, coarse, saved_states or {}, [])
    for rule in RULES:
        rule(pair)
    if not pair.out:
        where = (f"first divergence at seed {seed}, step {div.step}, stage {div.stage}: "
                 f"{_per_path(div.values, pair.names)}" if div.step is not None else "episodes differ")
        pair.out.append(Finding(UNEXPLAINED, where,
                                "look at what the stage does differently in each path (a custom loop's own "
                                "pre-/post-processing, an RNG, float precision)", pair.names, div.stage, seed,
                                div.step, 10, "unexplained"))
    pair.out.sort(key=lambda f: -f.score)
    return pair.out


def facts_of(facts: dict[str, dict[str, Any]], names: list[str], key: str) -> dict[str, Any]:
    return {n: facts.get(n, {}).get(key, "?") for n in names}

"""A differing setting is a finding only if it can change what a path does: the other path's value is put in.

For a setting that differs between two replayed paths (action normalisation or clipping, a connector's state,
the module's weights), the other path's value is put into a copy of one path's policy, and the copy runs that
path's own replayed episode again (its observations, from the first step), and the other way round. When no
action changes on any replayed step in either direction, the difference did not part the paths on this seed: it
is listed as "differs, does not act", never as a finding. When a copy does not first give back its path's own
actions unchanged (a loop whose RLlib parts tui-eval cannot reach, a policy that samples differently), nothing is
told and the difference stays as it was.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from tui_eval.envs import global_rng
from tui_eval.paths.rerun import Side, close, run_policy

#: facts a path's copy can take from another path
SWAPPABLE = ("normalize_actions", "clip_actions", "connector state", "weights")
#: replayed steps a copy runs again (from the episode's first)
MAX_STEPS = 400


@dataclass
class Swap:
    """`into` ran with `source`'s value of `fact` on `steps` of its replayed steps; `changed` is the first step
    whose action changed (None: none did)."""

    fact: str
    into: str
    source: str
    steps: int
    changed: int | None
    before: Any = None
    after: Any = None

    def text(self) -> str:
        if self.changed is None:
            return f"with `{self.source}`'s {self.fact} put in, `{self.into}` sends the same actions on steps " \
                   f"0-{self.steps - 1}"
        return (f"with `{self.source}`'s {self.fact} put in, `{self.into}`'s action at step {self.changed} changes "
                f"from {_plain(self.before)} to {_plain(self.after)}")


def _plain(value: Any) -> Any:
    import numpy as np

    arr = np.asarray(value)
    return np.round(arr.astype(float), 4).tolist() if arr.dtype.kind == "f" else arr.tolist()


def _connector(pipeline: Any, name: str) -> Any:
    for c in getattr(pipeline, "connectors", []) if pipeline is not None else []:
        if type(c).__name__ == name:
            return c
    return None


def _taking(fact: str, source: tuple[Any, Any, Any]) -> Callable[[Any, Any, Any], None] | None:
    """How a copy's (module, env_to_module, module_to_env) takes `source`'s value of `fact` (None: it cannot)."""
    module, e2m, m2e = source
    if fact in ("normalize_actions", "clip_actions"):
        piece = _connector(m2e, "NormalizeAndClipActions")
        if piece is None:
            return None
        value = getattr(piece, fact)

        def set_flag(_module: Any, _e2m: Any, m2e_copy: Any) -> None:
            setattr(_require(_connector(m2e_copy, "NormalizeAndClipActions")), fact, value)
        return set_flag
    if fact == "connector state":
        states = tuple(p.get_state() if p is not None else None for p in (e2m, m2e))

        def set_states(_module: Any, e2m_copy: Any, m2e_copy: Any) -> None:
            for pipeline, state in zip((e2m_copy, m2e_copy), states):
                if state is not None:
                    _require(pipeline).set_state(state)
        return set_states
    if fact == "weights" and module is not None:
        weights = module.state_dict()

        def set_weights(module_copy: Any, _e2m: Any, _m2e: Any) -> None:
            _require(module_copy).load_state_dict(weights, strict=False)
        return set_weights
    return None


def _require(part: Any) -> Any:
    if part is None:
        raise LookupError("the copy has no such part")
    return part


@contextlib.contextmanager
def _seeded(seed: int | None) -> Iterator[None]:
    """The draws the replay made (it seeds the process-wide generators from the episode's seed), for a path
    that samples (and whose env did not draw from them first)."""
    states = global_rng.capture(global_rng.GENERATORS)
    global_rng.seed_all(seed or 0)
    try:
        yield
    finally:
        global_rng.restore(states)


def _actions(make: Callable[[], Any], inputs: list[Any], seed: int | None) -> list[Any] | None:
    try:
        with _seeded(seed):
            return run_policy(make, [], inputs)
    except Exception:  # a copy that cannot run tells nothing
        return None


def swap(into: Side, source: Side, fact: str, seed: int | None) -> Swap | None:
    """`into`'s replayed episode run again with `source`'s value of `fact` (None: it cannot be told)."""
    if into.variant is None or source.variant is None:
        return None
    change = _taking(fact, source.parts)
    sent = into.steps("action_for_env")[:MAX_STEPS]
    inputs = into.inputs()[: len(sent)]
    if change is None or not sent or len(inputs) != len(sent):
        return None
    own = _actions(into.variant(lambda *parts: None), inputs, seed)
    if own is None or not all(close(x, y) for x, y in zip(own, sent)):
        return None  # its copy does not give back its own actions: a swap would tell nothing
    swapped = _actions(into.variant(change), inputs, seed)
    if swapped is None:
        return None
    for t, (x, y) in enumerate(zip(own, swapped)):
        if not close(x, y):
            return Swap(fact, into.name, source.name, len(sent), t, x, y)
    return Swap(fact, into.name, source.name, len(sent), None)


def settle(sides: Any, differ: dict[str, dict[str, Any]], seed: int | None) -> tuple[dict[str, str], dict[str, str]]:
    """({fact: proof} for differing facts whose swaps change no action, {fact: proof} for those that do)."""
    inert, acting = {}, {}
    for fact in SWAPPABLE:
        values = differ.get(fact, {})
        names = [n for n in values if n in sides.traces and sides.traces[n].stages]
        pairs = [(p, q) for i, p in enumerate(names) for q in names[i + 1:] if values[p] != values[q]]
        if not pairs:
            continue
        swaps = [swap(sides[x], sides[y], fact, seed) for p, q in pairs for x, y in ((p, q), (q, p))]
        moved = [s for s in swaps if s is not None and s.changed is not None]
        if moved:
            acting[fact] = f"counterfactual: {moved[0].text()}"
        elif all(s is not None for s in swaps):
            inert[fact] = f"{'; '.join(s.text() for s in swaps if s is not None)} of seed {seed}"
    return inert, acting

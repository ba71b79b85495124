"""The checkpoint kinds tui-eval knows: one registry, read by loading, help, the run log's versions and the tests.

A kind is offered by a package as a `KindPlugin` value (tui_eval/integrations/base.py) named by an entry point
of the group `tui_eval.kinds` in the package's metadata, as tui-eval's own are in its pyproject.toml:

    [project.entry-points."tui_eval.kinds"]
    rllib = "tui_eval.integrations.rllib:PLUGIN"

A kind not (yet) packaged is named in the environment variable `TUI_EVAL_KINDS` ("module:ATTR", comma
separated), which the processes a run starts inherit. Kinds are tried in their `order`; an entry point that
fails to load is a one-line error naming it, never a silent gap.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os

from tui_eval.config.spec import BadInput
from tui_eval.integrations.base import KindPlugin

GROUP = "tui_eval.kinds"
ENV_VAR = "TUI_EVAL_KINDS"


def _resolve(target: str, where: str) -> KindPlugin:
    module, _, attr = target.partition(":")
    try:
        plugin = getattr(importlib.import_module(module), attr or "PLUGIN")
    except (ImportError, AttributeError) as exc:
        raise BadInput(f"the checkpoint kind {target!r} ({where}) cannot be loaded: {exc}; fix or remove it") from exc
    if not isinstance(plugin, KindPlugin):
        raise BadInput(f"{target!r} ({where}) is not a KindPlugin; point it at the package's PLUGIN value")
    return plugin


def plugins() -> list[KindPlugin]:
    """Every registered kind, in the order they are tried."""
    found: dict[str, KindPlugin] = {}
    for entry in importlib.metadata.entry_points(group=GROUP):
        plugin = _resolve(entry.value, f"entry point {entry.name} of {GROUP}")
        found[plugin.name] = plugin
    for target in filter(None, (t.strip() for t in os.environ.get(ENV_VAR, "").split(","))):
        plugin = _resolve(target, ENV_VAR)
        found[plugin.name] = plugin
    if not found:
        raise BadInput(f"no checkpoint kind is registered (entry points {GROUP}); reinstall tui-eval "
                       "(pip install -e .)")
    return sorted(found.values(), key=lambda p: (p.order, p.name))


def what_opens() -> str:
    """What the user may pass, from every registered kind: "an RLlib checkpoint directory, ... or an rsl_rl
    model_*.pt file"."""
    opens = [p.opens for p in plugins()]
    return ", ".join(opens[:-1]) + (" or " if len(opens) > 1 else "") + opens[-1]


def distributions() -> tuple[str, ...]:
    """The distributions every kind names, each once, in the kinds' order."""
    return tuple(dict.fromkeys(d for p in plugins() for d in p.distributions))

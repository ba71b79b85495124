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

from tui_eval.config.option import Option, Scope
from tui_eval.config.spec import RUN_OPTIONS, kind_flag
from tui_eval.errors import BadInput
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


def kind_options() -> dict[str, tuple[str, Option]]:
    """Every kind's own run options: name -> (the kind that declares it, its declaration). A declaration that
    breaks the rules (a flag other than its name with dashes, a value other than a text or a switch, a name taken)
    is a one-line error naming the kind."""
    shared = {option.dest for option in RUN_OPTIONS}
    found: dict[str, tuple[str, Option]] = {}
    for plugin in plugins():
        for option in plugin.declared_options():
            name = option.dest
            if name in shared or name in found:
                taken = "every kind's" if name in shared else f"kind {found[name][0]}'s"
                raise BadInput(f"kind {plugin.name} declares the run option {name!r}, already {taken}; rename it")
            if option.flags != (kind_flag(name),) or option.action not in ("store", "store_true") or \
                    option.scope is not Scope.RUN or option.type is not None:
                raise BadInput(f"kind {plugin.name}'s option {name!r} must be a text or a switch flagged "
                               f"{kind_flag(name)}; fix its declaration")
            found[name] = (plugin.name, option)
    return found


def run_options() -> tuple[Option, ...]:
    """Every run option: those every kind shares (tui_eval/config/spec.py), then each kind's own."""
    return RUN_OPTIONS + tuple(option for _, option in kind_options().values())


def check_kind_options(kind_name: str, given: dict[str, object]) -> None:
    """BadInput when an option of another kind was given for a checkpoint of kind `kind_name`."""
    declared = kind_options()
    for name, value in given.items():
        owner = declared.get(name, (None,))[0]
        if value not in (None, False) and owner != kind_name:
            raise BadInput(f"{kind_flag(name)} is an option of {owner or 'no installed'} checkpoints, and this "
                           f"checkpoint is {kind_name}'s; drop {kind_flag(name)}")

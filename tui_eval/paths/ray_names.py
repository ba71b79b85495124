"""Names of the Ray actors a run creates: each starts with the run's own prefix, so that `tui-eval resume`
on the same cluster can find and end the actors a killed driver left behind (Ray ends a driver's actors
when it notices the driver is gone; this makes sure, before the resumed run asks for room of its own)."""

from __future__ import annotations

import re
import uuid

PREFIX = "tui_eval."
_run = "run"


def set_run(name: str) -> None:
    """The run whose actors this process creates from now on (its log's name)."""
    global _run
    _run = _safe(name)


def actor_name(role: str) -> str:
    """A fresh name for an actor of the current run: `tui_eval.RUN.ROLE.UNIQUE`."""
    return f"{run_prefix(_run)}{role}.{uuid.uuid4().hex[:8]}"


def run_prefix(run: str) -> str:
    return f"{PREFIX}{_safe(run)}."


def end_actors_of(run: str) -> list[str]:
    """Kill every live named actor of run `run` (any namespace); the names of those ended."""
    import ray
    from ray.util import list_named_actors

    prefix, ended = run_prefix(run), []
    for entry in list_named_actors(all_namespaces=True):
        name, namespace = entry["name"], entry["namespace"]
        if not name.startswith(prefix):
            continue
        try:
            ray.kill(ray.get_actor(name, namespace=namespace), no_restart=True)
        except ValueError:  # gone meanwhile
            continue
        ended.append(name)
    return ended


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", name) or "run"

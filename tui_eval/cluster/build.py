"""Building a path whose episodes run in Ray actors: the actor class with its resources, and a copy of
the run's spec that means the same on another node (absolute paths; no log, no Ray of its own)."""

from __future__ import annotations

import dataclasses
import os

from tui_eval.cluster.connect import actor_resources
from tui_eval.cluster.remote_path import RemotePath
from tui_eval.config.option import Scope, Travel
from tui_eval.config.spec import RUN_OPTIONS, RunSpec
from tui_eval.kinds.registry import kind_options
from tui_eval.paths.ray_names import actor_name

#: offer, poll, hold and the episode loop's own thread must run side by side in the actor
ACTOR_THREADS = 6


def build_remote_path(spec: RunSpec, name: str, explore: bool, actors: int, wait: bool = True,
                      label: str | None = None) -> RemotePath:
    """`spec.workers` actors, each building path `name` as the run would in-process (loaded on return
    with `wait`, else loading: `RemotePath.wait_loaded`); `label` names the actors where several checkpoints'
    paths of one name run at once (a sweep)."""
    import ray

    from tui_eval.envs import global_rng
    from tui_eval.isolation.worker import PathWorker

    resources = actor_resources(spec, actors)
    actor_class = ray.remote(PathWorker)
    options = dict(num_cpus=resources.num_cpus, num_gpus=resources.num_gpus, max_concurrency=ACTOR_THREADS,
                   max_restarts=0)
    portable, cwd = portable_spec(spec), os.getcwd()

    def spawn(explore: bool):  # named after the run, so that a resumed run can end what a dead one left
        return actor_class.options(name=actor_name(f"worker-{label or name}"), **options).remote(
            portable, name, explore, cwd, resources.threads, tuple(global_rng.kept_apart()))

    return RemotePath(name, explore, spawn, spec.workers, wait=wait)


def portable_spec(spec: RunSpec) -> RunSpec:
    """The spec an actor builds its path from, as the options declare (`remote`, `localize`): files named by
    absolute path, nothing written, no Ray of its own."""
    defaults = RunSpec(checkpoint=spec.checkpoint)
    changes = {}
    for option in RUN_OPTIONS:
        if option.scope is not Scope.RUN:
            continue
        if option.remote is Travel.RESET:
            changes[option.dest] = getattr(defaults, option.dest)
        elif option.localize is not None:
            changes[option.dest] = option.localize(getattr(spec, option.dest)) or getattr(spec, option.dest)
    own = dict(spec.kind_options)
    for name, (_, option) in kind_options().items():
        if option.localize is not None and own.get(name) is not None:
            own[name] = option.localize(own[name]) or own[name]
    return dataclasses.replace(spec, **changes, kind_options=own)

"""Building a path whose episodes run in Ray actors: the actor class with its resources, and a copy of
the run's spec that means the same on another node (absolute paths; no log, no Ray of its own)."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from tui_eval.cluster.connect import actor_resources
from tui_eval.cluster.remote_path import RemotePath
from tui_eval.paths.ray_names import actor_name
from tui_eval.spec import RunSpec

#: offer, poll, hold and the episode loop's own thread must run side by side in the actor
ACTOR_THREADS = 6


def build_remote_path(spec: RunSpec, name: str, explore: bool, actors: int) -> RemotePath:
    """`spec.workers` actors, each building path `name` as the run would in-process."""
    import ray

    from tui_eval.cluster.worker import PathWorker

    resources = actor_resources(spec, actors)
    actor_class = ray.remote(PathWorker)
    options = dict(num_cpus=resources.num_cpus, num_gpus=resources.num_gpus, max_concurrency=ACTOR_THREADS,
                   max_restarts=0)
    portable, cwd = portable_spec(spec), os.getcwd()

    def spawn(explore: bool):  # named after the run, so that a resumed run can end what a dead one left
        return actor_class.options(name=actor_name(f"worker-{name}"), **options).remote(
            portable, name, explore, cwd, resources.threads)

    return RemotePath(name, explore, spawn, spec.workers)


def portable_spec(spec: RunSpec) -> RunSpec:
    """The spec an actor builds its path from: files named by absolute path, nothing written, no Ray."""

    def absolute(item: str | None) -> str | None:
        return str(Path(item).expanduser().absolute()) if item and Path(item).expanduser().exists() else item

    def custom(item: str) -> str:  # NAME=MODULE:FACTORY, MODULE maybe a .py file
        name, _, target = item.partition("=")
        module, _, factory = target.rpartition(":")
        return f"{name}={absolute(module)}:{factory}" if module.endswith(".py") else item

    return dataclasses.replace(
        spec, checkpoint=absolute(spec.checkpoint) or spec.checkpoint, vs=absolute(spec.vs),
        agent_cfg=absolute(spec.agent_cfg), imports=[absolute(i) or i for i in spec.imports],
        custom_paths=[custom(i) for i in spec.custom_paths],
        log=None, json=None, workers=1, ray_address=None)

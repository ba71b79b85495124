"""Joining a Ray cluster (`--ray-address`) or starting the local one (`--workers` alone), and what each
actor asks of it. Bad input here is one line saying what to do (BadInput), never a Ray traceback."""

from __future__ import annotations

import os
from dataclasses import dataclass

from tui_eval.cluster.join_check import check_joinable
from tui_eval.config.spec import RunSpec
from tui_eval.errors import BadInput


@dataclass(frozen=True)
class ActorResources:
    """What one actor asks Ray for, and the torch threads it then uses."""

    num_cpus: float
    num_gpus: float
    threads: int


def connect(spec: RunSpec, actors: int) -> None:
    """Join the cluster named by `--ray-address`, or start the local loopback Ray with room for `actors`."""
    import ray

    if spec.ray_address is None:
        from tui_eval.local_ray import ensure_ray

        ensure_ray(num_cpus=actors)
        return
    if ray.is_initialized():
        return
    address = spec.ray_address
    check_joinable(address)  # in seconds what ray.init would take minutes to fail on
    try:
        ray.init(address=address, log_to_driver=False, configure_logging=False, include_dashboard=False)
    except Exception as exc:  # ray raises ConnectionError, RuntimeError, ValueError for a wrong address
        from tui_eval.errors import first_line

        raise BadInput(f"cannot join the Ray cluster at {address} ({first_line(exc, 140)}); start it with "
                       "`ray start --head` there, or pass the address `ray start` printed") from None


def actor_resources(spec: RunSpec, actors: int) -> ActorResources:
    """One CPU per actor on a cluster; on the local Ray the cores shared among the actors. With
    `--device cuda`, the cluster's GPUs shared among the actors (a fraction each when fewer)."""
    import ray

    gpus = 0.0
    if spec.device.startswith("cuda"):
        total = float(ray.cluster_resources().get("GPU", 0))
        if total <= 0:
            raise BadInput("--device cuda with --workers: the Ray cluster reports no GPU; use --device cpu or "
                           "start the nodes with GPUs (ray start --num-gpus N)")
        gpus = min(1.0, int(total / actors * 100) / 100) or 0.01
    if spec.ray_address is None:
        cores = os.cpu_count() or 1
        return ActorResources(num_cpus=1, num_gpus=gpus, threads=max(1, cores // actors))
    return ActorResources(num_cpus=1, num_gpus=gpus, threads=1)

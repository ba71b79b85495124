"""The child's side of the check of a differing seed (tui_eval/isolation/check.py says what it answers and why): build
the two paths with explore off, replay the seed on each alone, feed each policy the other's observations, replay a few
more of the first path's seeds for the noise floor (with the seed, in one go), answer in JSON."""

from __future__ import annotations

import os
import time
import traceback
from typing import Any

from tui_eval.config.spec import RunSpec
from tui_eval.errors import first_line
from tui_eval.paths.base import InferencePath, close_quietly, episodes_at_once
from tui_eval.records import EpisodeRecord
from tui_eval.stats.exact_proof import CheckRequest

FLOOR_SEEDS = 8  # the first path's seeds replayed alone for the noise floor, at most
FLOOR_BUDGET_S = 60.0  # a seed the run had not recorded is played twice, unless playing the floor once took this long


class _Seeds:
    """A feed of given seeds, in order, for a path playing them alone (without the other path)."""

    heartbeat = None
    cancelled = False

    def __init__(self, seeds: list[tuple[int, int]]):
        self._left = list(reversed(seeds))

    def take(self) -> tuple[int, int] | None:
        return self._left.pop() if self._left else None


def play_alone(path: InferencePath, seed: int, block: int) -> EpisodeRecord | None:
    return play_together(path, [(seed, block)]).get((seed, block))


def play_together(path: InferencePath, seeds: list[tuple[int, int]]) -> dict[tuple[int, int], EpisodeRecord]:
    """`seeds` played by one path in one go, as its run plays them (its envs, or a batch of worlds, side by side):
    a batched simulator steps all its worlds for one seed as for eight, so the floor's seeds cost one batch."""
    records: list[EpisodeRecord] = []
    if seeds:
        path.run(_Seeds(seeds), records.append)
    return {(record.seed, record.block): record for record in records}


def floor_count(capacity: int) -> int:
    """Floor seeds replayed with the checked seed on a path that plays `capacity` episodes at once: `FLOOR_SEEDS`,
    less those that would start a last round of episodes filling at most a quarter of its envs (or one): that round
    costs almost a whole round of steps (the other envs wait idle) for a seed or two of the floor."""
    last_round = (FLOOR_SEEDS + 1) % capacity if 1 < capacity <= FLOOR_SEEDS else 0  # 0: whole rounds
    return FLOOR_SEEDS - last_round if 0 < last_round <= max(1, capacity // 4) else FLOOR_SEEDS


def _result(record: EpisodeRecord | None) -> dict[str, Any] | None:
    if record is None:
        return None
    return {"return": record.ret, "valid": not record.invalid, "success": record.success}


def run_check(paths: dict[str, InferencePath], request: CheckRequest) -> dict[str, Any]:
    """The three answers, as JSON (module docstring); `paths` hold `a` and `b`, built here with explore off."""
    from tui_eval.paths.agreement import agreement
    from tui_eval.stats.agreement import noise_floor
    from tui_eval.stats.compare import same_result

    floor_seeds = request.floor[:floor_count(episodes_at_once(paths[request.a]))]
    started = time.monotonic()
    # `a` plays the seed with its floor's seeds in one go (a batch of worlds plays them at the cost of one)
    first_pass = play_together(paths[request.a], [(request.seed, request.block)] +
                               [(seed, block) for seed, block, _ in floor_seeds])
    first_pass_s = time.monotonic() - started
    replays: dict[str, Any] = {}
    for name in (request.a, request.b):
        again = (first_pass.get((request.seed, request.block)) if name == request.a else
                 play_alone(paths[name], request.seed, request.block))
        ret, valid, success = request.recorded[name]
        repeated = again is not None and same_result(again.ret, not again.invalid, again.success, ret, valid, success)
        replays[name] = {"record": _result(again), "same": repeated}
    found, notes, parting = agreement(paths, request.a, request.b, request.seed, request.tolerance)
    first = replays[request.a]["record"]
    replayed: list[float] = []
    recorded: list[float] = []
    same: list[bool] = []
    if first is not None and first["valid"] and request.recorded[request.a][1]:
        replayed, recorded, same = [first["return"]], [request.recorded[request.a][0]], [replays[request.a]["same"]]
    for replayed_ret, in_run in _floor_replays(paths[request.a], floor_seeds, first_pass, first_pass_s, notes):
        replayed.append(replayed_ret)
        recorded.append(in_run)
        same.append(same_result(replayed_ret, True, None, in_run, True, None))
    floor = noise_floor(request.a, replayed, recorded, same) if replayed else None
    return {"replays": replays, "agreement": None if found is None else found.to_json(), "notes": notes,
            "floor": None if floor is None else floor.to_json(), "parting": list(parting)}


def _floor_replays(path: InferencePath, floor: list[tuple[int, int, float | None]],
                   first_pass: dict[tuple[int, int], EpisodeRecord], first_pass_s: float,
                   notes: list[str]) -> list[tuple[float, float]]:
    """(return replayed alone, return in the run) of each valid floor seed, from `first_pass` (every floor seed
    played, in `first_pass_s`), then a second pass over the seeds the run had not recorded (their first pass stands
    for the run's) unless the first took the floor's whole budget."""
    unrecorded = [(seed, block) for seed, block, in_run in floor if in_run is None]
    second_pass: dict[tuple[int, int], EpisodeRecord] = {}
    if unrecorded and first_pass_s > FLOOR_BUDGET_S:
        notes.append(f"noise floor: {len(unrecorded)} seed(s) the run had not recorded left out (its seeds took over "
                     f"{FLOOR_BUDGET_S:g}s to replay once)")
    elif unrecorded:
        second_pass = play_together(path, unrecorded)
    pairs: list[tuple[float, float]] = []
    for seed, block, in_run in floor:
        first = first_pass.get((seed, block))
        if first is None or first.invalid:
            continue
        if in_run is not None:
            pairs.append((first.ret, in_run))
        elif (again := second_pass.get((seed, block))) is not None and not again.invalid:
            pairs.append((again.ret, first.ret))
    return pairs


# ------------------------------------------------------------------------------------------- the child's side
def serve_check(conn: Any, spec: RunSpec, request: dict[str, Any], setup: dict[str, Any]) -> None:
    """Build the two paths with explore off, answer the request, close them."""
    from tui_eval.isolation.worker import prepare_process

    built: dict[str, InferencePath] = {}
    try:
        if setup.get("niceness"):
            os.nice(setup["niceness"])  # before Ray starts: its processes inherit it (tui_eval/isolation/check.py)
        if setup.get("ray_address"):
            from tui_eval.local_ray import join_local_ray

            join_local_ray(setup["ray_address"])
        asked = CheckRequest(**request)
        kind = prepare_process(spec, setup["cwd"], setup["threads"], tuple(setup["keep_apart"]), in_ray=False)
        for name in (asked.a, asked.b):
            built[name] = kind.build_path(name, False)
        conn.send(("checked", run_check(built, asked)))
    except BaseException as exc:  # whatever fails, the run hears it in one line and goes on statistically
        conn.send(("check_failed", first_line(exc, 300), traceback.format_exc()))
    finally:
        for path in built.values():
            close_quietly(path)

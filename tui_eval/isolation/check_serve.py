"""The child's side of the check of a differing seed (tui_eval/isolation/check.py says what it answers and why): build
the two paths with explore off, replay the seed on each alone, feed each policy the other's observations, replay a few
more of the first path's seeds for the noise floor, answer in JSON."""

from __future__ import annotations

import time
import traceback
from typing import Any

from tui_eval.config.spec import RunSpec
from tui_eval.errors import first_line
from tui_eval.paths.base import InferencePath, close_quietly
from tui_eval.records import EpisodeRecord
from tui_eval.stats.exact_proof import CheckRequest

FLOOR_SEEDS = 8  # the first path's seeds replayed alone for the noise floor, at most
FLOOR_BUDGET_S = 60.0  # and for at most this long (the check's own seed not counted)


class _OneSeed:
    heartbeat = None
    cancelled = False

    def __init__(self, seed: int, block: int):
        self._left = [(seed, block)]

    def take(self) -> tuple[int, int] | None:
        return self._left.pop() if self._left else None


def play_alone(path: InferencePath, seed: int, block: int) -> EpisodeRecord | None:
    records: list[EpisodeRecord] = []
    path.run(_OneSeed(seed, block), records.append)
    return records[0] if records else None


def _result(record: EpisodeRecord | None) -> dict[str, Any] | None:
    if record is None:
        return None
    return {"return": record.ret, "valid": not record.invalid, "success": record.success}


def run_check(paths: dict[str, InferencePath], request: CheckRequest) -> dict[str, Any]:
    """The three answers, as JSON (module docstring); `paths` hold `a` and `b`, built here with explore off."""
    from tui_eval.paths.agreement import agreement
    from tui_eval.stats.agreement import noise_floor
    from tui_eval.stats.compare import same_result

    replays: dict[str, Any] = {}
    for name in (request.a, request.b):
        again = play_alone(paths[name], request.seed, request.block)
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
    started = time.monotonic()
    for seed, block, in_run in request.floor[:FLOOR_SEEDS]:
        if time.monotonic() - started > FLOOR_BUDGET_S:
            notes.append(f"noise floor: stopped after {FLOOR_BUDGET_S:g}s")
            break
        if in_run is None:  # a seed the run had not recorded: the first path plays it twice here
            first_play = play_alone(paths[request.a], seed, block)
            if first_play is None or first_play.invalid:
                continue
            in_run = first_play.ret
        again = play_alone(paths[request.a], seed, block)
        if again is None or again.invalid:
            continue
        replayed.append(again.ret)
        recorded.append(in_run)
        same.append(same_result(again.ret, True, None, in_run, True, None))
    floor = noise_floor(request.a, replayed, recorded, same) if replayed else None
    return {"replays": replays, "agreement": None if found is None else found.to_json(), "notes": notes,
            "floor": None if floor is None else floor.to_json(), "parting": list(parting)}


# ------------------------------------------------------------------------------------------- the child's side
def serve_check(conn: Any, spec: RunSpec, request: dict[str, Any], setup: dict[str, Any]) -> None:
    """Build the two paths with explore off, answer the request, close them."""
    from tui_eval.isolation.worker import prepare_process

    built: dict[str, InferencePath] = {}
    try:
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

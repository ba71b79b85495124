"""The check of a seed whose episodes differ, in a fresh process: same policy, repeatable env, noise floor.

When two deterministic paths give different episodes on one seed, three questions decide what that means, and one
process answers them all (a fresh interpreter, forked from the zygote as a path's process is, building the run's
paths as the run's processes build them; the run goes on meanwhile):

1. Does each path, alone, give its own episode again on that seed? (the env repeats itself from its seed)
2. Do the paths send the same actions on the same observations? Each path's policy is fed the other's observations
   of that seed (tui_eval/paths/agreement.py): within the tolerance, it is the same policy, and the episodes parted
   because the dynamics amplify rounding; beyond it, the paths differ, with the step and both actions as proof.
3. How far does the first path's return move on its own (the noise floor)? A few more of its seeds are replayed
   alone, within a time budget, and set beside the run's returns on them.

The paths run one at a time here, each seeding its env and the process-wide generators at its resets as in the run.
`PolicyCheck` is the run's side (the engine's `prove`, tui_eval/engine/proof.py); `serve_check` the child's.
"""

from __future__ import annotations

import threading
import time
import traceback
from dataclasses import asdict
from typing import Any

from tui_eval.config.spec import EpisodeRecord, RunSpec
from tui_eval.errors import first_line
from tui_eval.isolation.forked import close_ends
from tui_eval.isolation.process_path import LOAD_TIMEOUT_S, take_interpreter
from tui_eval.paths.base import InferencePath, close_quietly
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
    found, notes = agreement(paths, request.a, request.b, request.seed, request.tolerance)
    first = replays[request.a]["record"]
    replayed: list[float] = []
    recorded: list[float] = []
    same: list[bool] = []
    if first is not None and first["valid"] and request.recorded[request.a][1]:
        replayed, recorded, same = [first["return"]], [request.recorded[request.a][0]], [replays[request.a]["same"]]
    started = time.monotonic()
    for seed, block, ret in request.floor[:FLOOR_SEEDS]:
        if time.monotonic() - started > FLOOR_BUDGET_S:
            notes.append(f"noise floor: stopped after {FLOOR_BUDGET_S:g}s")
            break
        again = play_alone(paths[request.a], seed, block)
        if again is None or again.invalid:
            continue
        replayed.append(again.ret)
        recorded.append(ret)
        same.append(same_result(again.ret, True, None, ret, True, None))
    floor = noise_floor(request.a, replayed, recorded, same) if replayed else None
    return {"replays": replays, "agreement": None if found is None else found.to_json(), "notes": notes,
            "floor": None if floor is None else floor.to_json()}


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


# --------------------------------------------------------------------------------------------- the run's side
class PolicyCheck:
    """`check(request)` -> the answers (JSON), from a fresh process of the run's paths; `close` ends one under way
    (a step that hangs there must not outlive the run)."""

    def __init__(self, spec: RunSpec, setup: dict[str, Any]):
        self.spec, self.setup = spec, setup
        self._lock = threading.Lock()
        self._live: list[Any] = []
        self._closed = False

    def __call__(self, request: CheckRequest) -> dict[str, Any]:
        interpreter = take_interpreter()
        with self._lock:
            closed = self._closed
            self._live.append(interpreter)
        conn = None
        try:
            if closed:
                raise RuntimeError("the run closed")
            conn = _connect(interpreter)
            conn.send(("check", self.spec, asdict(request), None, self.setup))
            if not conn.poll(LOAD_TIMEOUT_S + FLOOR_BUDGET_S):
                raise TimeoutError(f"the check did not answer within {LOAD_TIMEOUT_S + FLOOR_BUDGET_S:g}s")
            answer = conn.recv()
            if answer[0] != "checked":
                raise RuntimeError(answer[1])
            return answer[1]
        except (EOFError, OSError):
            raise RuntimeError(f"the check's process ended; its output: {interpreter.output_file}") from None
        finally:
            with self._lock:
                self._live.remove(interpreter)
            close_ends(conn, None)
            interpreter.end()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            live = list(self._live)
        for interpreter in live:
            interpreter.end()


def _connect(interpreter: Any) -> Any:
    """The child's connection, or an error once its process ended before connecting (accept alone would wait on)."""
    box: dict[str, Any] = {}

    def accept() -> None:
        try:
            box["conn"] = interpreter.listener.accept()
        except (OSError, EOFError) as exc:  # closed by `close`, or the child went away mid-handshake
            box["error"] = exc

    waiting = threading.Thread(target=accept, name="check-accept", daemon=True)
    waiting.start()
    while waiting.is_alive():
        waiting.join(0.2)
        if waiting.is_alive() and interpreter.process.poll() is not None:
            waiting.join(0.5)
            if waiting.is_alive():
                raise EOFError("the check's process ended before it connected")
    if "conn" not in box:
        raise EOFError(str(box.get("error", "no connection")))
    return box["conn"]

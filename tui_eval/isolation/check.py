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
The check's process (and the Ray it starts, where it cannot join the run's) yields the CPU to the run's paths
(`CHECK_NICENESS`): it is background work, and on a busy machine it would otherwise take a third of the cores from
the run it checks. Only where the run's answer waits on it (`--until-decided`, a `--fail-if-worse` gate: the paths'
further seeds are spent until it says) does it keep the run's priority.
`PolicyCheck` is the run's side (the engine's `prove`, tui_eval/engine/proof.py); the child's is
tui_eval/isolation/check_serve.py.
"""

from __future__ import annotations

import threading
from dataclasses import asdict
from typing import Any

from tui_eval.config.spec import RunSpec
from tui_eval.isolation.check_serve import FLOOR_BUDGET_S
from tui_eval.isolation.forked import close_ends, output_note
from tui_eval.isolation.process_path import LOAD_TIMEOUT_S, take_interpreter
from tui_eval.stats.exact_proof import CheckRequest

CHECK_NICENESS = 10  # Linux nice value: the check runs on what the run's paths leave of the CPU


def check_niceness(spec: RunSpec) -> int:
    """The check's niceness: the run's own where its answer waits on the check, else `CHECK_NICENESS`."""
    waited_for = spec.until_decided or spec.fail_if_worse is not None or spec.fail_if_worse_success is not None
    return 0 if waited_for else CHECK_NICENESS


class PolicyCheck:
    """`check(request)` -> the answers (JSON), from a fresh process of the run's paths; `close` ends one under way
    (a step that hangs there must not outlive the run)."""

    def __init__(self, spec: RunSpec, setup: dict[str, Any], warm: tuple[str, ...] = ()):
        """`warm`: what the check's process imports first (the kind's heavy imports), where no zygote is alive yet
        (a run whose paths all run in its own process starts none)."""
        self.spec, self.setup, self.warm = spec, {**setup, "niceness": check_niceness(spec)}, warm
        self._lock = threading.Lock()
        self._live: list[Any] = []
        self._closed = False

    def __call__(self, request: CheckRequest) -> dict[str, Any]:
        from tui_eval.local_ray import local_address

        # a run with a local Ray (RLlib's evaluate in the run's process) lends it to the check: none to start there.
        # Not with actors: the check's own would wait for the CPUs the run's hold.
        address = None if self.spec.on_ray else local_address()
        interpreter = take_interpreter(self.warm)
        with self._lock:
            closed = self._closed
            self._live.append(interpreter)
        conn = None
        try:
            if closed:
                raise RuntimeError("the run closed")
            conn = _connect(interpreter)
            conn.send(("check", self.spec, asdict(request), None, {**self.setup, "ray_address": address}))
            if not conn.poll(LOAD_TIMEOUT_S + FLOOR_BUDGET_S):
                raise TimeoutError(f"the check did not answer within {LOAD_TIMEOUT_S + FLOOR_BUDGET_S:g}s")
            answer = conn.recv()
            if answer[0] != "checked":
                raise RuntimeError(answer[1])
            return answer[1]
        except (EOFError, OSError):
            raise RuntimeError(f"the check's process ended; {output_note(interpreter.output_file)}") from None
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

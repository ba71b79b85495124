"""A run spread over a Ray cluster (`--workers N`, `--ray-address`): each path's episodes in N Ray actors.

- `connect`: join the cluster (or start the local loopback Ray) and size what each actor asks for;
- `worker`: the actor: builds the same path object as the run would in-process and runs the seeds it is
  given, streaming records back;
- `remote_path`: the driver side, an InferencePath that hands seeds out in small blocks, collects records,
  and replaces a worker that dies (its unfinished seeds run again elsewhere).

RLlib's `evaluate` path scales the RLlib way instead (in tui_eval/integrations/rllib/paths/: evaluation env
runners: evaluate.py; a dead runner brought back between calls: eval_runners.py; the step watchdog in a
runner: runner_watchdog.py).
Every actor of a run is named after it (paths/ray_names.py), so that a resumed run ends what a killed one left.
"""

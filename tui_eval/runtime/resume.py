"""`tui-eval resume RUN`: continue a run whose process died (SIGKILL, OOM, reboot) from its log, with
the same spec: the engine restores its blocks and statistics, re-runs the seeds that were in flight,
and goes on from where each path stopped; no finished seed runs again, none is skipped."""

from __future__ import annotations

import time
from pathlib import Path

from tui_eval.config.spec import RunSpec, SeedBlock
from tui_eval.errors import BadInput
from tui_eval.log.lifecycle import RunMeta, RunStatus
from tui_eval.log.store import RunLog

from . import log_lock
from .execute import execute
from .owner import RunOwner


def spec_from_meta(meta: dict, log: Path) -> RunSpec:
    """The spec a run's log holds, with the explore settings the run had last and this log as its log."""
    data = dict(meta.get("spec") or {})
    if not data.get("checkpoint"):
        raise BadInput(f"{log} holds no run spec; it cannot be resumed")
    spec = RunSpec.from_json(data)
    spec.explore = {**spec.explore, **{k: bool(v) for k, v in (meta.get("explore") or {}).items()}}
    spec.log = str(log)
    return spec


def check_resumable(log: Path, meta: dict) -> None:
    """BadInput when the run (or sweep) is live or finished; else note the resume in its log."""
    owner_now = log_lock.holder(log)
    if owner_now is not None:
        raise BadInput(f"run {log.stem} is live (pid {owner_now.get('pid')}); tui-eval attach {log.stem} instead")
    if RunMeta.from_json(meta).status == RunStatus.DONE:
        raise BadInput(f"run {log.stem} finished; nothing to resume (start a new run for more episodes)")
    RunMeta(resumed_at=[*(meta.get("resumed_at") or []), time.time()]).write(RunLog(log))


def resume_run(log: Path, *, headless: bool) -> int:
    reader = RunLog(log, readonly=True)
    meta, records = reader.meta(), reader.records()
    reader.close()
    check_resumable(log, meta)
    spec = spec_from_meta(meta, log)
    saved = meta.get("blocks") or ([meta["seeds"]] if meta.get("seeds") else [])
    if not saved:  # it failed while loading: there is nothing to continue, only the run to start again
        raise BadInput(f"run {log.stem} never started its episodes ({meta.get('error') or 'it failed while loading'})"
                       f"; start a new run: tui-eval {spec.checkpoint} --log NEW_LOG")
    blocks = [SeedBlock(int(a), b) for a, b in saved]
    owner = RunOwner(spec, resuming=True)
    owner.restore_from = (blocks, records)
    return execute(spec, owner, headless=headless)

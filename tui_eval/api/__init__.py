"""tui-eval from Python: a notebook, a training callback that checks each export, a test in your own repository.

    from tui_eval import api

    run = api.evaluate("logs/rsl_rl/cartpole/2026-12-01_10-00-00", env="Mjlab-Cartpole-Balance",
                       paths=["runner", "onnx"], episodes=20, num_envs=8)
    run.verdict, run.same_policy, run.paths["onnx"].mean, run.to_json()   # to_json(): the `--json` summary

The run options are keyword arguments named after their flags (`--num-envs` → `num_envs`; lists for
comma-separated values, a dict for JSON, a range for `seeds`). Each call runs the CLI's own command in this process,
headless, so a keyword is checked as its flag is and a bad value raises `BadInput` with the CLI's one line.
`quiet=False` lets the progress and the summary table through to this process's stdout and stderr.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from tui_eval.errors import BadInput

from .options import run_keywords, to_argv
from .results import Diagnosis, Evaluation, PathResult, Sweep

__all__ = ["BadInput", "Diagnosis", "Evaluation", "PathResult", "Sweep", "assert_same_policy", "diagnose",
           "evaluate", "run_keywords", "sweep"]


def evaluate(checkpoint: str | Path, *, quiet: bool = True, **options: Any) -> Evaluation:
    """Run `checkpoint`'s paths on held-out seeds to the run's end (`tui-eval CHECKPOINT --headless --json`):
    its exit code and summary. A run asked for no episode count plays 100 seeds, as the CLI does."""
    from tui_eval.commands import run

    _in_main_thread("evaluate")
    with _summary_file() as out:
        code, _ = _command(run.main, [str(checkpoint), "--headless", *to_argv(options), "--json", str(out)],
                           quiet=quiet)
        return Evaluation(exit_code=code, summary=_read(out))


def diagnose(checkpoint: str | Path, *, seed: int | None = None, quiet: bool = True, **options: Any) -> Diagnosis:
    """Why the paths differ (`tui-eval diagnose CHECKPOINT --json`): findings, best first, each with its proof."""
    from tui_eval.commands import diagnose as command

    with _summary_file() as out:
        argv = [str(checkpoint), *to_argv(options, extra={"--seed": seed}), "--json", str(out)]
        _, text = _command(command.main, argv, quiet=quiet)
        return Diagnosis(report=_read(out), text=text.strip())


def sweep(*runs: str | Path, round: int | None = None, fail_if_not_best: str | None = None, quiet: bool = True,
          **options: Any) -> Sweep:
    """Which checkpoint of a training run is best on held-out seeds (`tui-eval sweep RUN ... --json`)."""
    from tui_eval.commands import sweep as command

    if not runs:
        raise BadInput("sweep needs a run folder or checkpoints")
    _in_main_thread("sweep")
    with _summary_file() as out:
        own = to_argv(options, extra={"--round": round, "--fail-if-not-best": fail_if_not_best})
        code, _ = _command(command.main, [*map(str, runs), "--headless", *own, "--json", str(out)], quiet=quiet)
        return Sweep(exit_code=code, summary=_read(out))


def assert_same_policy(checkpoint: str | Path, **options: Any) -> Evaluation:
    """For a test in your repository: AssertionError, with the numbers, unless the run's paths act alike on the same
    observations (within the action tolerance) or play identical episodes. Returns the evaluation."""
    result = evaluate(checkpoint, **options)
    if result.exit_code not in (0, 3):
        raise AssertionError(f"the run did not complete (exit {result.exit_code}): {result.summary.get('error')}")
    if not result.same_policy:
        from tui_eval.views.format import agreement_text

        comparison = result.comparison
        steps = (comparison.get("agreement") or {}).get("steps")
        why = comparison.get("exact_reason") or f"the verdict: {result.verdict}"
        raise AssertionError(f"{comparison.get('a')} and {comparison.get('b')} are not the same policy: "
                             f"{agreement_text(comparison.get('agreement'))}"
                             + (f" over {steps} steps" if steps else "") + f"; {why}")
    return result


def _command(main: Callable[[list[str]], int], argv: list[str], *, quiet: bool) -> tuple[int, str]:
    """Run one CLI command in this process as the CLI would (its environment prepared first); its exit code and
    what it printed on stdout."""
    from tui_eval.local_ray import prepare_environment
    from tui_eval.user.code import make_cwd_importable

    prepare_environment(joining_cluster="--ray-address" in argv)
    make_cwd_importable()
    printed = io.StringIO()
    with _streams(printed, quiet=quiet):
        code = main(argv)
    return code, printed.getvalue()


@contextlib.contextmanager
def _streams(printed: io.StringIO, *, quiet: bool) -> Iterator[None]:
    stdout = _Tee(printed, None if quiet else sys.stdout)
    stderr = io.StringIO() if quiet else sys.stderr
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        yield


class _Tee(io.TextIOBase):
    def __init__(self, kept: io.StringIO, shown: Any):
        self.kept, self.shown = kept, shown

    def write(self, text: str) -> int:
        self.kept.write(text)
        if self.shown is not None:
            self.shown.write(text)
        return len(text)

    def flush(self) -> None:
        if self.shown is not None:
            self.shown.flush()


@contextlib.contextmanager
def _summary_file() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="tui-eval-api-") as folder:
        yield Path(folder) / "summary.json"


def _read(out: Path) -> dict[str, Any]:
    return json.loads(out.read_text()) if out.is_file() else {}


def _in_main_thread(call: str) -> None:
    if threading.current_thread() is not threading.main_thread():  # the run handles Ctrl-C and SIGTERM as the CLI
        raise BadInput(f"tui_eval.api.{call} runs in the main thread (it handles Ctrl-C and SIGTERM as the CLI "
                       "does); call it there, or run the tui-eval command in a subprocess")

"""The zygote that forks a run's path processes ends with its exit hooks when the run ends it (tui_eval/isolation/
zygote.py): what its imports left in the temporary folder goes with it. rsl_rl's runners import wandb, which makes
two folders there on import; a zygote killed at every run's end left both behind, two a run. One still importing
when the run ends is killed at once; one whose run was killed ends by itself, taking its empty output file.

Each zygote is started by a process of its own (`RUN`), the temporary folder (TMPDIR) the test's: set in this
process, it would reach the background jobs the tests start meanwhile."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from tui_eval.isolation.forked import END_S, Zygote

ROOT = Path(__file__).resolve().parents[3]

RUN = r"""
import json, os, sys, time
from tui_eval.isolation.forked import Zygote
zygote = Zygote(("torch", "rsl_rl.runners", "gymnasium"))  # the imports of an rsl_rl run's zygote
deadline = time.monotonic() + 300
while zygote._conn is None and zygote.process.poll() is None and time.monotonic() < deadline:
    time.sleep(0.05)  # connected once its imports are done
made = sorted(name for name in os.listdir(os.environ["TMPDIR"]) if "wandb" in name)
if sys.argv[1] == "killed":
    print(json.dumps({"pid": zygote.process.pid, "made": made}), flush=True)
    os._exit(0)  # as a run killed with SIGKILL: nothing of its own ends the zygote
started = time.monotonic()
zygote.end()
print(json.dumps({"made": made, "took": time.monotonic() - started, "code": zygote.process.returncode}))
"""


def _run(how: str, folder: Path) -> dict:
    proc = subprocess.run([sys.executable, "-c", RUN, how], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, TMPDIR=str(folder), PYTHONPATH=str(ROOT)))
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _left(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if "wandb" in p.name or p.name.endswith(".log"))


def test_a_zygote_asked_to_end_removes_the_folders_its_imports_made(tmp_path):
    ended = _run("asked", tmp_path)
    assert len(ended["made"]) == 2, ended  # wandb's media and artifacts folders, made on import
    assert ended["code"] == 0 and ended["took"] < END_S  # it ended itself, not killed
    assert _left(tmp_path) == []  # the folders, and its output file (it wrote nothing)


def test_a_zygote_whose_run_was_killed_ends_and_takes_its_empty_output_file_and_folders(tmp_path):
    killed = _run("killed", tmp_path)
    assert len(killed["made"]) == 2, killed
    deadline = time.monotonic() + 30
    while os.path.exists(f"/proc/{killed['pid']}") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not os.path.exists(f"/proc/{killed['pid']}")
    assert _left(tmp_path) == []
    assert any(p.name.startswith("tui-eval-zygote-") for p in tmp_path.iterdir())  # its socket's folder: the run's


def test_a_zygote_still_importing_is_killed_at_once():
    zygote = Zygote(("torch", "rsl_rl.runners", "gymnasium"))
    started = time.monotonic()
    zygote.end()  # long before its imports are done
    assert time.monotonic() - started < END_S
    assert zygote.process.returncode is not None and zygote.process.returncode < 0

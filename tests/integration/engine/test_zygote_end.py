"""The zygote that forks a run's path processes ends with its exit hooks when the run ends it (tui_eval/isolation/
zygote.py): what its imports left in the temporary folder goes with it. rsl_rl's runners import wandb, which makes
two folders there on import; a zygote killed at every run's end left both behind, two a run. One still importing
when the run ends is killed at once."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tui_eval.isolation.forked import END_S, Zygote

ROOT = Path(__file__).resolve().parents[3]


def _wandb_folders(folder) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if "wandb" in p.name)


@pytest.fixture
def own_temp_folder(tmp_path, monkeypatch):
    """The temporary folder the zygote will see (TMPDIR, passed on in its environment)."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    return tmp_path


def test_a_zygote_asked_to_end_removes_the_folders_its_imports_made(own_temp_folder):
    zygote = Zygote(("torch", "rsl_rl.runners", "gymnasium"))  # the imports of an rsl_rl run's zygote
    try:
        deadline = time.monotonic() + 300
        while zygote._conn is None and zygote.process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)  # connected once its imports are done
        made = _wandb_folders(own_temp_folder)
        assert len(made) == 2, made  # wandb's media and artifacts folders, made on import
        started = time.monotonic()
        zygote.end()
        assert time.monotonic() - started < END_S
        assert zygote.process.returncode == 0  # it ended itself, not killed
        assert _wandb_folders(own_temp_folder) == []
    finally:
        zygote.end()


def test_a_zygote_still_importing_is_killed_at_once(own_temp_folder):
    zygote = Zygote(("torch", "rsl_rl.runners", "gymnasium"))
    started = time.monotonic()
    zygote.end()  # long before its imports are done
    assert time.monotonic() - started < END_S
    assert zygote.process.returncode is not None and zygote.process.returncode < 0


PARENT = r"""
import os, sys, time
from tui_eval.isolation.forked import Zygote
zygote = Zygote(("torch", "rsl_rl.runners", "gymnasium"))
deadline = time.monotonic() + 300
while zygote._conn is None and time.monotonic() < deadline:
    time.sleep(0.05)
print(zygote.process.pid, flush=True)
os._exit(0)  # as a run killed with SIGKILL: nothing of its own ends the zygote
"""


def test_a_zygote_whose_run_was_killed_ends_and_takes_its_empty_output_file_and_folders(own_temp_folder):
    import os
    import subprocess
    import sys

    parent = subprocess.run([sys.executable, "-c", PARENT], capture_output=True, text=True, timeout=300,
                            env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert parent.returncode == 0, parent.stderr[-2000:]
    pid = int(parent.stdout.split()[0])
    deadline = time.monotonic() + 30
    while os.path.exists(f"/proc/{pid}") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not os.path.exists(f"/proc/{pid}")
    left = sorted(p.name for p in own_temp_folder.iterdir())
    assert not [name for name in left if "wandb" in name or name.endswith(".log")], left
    assert any(name.startswith("tui-eval-zygote-") for name in left)  # its socket's folder: the killed run's own

"""A run whose log cannot grow (its process under a file-size limit, as on a full disk) stops with one line, its
log readable up to the last whole episode, and `resume` continues it once there is room."""

from __future__ import annotations

import os
import resource
import signal
import sqlite3
import subprocess
import sys

from tests.support.common import ROOT, cli

RSL_DEMO = ROOT / "tui_eval" / "demo_checkpoints" / "rsl_pointgoal" / "model_39.pt"  # no Ray: all files are the run's
# the paths in the run's own process (resume keeps it): the log's writer is what runs out of room, and a path process
# of its own would only add a second torch import to each of the two runs
IN_PROCESS = "--in-process"
EPISODES = 200
LIMIT_BYTES = 1024 * 1024  # the run's facts and its first episodes fit; not all of its episodes


def limited_file_size() -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG), as on a full disk
    resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT_BYTES, LIMIT_BYTES))


def episodes_in(log) -> list[tuple]:
    with sqlite3.connect(f"file:{log}?mode=ro", uri=True) as db:
        return db.execute("SELECT path, seed FROM episodes ORDER BY id").fetchall()


def test_a_run_out_of_room_stops_with_one_line_and_resumes(tmp_path):
    log = tmp_path / "run.sqlite"
    args = [str(RSL_DEMO), "--headless", IN_PROCESS, "--episodes", str(EPISODES), "--seeds", f"0:{EPISODES}",
            "--log", str(log)]
    proc = subprocess.run([sys.executable, "-m", "tui_eval.cli", *args], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300, preexec_fn=limited_file_size,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    errors = [line for line in proc.stderr.splitlines() if line.startswith("tui-eval: error: ")]
    assert len(errors) == 1 and "could not be written" in errors[0] and "tui-eval resume" in errors[0], proc.stderr
    assert proc.returncode == 130, proc.returncode
    kept = episodes_in(log)
    assert 0 < len(kept) < 2 * EPISODES  # readable, every whole episode before the limit

    resumed = cli("resume", log, "--headless", cwd=tmp_path, timeout=300)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    done = episodes_in(log)
    assert done[: len(kept)] == kept
    assert sorted(done) == sorted({(p, s) for p, s in done}) and len(done) == 2 * EPISODES

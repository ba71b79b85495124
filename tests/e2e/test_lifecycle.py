"""Long runs over SSH, with real processes and real signals: detach, attach, a terminal that goes away,
SIGTERM, SIGKILL and resume, one writer per log, output paths checked first, nothing on the network."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from tests.support.bad_input import assert_one_line_error
from tests.support.common import CARTPOLE, ROOT, cli, episodes_in, wait_until
from tests.support.terminals import needs
from tui_eval.log.store import RunLog
from tui_eval.runtime import log_lock

needs_tmux = needs("tmux")


def _seeds(log: Path) -> dict[str, Counter]:
    with sqlite3.connect(f"file:{log}?mode=ro", uri=True) as db:
        rows = db.execute("SELECT path, seed, block FROM episodes").fetchall()
    counts: dict[str, Counter] = {}
    for path, seed, block in rows:
        counts.setdefault(path, Counter())[(block, seed)] += 1
    return counts


def _status(log: Path) -> str:
    return RunLog(log, readonly=True).meta().get("status")


def _count(log: Path) -> int:
    return episodes_in(log)


def _shell_env() -> str:
    """The environment a tmux pane needs to find this checkout and the tests' run registry."""
    keep = ("TUI_EVAL_STATE", "RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER")
    pairs = [f"{k}={os.environ[k]}" for k in keep if k in os.environ]
    return " ".join([f"PYTHONPATH={ROOT}", "TERM=xterm-256color", *pairs])


def _tmux(session: str, command: str) -> None:
    subprocess.run(["tmux", "new-session", "-d", "-x", "120", "-y", "40", "-s", session,
                    f"{_shell_env()} {command}"], check=True)


# paused as soon as its control channel answers, which opens as play begins: enough episodes that the pause
# lands well before the end, few enough to play soon after the viewer left
DETACHED_EPISODES = 24


@needs_tmux
def test_detach_attach_then_the_viewers_terminal_goes_and_the_run_finishes(tmp_path):
    from tui_eval.runtime.control import ControlClient

    log, summary = tmp_path / "det.sqlite", tmp_path / "det.json"
    started = cli(CARTPOLE, "--detach", "--paths", "connectors", "--episodes", DETACHED_EPISODES, "--num-envs", "2",
                  "--log", log, "--json", summary, cwd=tmp_path)
    assert started.returncode == 0, started.stderr
    assert "run det started in the background" in started.stdout and str(log) in started.stdout
    assert log_lock.holder(log) is not None  # the background process holds the log
    assert _status(log) in ("loading", "running")
    # paused through its control channel (as a viewer's `p`) as soon as it answers: the run cannot end before the
    # viewer attaches
    wait_until(lambda: _send(ControlClient(log), "pause").get("state") == "paused", timeout=120)
    session = f"tui-eval-attach-{os.getpid()}"
    _tmux(session, f"{sys.executable} -m tui_eval.cli attach det; sleep 30")
    try:
        wait_until(lambda: "attached to the live run" in subprocess.run(
            ["tmux", "capture-pane", "-p", "-t", session], capture_output=True, text=True).stdout, timeout=60)
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session])  # SIGHUP to the attached app
    assert log_lock.holder(log) is not None and _status(log) != "done"  # the viewer left; the run did not
    assert ControlClient(log).send("resume")["state"] == "running"
    wait_until(lambda: log_lock.holder(log) is None, timeout=180)
    assert _status(log) == "done"
    document = json.loads(summary.read_text())
    logged = sorted((r.seed, r.ret) for r in RunLog(log, readonly=True).records())
    assert logged == sorted((e["seed"], e["return"]) for e in document["episodes"]) and len(logged) == DETACHED_EPISODES
    assert document["status"] == "done"


def _send(client, cmd: str) -> dict:
    """The run's reply, or {} while its control channel is not up yet."""
    try:
        return client.send(cmd)
    except OSError:
        return {}


FOREGROUND_EPISODES = 20  # the terminal goes after 10 of 40 records: most are played without it


@needs_tmux
def test_the_foreground_app_survives_its_terminal(tmp_path):
    log = tmp_path / "fg.sqlite"
    session = f"tui-eval-hup-{os.getpid()}"
    # both default paths: `evaluate` runs on the local Ray, whose processes share the terminal's process group
    _tmux(session, f"{sys.executable} -m tui_eval.cli {CARTPOLE} --episodes {FOREGROUND_EPISODES} --num-envs 2 "
                   f"--log {log}; sleep 60")
    wait_until(lambda: _count(log) >= 10, timeout=120)
    at_hangup = _count(log)
    assert at_hangup < 2 * FOREGROUND_EPISODES  # the terminal goes while the run is mid-way
    subprocess.run(["tmux", "kill-session", "-t", session])  # the SSH connection drops
    # still running, without a terminal: episodes keep coming (and the run ends `done` below, every seed played)
    wait_until(lambda: _count(log) > at_hangup + 2, timeout=120)
    wait_until(lambda: log_lock.holder(log) is None, timeout=240)
    assert _status(log) == "done"
    for path in ("evaluate", "connectors"):
        assert sorted(_seeds(log)[path].values()) == [1] * FOREGROUND_EPISODES, path
    attached = cli("attach", "fg", "--headless", cwd=tmp_path)
    assert attached.returncode == 0 and "(done)" in attached.stdout


KILLED_SEEDS = range(5000, 5012)  # killed after 4 records (of 24): most of them run after the resume


def test_sigkill_then_resume_runs_every_seed_exactly_once(tmp_path):
    log = tmp_path / "k.sqlite"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    block = f"{KILLED_SEEDS.start}:{KILLED_SEEDS.stop}"
    proc = subprocess.Popen([sys.executable, "-m", "tui_eval.cli", str(CARTPOLE), "--headless", "--episodes",
                             str(len(KILLED_SEEDS)), "--num-envs", "3", "--seeds", block, "--explore", "evaluate=off",
                             "--log", str(log)],
                            cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_until(lambda: _count(log) >= 4, timeout=180)
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)
    assert 0 < _count(log) < 2 * len(KILLED_SEEDS)
    assert cli("ls", cwd=tmp_path).stdout.count("interrupted (process gone)") >= 1
    resumed = cli("resume", "k", "--headless", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    seeds = _seeds(log)
    for path in ("evaluate", "connectors"):
        assert sorted(seeds[path]) == [(0, s) for s in KILLED_SEEDS], path
        assert set(seeds[path].values()) == {1}, path
    assert _status(log) == "done"
    # both paths deterministic on the same seeds, before the kill and after the resume: the same episodes
    records = RunLog(log, readonly=True).records()
    returns = {p: {r.seed: r.ret for r in records if r.path == p} for p in ("evaluate", "connectors")}
    assert returns["evaluate"] == returns["connectors"]
    assert f"IDENTICAL on {len(KILLED_SEEDS)}/{len(KILLED_SEEDS)} seeds" in resumed.stdout, resumed.stdout[-2000:]


def test_one_writer_per_log_and_stop(tmp_path):
    log = tmp_path / "one.sqlite"
    first = cli(CARTPOLE, "--detach", "--paths", "connectors", "--episodes", "100000", "--log", log, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    second = cli(CARTPOLE, "--headless", "--paths", "connectors", "--log", log, cwd=tmp_path)
    assert_one_line_error(second, "is in use by run 'one'")
    wait_until(lambda: _count(log) > 0, timeout=120)
    stopped = cli("stop", "one", cwd=tmp_path)
    assert stopped.returncode == 0 and "stopped" in stopped.stdout, stopped.stderr
    assert _status(log) == "stopped" and log_lock.holder(log) is None
    again = cli(CARTPOLE, "--headless", "--paths", "connectors", "--log", log, cwd=tmp_path)
    assert_one_line_error(again, "already holds a run", "tui-eval resume")


@pytest.mark.parametrize("option", ["--log", "--json"])
def test_unwritable_output_paths_exit_2_before_anything_loads(option, tmp_path):
    proc = cli(CARTPOLE, "--headless", option, "/proc/x.out", cwd=tmp_path)
    assert_one_line_error(proc, f"{option} /proc/x.out")
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr  # checked first: no path began to load


def test_json_never_creates_folders(tmp_path):
    proc = cli(CARTPOLE, "--headless", "--json", tmp_path / "no" / "such" / "x.json", cwd=tmp_path)
    assert_one_line_error(proc, "does not exist")
    assert not (tmp_path / "no").exists()


def _listeners(pids: set[int] | None = None) -> set[tuple[str, int]]:
    """Listening TCP sockets (hex address as /proc writes it, port), of the given processes when named."""
    inodes = None if pids is None else _socket_inodes(pids)
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as fh:
            for line in fh.readlines()[1:]:
                fields = line.split()
                if fields[3] == "0A" and (inodes is None or fields[9] in inodes):  # LISTEN
                    address, port = fields[1].rsplit(":", 1)
                    found.add((address, int(port, 16)))
    return found


def _process_tree(root: int) -> set[int]:
    """`root` and every process descended from it (Ray's GCS, raylet, workers, agents)."""
    parents = {}
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                parents[int(proc.name)] = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    tree, grew = {root}, True
    while grew:
        grew = False
        for pid, parent in parents.items():
            if parent in tree and pid not in tree:
                tree.add(pid)
                grew = True
    return tree


def _socket_inodes(pids: set[int]) -> set[str]:
    inodes = set()
    for pid in pids:
        try:
            for fd in Path(f"/proc/{pid}/fd").iterdir():
                target = os.readlink(fd)
                if target.startswith("socket:["):
                    inodes.add(target[8:-1])
        except OSError:
            continue
    return inodes


LOOPBACK = {"0100007F", "0000000000000000FFFF00000100007F", "00000000000000000000000001000000"}


def test_ray_started_by_a_run_listens_on_loopback_only(tmp_path):
    log = tmp_path / "net.sqlite"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "tui_eval.cli", str(CARTPOLE), "--headless", "--paths", "evaluate",
                             "--num-envs", "3", "--episodes", "100000", "--log", str(log)], cwd=tmp_path, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until(lambda: _count(log) >= 1, timeout=180)  # Ray is up: the evaluate path is running
        ours = _listeners(_process_tree(proc.pid))  # other processes on this machine are not this run's
        assert len(ours) >= 3, "Ray's GCS, raylet and workers were expected to listen"
        exposed = [(a, p) for a, p in ours if a not in LOOPBACK]
        assert not exposed, f"listening beyond loopback: {exposed}"
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 143
    assert _status(log) == "stopped"
    assert not list(Path("/tmp").glob(f"tui-eval-ray-{proc.pid}-*"))  # its session files are gone


CHROMIUM = shutil.which("chromium")
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def _viewer_processes(log: Path) -> list[int]:
    """Processes running `tui-eval attach LOG` (the app textual-serve starts per browser tab)."""
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                argv = (proc / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"attach" in argv and str(log).encode() in argv and b"--serve" not in argv:
                found.append(int(proc.name))
    return found


@needs("chromium")
def test_attach_serve_in_a_browser_on_loopback_only(tmp_path):
    log = tmp_path / "web.sqlite"
    assert cli(CARTPOLE, "--detach", "--paths", "connectors", "--episodes", "100000", "--log", log,
               cwd=tmp_path).returncode == 0
    port = 18000 + os.getpid() % 1000
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    server = subprocess.Popen([sys.executable, "-m", "tui_eval.cli", "attach", "web", "--serve", "--port", str(port)],
                              cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        wait_until(lambda: any(p == port for _, p in _listeners()), timeout=60)
        bound = {a for a, p in _listeners() if p == port}
        assert bound and bound <= LOOPBACK, bound  # not reachable on any other address
        page = subprocess.run([CHROMIUM, *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'chromium'}",
                               "--virtual-time-budget=15000", "--dump-dom", f"http://127.0.0.1:{port}/"],
                              capture_output=True, text=True, timeout=120)
        assert "tui-eval · web" in page.stdout, page.stdout[-2000:]
        wait_until(lambda: _viewer_processes(log), timeout=60)  # the tab got a viewer of this very run
    finally:
        server.terminate()
        server.wait(30)
        cli("stop", "web", cwd=tmp_path)
    assert _status(log) == "stopped"


def test_local_ray_starts_in_a_process_that_imported_ray_first(tmp_path):
    """A Python session that imported ray before tui-eval: auth stays as the driver has it, and Ray
    still starts (its servers on loopback) and leaves no session folder behind."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    env["PYTHONPATH"] = str(ROOT)
    code = ("import ray, os; from tui_eval.local_ray import ensure_ray, stop_ray; ensure_ray(); "
            "print(ray._private.worker._global_node.node_ip_address); stop_ray()")
    proc = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True,
                          timeout=180)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip().splitlines()[-1] == "127.0.0.1"

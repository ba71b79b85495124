"""Fixtures every test may use: a fresh run directory and the apps a test makes. Importing this first sets
up the process as the CLI does (before ray is imported) and gives the tests a run registry of their own."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile

import pytest

from tui_eval.local_ray import prepare_environment

prepare_environment()

from tests.support.jobs import WANTED_BY  # noqa: E402  (after prepare_environment: they may import ray)
from tests.support.prefetch import Prefetcher  # noqa: E402

#: the order the folders run in: fast logic first, the real parts that need trained checkpoints later, so
#: that the background jobs (tests/support/jobs.py) are done when those start. The cluster tests come last:
#: they keep both cores busy themselves (a multi-node Ray and its actors), so they run once the jobs are done.
#: The mjlab tests come after the e2e ones: their runs are background jobs (tests/support/mjlab_jobs.py). A test
#: takes the place of the longest prefix it has.
ORDER = ("tests/unit/", "tests/health/", "tests/integration/engine/", "tests/integration/test_",
         "tests/integration/ui/", "tests/integration/report/", "tests/integration/frames/", "tests/integration/rsl_rl/",
         "tests/integration/sb3/", "tests/e2e/", "tests/integration/rsl_rl/test_mjlab",
         "tests/integration/doctor/", "tests/integration/sweep/", "tests/integration/rllib/",
         "tests/integration/cluster/")
#: folders this session made in the temporary folder, removed when it ends (pytest_unconfigure)
MADE: list[str] = []


def _made(folder: str) -> str:
    MADE.append(folder)
    return folder


# runs started by the tests are listed in a registry of their own, not the user's
if "TUI_EVAL_STATE" not in os.environ:
    os.environ["TUI_EVAL_STATE"] = _made(tempfile.mkdtemp(prefix="tui-eval-state-"))
# SB3's logger makes a folder in the temporary folder at every `learn()` unless told where (the tests train many)
os.environ.setdefault("SB3_LOGDIR", os.path.join(os.environ["TUI_EVAL_STATE"], "sb3-logs"))
# the tests' tmux sessions live in a tmux server of their own: one started elsewhere on the machine would give them
# its environment (another checkout's PATH) and its sessions
os.environ["TMUX_TMPDIR"] = _made(tempfile.mkdtemp(prefix="tui-eval-tmux-"))
os.environ.pop("TMUX", None)


def pytest_configure(config):
    config.addinivalue_line("markers", "terminal_tools(*tools): the terminal tools a test drives "
                                       "(tests/support/terminals.py: missing, a skip; in CI, a failure)")


def pytest_unconfigure(config):
    """The tests' own tmux server ends, and the folders this session made go."""
    if shutil.which("tmux"):
        subprocess.run(["tmux", "kill-server"], capture_output=True, timeout=10)
    for folder in MADE:
        shutil.rmtree(folder, ignore_errors=True)


def pytest_runtest_setup(item):
    from tests.support.terminals import check_marked

    check_marked(item)


def _rank(item) -> int:
    places = [(len(prefix), i) for i, prefix in enumerate(ORDER) if item.nodeid.startswith(prefix)]
    return max(places)[1] if places else len(ORDER)


def pytest_collection_modifyitems(session, config, items):
    unplaced = sorted({item.nodeid.rsplit("/", 1)[0] + "/" for item in items if _rank(item) == len(ORDER)})
    if unplaced:  # a folder left out of ORDER would run last, after the cluster tests, unnoticed
        raise pytest.UsageError(f"test folders not in tests/conftest.py's ORDER: {', '.join(unplaced)}; add them")
    items.sort(key=_rank)  # stable: within a folder, the files' and tests' own order


def pytest_collection_finish(session):
    """A run that collects nothing is a broken layout or a wrong path, never a pass."""
    if not session.items and not session.config.option.collectonly:
        raise pytest.UsageError("no tests were collected: check the path or the -k/-m expression")


_REPORT: list[str] = []


@pytest.fixture(scope="session", autouse=True)
def prefetcher(request, tmp_path_factory):
    """The background jobs that the collected tests need, started now (one at a time)."""
    ids = [item.nodeid for item in request.session.items]
    prefetch = Prefetcher(tmp_path_factory.mktemp("prefetch"))
    prefetch.start([job for job, wanted in WANTED_BY if any(i.startswith(wanted) for i in ids)])
    yield prefetch
    prefetch.close()
    _REPORT.extend(prefetch.report())


def pytest_terminal_summary(terminalreporter):
    """When the background jobs ran: where the second core was busy, and what the tests waited for."""
    if _LEAKS:
        terminalreporter.write_sep("-", "path processes left running")
        for line in _LEAKS:
            terminalreporter.write_line(line)
    if _REPORT:
        terminalreporter.write_sep("-", "background jobs")
        for line in _REPORT:
            terminalreporter.write_line(line)


@pytest.fixture(scope="session")
def connector_zoo(prefetcher, tmp_path_factory):
    """The connector zoo (tests/support/zoo_connectors.py; `zoo` is the algorithm zoo): tiny real PPO
    checkpoints, one per connector piece, space and module kind, trained once per session in the background;
    shared by the connector matrix and the doctor's LSTM tests."""
    from tests.support.jobs import CONNECTORS

    proc, out = prefetcher.wait(CONNECTORS, tmp_path_factory.mktemp("zoo"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


@pytest.fixture
def run_dir(tmp_path, monkeypatch):
    """Run each CLI invocation from an empty directory (logs land under it)."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def apps():
    """Apps made by a test; their engines are stopped even when the test fails."""
    made = []
    yield made
    for app in made:
        if app.engine is not None:
            app.engine.stop()
            app.engine.wait(30)
            app.engine.close()


def _path_processes() -> dict[int, str]:
    """This process's path processes (tui_eval/isolation/child.py: its children, or the children of its zygote),
    pid -> command line."""
    from tui_eval.isolation import forked

    found = {}
    me = str(os.getpid())
    zygote = forked._zygote
    zygote_pid = str(zygote.process.pid) if zygote is not None else None
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                parent = fh.read().rsplit(")", 1)[1].split()[1]
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                command = fh.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if (parent == me and "tui_eval.isolation.child" in command) or parent == zygote_pid:
            found[int(entry)] = command
    return found


_LEAKS: list[str] = []


@pytest.fixture(autouse=True)
def no_path_process_left(request):
    """A test leaves no path process running but the one a run keeps waiting for the next plan: a leaked one
    holds a core's worth of imports and memory for the rest of the session."""
    yield
    from tui_eval.isolation import process_path

    waiting = {i.process.pid for i in process_path._warm}
    left = {pid: c for pid, c in _path_processes().items() if pid not in waiting}
    if left:
        _LEAKS.append(f"{request.node.nodeid}: {len(left)} path process(es) left running")
        for pid in left:
            try:
                os.kill(pid, 9)
            except OSError:
                pass

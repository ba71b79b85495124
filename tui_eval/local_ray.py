"""The local Ray that `Algorithm.evaluate()` needs (RLlib builds its EnvRunner groups with `ray.put`, so
Ray starts even for a local runner). Started by tui-eval, it exposes nothing:

- loopback only: with `RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0` Ray takes 127.0.0.1 as the node address,
  and its GCS, raylet, workers and agents then bind to loopback (ray 2.60 binds every interface for
  any other node address, and `ray.init(_node_ip_address="127.0.0.1")` is turned back into the host's
  address); checked by a test that reads /proc/net/tcp{,6};
- token authentication (ray 2.60's `RAY_AUTH_MODE=token`) with a random token per run;
- its session files in a temporary folder removed when the run ends.
Both variables are read by Ray when it is imported or started, so they are set before either, and
inherited by Ray's own processes. A user who set them keeps their values.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import os
import secrets
import shutil
import signal
import sys
import tempfile
import threading
from collections.abc import Iterator

from tui_eval.cpu_pools import limit_native_pools

_temp_dir: str | None = None
TEMP_PREFIX = "tui-eval-ray-"  # + the owning process id: a folder whose process is gone can go


def prepare_environment(joining_cluster: bool = False) -> None:
    """Set Ray's loopback and auth variables; call before `ray` is imported (the CLI does, first thing).
    A run that joins an existing cluster (`--ray-address`) takes that cluster's settings instead. The native thread
    pools are bounded here too, before torch or NumPy loads (tui_eval/cpu_pools.py)."""
    limit_native_pools()
    if joining_cluster:
        return
    os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    # The driver reads its auth mode when ray is imported, Ray's servers when they start: turned on
    # after the import, the two would disagree and the driver could not connect.
    if "RAY_AUTH_MODE" not in os.environ and "ray" not in sys.modules:
        os.environ["RAY_AUTH_MODE"] = "token"
        os.environ.setdefault("RAY_AUTH_TOKEN", secrets.token_hex(32))
    os.environ.setdefault("RAY_DEDUP_LOGS", "0")


def ensure_ray(num_cpus: int | None = None) -> None:
    """Start the local Ray once per process (loopback, token, a temporary session folder); `num_cpus`
    logical CPUs (default the cores) so that every actor of a run is placed even when they outnumber them."""
    global _temp_dir
    prepare_environment()
    import ray
    from ray._private import ray_constants

    if ray.is_initialized():
        if _temp_dir is None or ray.cluster_resources().get("CPU", 0) >= (num_cpus or 0):
            return
        # Ours, started earlier in this process with too few CPUs for the actors now asked for (a Python
        # session or a test running several runs): they would wait for a CPU for ever. Start it again.
        stop_ray()
    # Read at call time by ray's node-address lookup: the same effect as the variable, for a process
    # that imported ray before prepare_environment ran (a Python session, a test).
    ray_constants.ENABLE_RAY_CLUSTER = os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"].lower() in ("1", "true")
    _sweep_left_behind()
    _temp_dir = tempfile.mkdtemp(prefix=f"{TEMP_PREFIX}{os.getpid()}-")
    with _hangup_ignored_by_children():
        # no idle workers started with the driver: the evaluate path's EnvRunner runs in this process, and a run
        # with actors starts its workers when it asks for them (prestarted, each imports Ray: a core-second)
        ray.init(include_dashboard=False, log_to_driver=False, configure_logging=False,
                 num_cpus=max(num_cpus or 0, os.cpu_count() or 2), ignore_reinit_error=True, _temp_dir=_temp_dir,
                 runtime_env={"env_vars": {"PYTHONPATH": _worker_pythonpath()}},
                 _system_config={"prestart_worker_first_driver": False})
    atexit.register(stop_ray)


@contextlib.contextmanager
def _hangup_ignored_by_children() -> Iterator[None]:
    """Ray's processes (GCS, raylet, and the workers the raylet starts) share the terminal's process group:
    when the terminal goes (an SSH drop), SIGHUP would end them, and the run with them, though the run
    itself carries on without a terminal. An ignored signal stays ignored across fork and exec: ignore
    SIGHUP while Ray starts them, then put this process's own handling back."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGHUP, previous)


def _worker_pythonpath() -> str:
    """Ray's workers import the tui_eval this process runs (a checkout, not another install) and the user's
    modules as this process finds them (the current directory, folders of `--import` files): the
    workers of a local Ray run this same Python, so this process's search path is theirs."""
    import tui_eval

    package_root = os.path.dirname(os.path.dirname(os.path.abspath(tui_eval.__file__)))
    entries = [package_root, os.getcwd(), *(p for p in sys.path if p and os.path.isdir(p))]
    return os.pathsep.join(dict.fromkeys(e for e in entries if e))


def local_address() -> str | None:
    """The address of the local Ray this process started (None without one, or where it joined a cluster)."""
    if _temp_dir is None or not ray_running():
        return None
    import ray

    return ray.get_runtime_context().gcs_address


def join_local_ray(address: str) -> None:
    """Connect this process to the local Ray of the process that started it (`local_address` there): no Ray of its
    own to start (a GCS, a raylet and two agents, each importing Ray: a few core-seconds on 2 cores). The same
    token and loopback settings came with the environment; it ends with this process."""
    prepare_environment()
    import ray

    ray.init(address=address, log_to_driver=False, configure_logging=False)


def ray_running() -> bool:
    """Whether Ray is up in this process (without importing it)."""
    ray = sys.modules.get("ray")
    return ray is not None and ray.is_initialized()


def stop_ray() -> None:
    """Shut the local Ray down and remove its session files (safe to call more than once)."""
    global _temp_dir
    try:
        import ray

        if ray.is_initialized():
            _keep_tune_registrations()
            # Free unreachable objects that hold Ray references (a closed run's runners and results) while
            # Ray is up: freed after shutdown, from whichever thread collects them, they end the process.
            gc.collect()
            ray.shutdown()
    finally:
        if _temp_dir is not None:
            shutil.rmtree(_temp_dir, ignore_errors=True)
            _temp_dir = None


def _keep_tune_registrations() -> None:
    """Once Ray runs, Tune's registry (`tune.register_env`) keeps its entries in Ray's GCS only: they would
    go with this Ray. Put them back in the registry's pending list, as before ray.init, so that a Ray
    started later in this process (a test session, a notebook) still finds the user's envs."""
    registry_module = sys.modules.get("ray.tune.registry")
    if registry_module is None:
        return
    from ray.experimental.internal_kv import _internal_kv_get

    registry = registry_module._global_registry
    for category, key in list(registry._registered):
        value = _internal_kv_get(registry_module._make_key(registry.prefix, category, key))
        if value is not None:
            registry._to_flush[(category, key)] = value


def _sweep_left_behind() -> None:
    """Remove session folders of runs whose process died without cleaning up (SIGKILL, OOM)."""
    root = tempfile.gettempdir()
    for name in os.listdir(root):
        if not name.startswith(TEMP_PREFIX):
            continue
        pid = name[len(TEMP_PREFIX):].split("-", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(os.path.join(root, name), ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True

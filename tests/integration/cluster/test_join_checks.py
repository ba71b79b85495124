"""`--ray-address HOST:PORT` either joins or says in one line, in seconds, why it cannot: ray 2.60's own
`ray.init(address=...)` retries for minutes instead (tui_eval.cluster.join_check says where).

One loopback-only head serves the module (`ray.cluster_utils.Cluster`, as the fault tests build theirs).
The drivers are real `tui-eval` processes; the `timeout=` on each fails a test that spins.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from tests.support.common import CARTPOLE, ROOT
from tui_eval.errors import BadInput

SPIN_S = 120  # a join that works takes ~7 s here, one that fails ~4 s (more on a busy machine); ray.init
#                alone retried for ~13 min


@pytest.fixture(scope="module")
def head():
    from ray.cluster_utils import Cluster

    from tui_eval.local_ray import stop_ray

    stop_ray()  # a local Ray of an earlier module in this process
    previous = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), previous]))  # the node's workers
    made = Cluster(initialize_head=True, connect=False, head_node_args={"num_cpus": 2})
    yield made
    made.shutdown()
    if previous is None:
        os.environ.pop("PYTHONPATH", None)
    else:
        os.environ["PYTHONPATH"] = previous


def _join(address: str, *, without: tuple[str, ...] = (), inside: tuple[str, ...] = ()):
    """`tui-eval CKPT --workers 2 --ray-address ADDRESS` from a shell lacking the variables `without`,
    run under the command prefix `inside`."""
    env = {k: v for k, v in os.environ.items() if k not in without}
    env["PYTHONPATH"] = str(ROOT)
    command = [*inside, sys.executable, "-m", "tui_eval.cli", str(CARTPOLE), "--headless", "--paths", "connectors",
               "--seeds", "0:2", "--num-envs", "1", "--workers", "2", "--ray-address", address]
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=SPIN_S)


def _one_line(done, says: str) -> None:
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2, done.stderr[-2000:]
    assert len(lines) == 1 and says in lines[0], done.stderr[-2000:]


def test_a_loopback_address_is_dialled_as_given(head):
    # A user's shell has no RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER (tui-eval sets it only for its own Ray): Ray
    # then swapped 127.0.0.1 for this machine's network address, where a loopback-only GCS is not.
    assert head.address.startswith("127.0.0.1:")
    done = _join(head.address, without=("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER",))
    assert done.returncode == 0, done.stderr[-2000:]
    assert "connectors  2 " in done.stdout, done.stdout


def _own_pid_namespace() -> tuple[str, ...]:
    prefix = ("unshare", "--pid", "--fork", "--mount-proc")
    if shutil.which("unshare") is None or subprocess.run([*prefix, "true"], capture_output=True).returncode != 0:
        pytest.skip("needs unshare --pid (root or user namespaces)")
    return prefix


@pytest.mark.parametrize("case", ["no node here", "no token"])
def test_a_join_that_cannot_work_says_why_in_one_line(head, case):
    if case == "no node here":
        # The driver's own process namespace hides the head's raylet from it, as on a machine that is not a
        # node of the cluster (an SSH-forwarded port): Ray would wait 60 s for a raylet, then fail.
        done = _join(head.address, inside=_own_pid_namespace())
        _one_line(done, f"the Ray cluster at {head.address} has no node on this machine (its nodes: 127.0.0.1)")
    else:
        done = _join(head.address, without=("RAY_AUTH_MODE", "RAY_AUTH_TOKEN"))
        _one_line(done, f"the Ray cluster at {head.address} refused this run's token")


def test_a_port_that_is_not_the_gcs_is_named_so(head):
    from tui_eval.cluster.join_check import check_joinable

    raylet = f"127.0.0.1:{head.head_node.node_manager_port}"
    with pytest.raises(BadInput, match=f"no Ray GCS answers at {raylet} \\(it answers, but not as Ray's GCS\\)"):
        check_joinable(raylet)

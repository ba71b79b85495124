"""`--ray-address HOST:PORT` either joins or says in one line, in seconds, why it cannot: ray 2.60's own
`ray.init(address=...)` retries for minutes instead (tui_eval.cluster.join_check says where).

The drivers dial the head of the folder's loopback-only cluster (conftest.py), shared with the fault tests.
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


def test_a_loopback_address_is_dialled_as_given(cluster):
    # A user's shell has no RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER (tui-eval sets it only for its own Ray): Ray
    # then swapped 127.0.0.1 for this machine's network address, where a loopback-only GCS is not.
    assert cluster.address.startswith("127.0.0.1:")
    done = _join(cluster.address, without=("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER",))
    assert done.returncode == 0, done.stderr[-2000:]
    assert "connectors  2 " in done.stdout, done.stdout


def _own_pid_namespace() -> tuple[str, ...]:
    prefix = ("unshare", "--pid", "--fork", "--mount-proc")
    if shutil.which("unshare") is None or subprocess.run([*prefix, "true"], capture_output=True).returncode != 0:
        pytest.skip("needs unshare --pid (root or user namespaces)")
    return prefix


@pytest.mark.parametrize("case", ["no node here", "no token"])
def test_a_join_that_cannot_work_says_why_in_one_line(cluster, case):
    if case == "no node here":
        # The driver's own process namespace hides the head's raylet from it, as on a machine that is not a
        # node of the cluster (an SSH-forwarded port): Ray would wait 60 s for a raylet, then fail.
        done = _join(cluster.address, inside=_own_pid_namespace())
        _one_line(done, f"the Ray cluster at {cluster.address} has no node on this machine (its nodes: 127.0.0.1)")
    else:
        done = _join(cluster.address, without=("RAY_AUTH_MODE", "RAY_AUTH_TOKEN"))
        _one_line(done, f"the Ray cluster at {cluster.address} refused this run's token")


def test_a_port_that_is_not_the_gcs_is_named_so(cluster):
    from tui_eval.cluster.join_check import check_joinable

    raylet = f"127.0.0.1:{cluster.head_node.node_manager_port}"
    with pytest.raises(BadInput, match=f"no Ray GCS answers at {raylet} \\(it answers, but not as Ray's GCS\\)"):
        check_joinable(raylet)

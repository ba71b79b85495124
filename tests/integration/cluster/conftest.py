"""A real multi-node Ray cluster on this machine (loopback only), as Ray's own fault-tolerance tests build one
(`ray.cluster_utils.Cluster`): a head with no CPU and two worker nodes of NODE_CPUS each. Started once for
the folder (it costs tens of seconds on a busy machine) and shared by the fault tests, which leave it as they
found it (a node removed is replaced, every actor ended), and the join checks, which dial its head."""

from __future__ import annotations

import os

import pytest

from tests.support.cluster_envs import NODE_CPUS
from tests.support.common import ROOT


@pytest.fixture(scope="package")
def cluster():
    import ray
    from ray.cluster_utils import Cluster

    from tui_eval.local_ray import stop_ray

    stop_ray()  # a local Ray of an earlier module in this process
    # the nodes' workers import this checkout and the test envs, as a user's nodes import theirs
    previous = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), previous]))
    made = Cluster(initialize_head=True, connect=False, head_node_args={"num_cpus": 0})
    for _ in range(2):
        made.add_node(num_cpus=NODE_CPUS)
    made.wait_for_nodes()
    ray.init(address=made.address, log_to_driver=False, configure_logging=False)
    yield made
    stop_ray()  # keeps Tune's registrations for the modules after this one
    made.shutdown()
    if previous is None:
        os.environ.pop("PYTHONPATH", None)
    else:
        os.environ["PYTHONPATH"] = previous

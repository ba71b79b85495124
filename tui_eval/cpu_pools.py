"""The native thread pools of a process that runs paths: OpenMP, OpenBLAS and MKL start one spinning thread per
core by default, in every process. Two paths (or a path and the app) each spinning on every core slow each
other several-fold: on 2 cores a LunarLander path in the run's process ran at 40 env steps/s next to a path in
its own process, 1,900 with MKL limited (torch.set_num_threads does not bound MKL's pool here). Read by the
libraries when they load, so set before torch or NumPy is imported; a user's own value wins."""

from __future__ import annotations

import os
from collections.abc import MutableMapping

POOL_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def limit_native_pools(env: MutableMapping[str, str] = os.environ) -> None:
    """Each pool at half the cores (a run has two paths by default), unless `env` already says."""
    share = str(max(1, (os.cpu_count() or 2) // 2))
    for variable in POOL_VARIABLES:
        env.setdefault(variable, share)

"""The check's process sets torch's deterministic flag as RLlib asks (`set_torch_seed` calls
`torch.use_deterministic_algorithms(True)` on a torch without CUDA), without importing torch._inductor to set
inductor's value (torch's own call imports it: 1.8 s of a check). In a fresh interpreter: the call inside
`deterministic_flag_alone`; then inductor imported later (a user's torch.compile) is deterministic too."""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = """
import json, sys
import torch
from tui_eval.isolation.check_serve import deterministic_flag_alone
with deterministic_flag_alone():
    torch.use_deterministic_algorithms(True)  # as RLlib's set_torch_seed calls it
seen = {"inductor_imported": "torch._inductor" in sys.modules, "flag": torch.are_deterministic_algorithms_enabled(),
        "torch's own again": torch.use_deterministic_algorithms.__module__ == "torch"}
import torch._inductor.config as config
seen["inductor_deterministic"] = config.deterministic
print(json.dumps(seen))
"""


def test_the_check_sets_the_flag_without_importing_inductor():
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120,
                          env={"CUDA_VISIBLE_DEVICES": "", "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {
        "inductor_imported": False, "flag": True, "torch's own again": True, "inductor_deterministic": True}

"""The evaluate path builds RLlib's Algorithm without importing torch's compiler (tui_eval/integrations/rllib/
compiler_imports.py), in a fresh process as a run's or a check's: RLlib's seeding still sets torch's deterministic
flag, the restored policy still acts, and a compile afterwards still works and sees the flag."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

SCRIPT = r"""
import json, sys
import torch
from tui_eval.config.spec import RunSpec
from tui_eval.kinds import load_kind

kind = load_kind(RunSpec(checkpoint=sys.argv[1], num_envs=2))
path = kind.build_path("evaluate", False)
records = []

class Feed:
    cancelled = False
    heartbeat = None
    seeds = [(7, 0)]

    def take(self):
        return self.seeds.pop() if self.seeds else None

path.run(Feed(), records.append)
built = {"compiler": "torch._dynamo" in sys.modules or "torch._inductor" in sys.modules,
         "deterministic": torch.are_deterministic_algorithms_enabled(), "lengths": [r.length for r in records]}
compiled = torch.compile(lambda x: x * 2, backend="eager")
built["compiled"] = compiled(torch.ones(2)).tolist()
import torch._inductor.config as inductor_config

built["inductor_deterministic"] = inductor_config.deterministic
path.close()
print(json.dumps(built))
"""


def test_the_evaluate_path_builds_without_the_compiler_and_keeps_rllibs_seeding():
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(ROOT / "assets" / "ppo_cartpole")], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    built = json.loads(proc.stdout.strip().splitlines()[-1])
    assert built["compiler"] is False  # before: torch._dynamo and torch._inductor, ~1 s of imports
    assert built["deterministic"] is True  # RLlib's seeding asked for it (the evaluation config's seed)
    assert built["lengths"] and built["lengths"][0] > 0
    assert built["compiled"] == [2.0, 2.0]
    assert built["inductor_deterministic"] is True  # the flag reaches inductor's config when it loads

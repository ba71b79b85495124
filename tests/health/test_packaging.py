"""A normal (non-editable) install ships the demo checkpoints: they are in the wheel."""

from __future__ import annotations

import subprocess
import sys
import zipfile

from tests.support.common import ROOT
from tui_eval.demos import DEMOS


def test_the_wheel_holds_every_demo_checkpoint(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-q", "-w", str(tmp_path)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (wheel,) = tmp_path.glob("tui_eval-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for name, relative in DEMOS.items():
        inside = f"tui_eval/demo_checkpoints/{relative}"
        if relative.endswith(".pt"):
            assert inside in names, name
        else:  # an RLlib checkpoint directory: its marker, config and module weights
            for part in ("rllib_checkpoint.json", "class_and_ctor_args.pkl",
                         "learner_group/learner/rl_module/default_policy/module_state.pkl"):
                assert f"{inside}/{part}" in names, (name, part)
    assert "tui_eval/demo_checkpoints/rsl_pointgoal/exported/policy.pt" in names
    assert "tui_eval/ui/app.tcss" in names

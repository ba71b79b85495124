"""The bundled PandaReach demo (rsl_rl PPO on panda-gym's PandaReach-v3, PyBullet), as a user runs it."""

from __future__ import annotations

import json
import subprocess
import sys

import yaml

from tests.support.cli_jobs import PANDAREACH, result_of
from tests.support.common import ROOT
from tui_eval.demos import demos
from tui_eval.integrations.rsl_rl.kind import HELD_OUT_START


def test_short_run_reports_success_and_invalid_with_intervals(prefetcher, tmp_path):
    # demo pandareach --headless --episodes 16 --num-envs 16 --json summary.json (a background job)
    done, folder = result_of(prefetcher, PANDAREACH, tmp_path / "run")
    out = folder / "summary.json"
    assert done.returncode == 0, done.stderr[-2000:]
    assert "argv[" not in done.stdout and "pybullet build time" not in done.stdout  # PyBullet's prints kept off
    summary = json.loads(out.read_text())
    assert summary["env"].endswith("PandaReach-v3")
    assert summary["seeds"][0] >= HELD_OUT_START  # training seeded from 42 upwards
    for name in ("runner", "jit"):
        path = summary["paths"][name]
        assert path["episodes"] == 16 and path["invalid"] == 0
        low, high = path["success_ci95"]
        assert 0.0 <= low <= path["success_rate"] <= high <= 1.0
        assert path["success_rate"] >= 0.8  # the demo policy reaches the target
        assert path["invalid_ci95"][0] == 0.0 and 0.0 < path["invalid_ci95"][1] < 0.3
    assert summary["comparison"]["paired"] == 16 and summary["comparison"]["exact"] is True  # runner = jit
    for header in ("success", "invalid"):
        assert header in done.stdout


def test_demo_bundle_is_isaac_lab_layout_with_differing_obs_groups():
    folder = demos()["pandareach"].checkpoint.parent
    assert (folder / "exported" / "policy.pt").is_file()
    cfg = yaml.safe_load((folder / "params" / "agent.yaml").read_text())
    assert cfg["obs_groups"]["actor"] != cfg["obs_groups"]["critic"]  # a privileged critic


def test_without_the_robotics_extra_one_line_says_what_to_install():
    """panda-gym is installed here; the missing package is simulated by blocking its import (sys.modules)."""
    code = ("import sys; sys.modules['panda_gym'] = None\n"
            "from tui_eval.cli import entry; sys.argv = ['tui-eval', 'demo', 'pandareach', '--headless']; entry()")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "pip install -e '.[robotics]'" in lines[0] and "panda_gym" in lines[0]

"""An mjlab run's runner and its deployed `<run>.onnx` (mjlab's exporter, normalizer inside) are the same policy:
onnxruntime rounds its floats its own way, the cartpole's 120-step episodes amplify that until runner and onnx part,
and the verdict says SAME POLICY with a statistical returns verdict, never `DIFFER (exact)`."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("mjlab", reason="the mjlab extra is not installed: pip install -e '.[mjlab]'")

from tests.support.common import cli  # noqa: E402

TASK = "Mjlab-Cartpole-Balance"
LONG_ENOUGH = json.dumps({"episode_length_s": 6.0})  # 120 steps: runner and onnx part (20 steps do not)


def test_runner_and_its_onnx_export_part_yet_read_same_policy_never_differ(mjlab_run_folder, tmp_path):
    out = tmp_path / "summary.json"
    proc = cli(mjlab_run_folder, "--env", TASK, "--env-config", LONG_ENOUGH, "--headless", "--episodes", "8",
               "--num-envs", "8", "--json", out, "--log", tmp_path / "run.sqlite", env={"CUDA_VISIBLE_DEVICES": ""},
               timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    comparison = json.loads(out.read_text())["comparison"]
    assert (comparison["a"], comparison["b"]) == ("runner", "onnx")
    assert comparison["differing"] > 0 and comparison["exact"] is False and comparison["verdict"] != "differ"
    assert comparison["same_policy"] is True
    agreement = comparison["agreement"]
    assert agreement["within"] and agreement["max_abs"] <= 1e-5 and agreement["steps"] == 240  # 120 steps both ways
    assert agreement["dtypes"] == {"runner": "float32", "onnx": "float32"}
    assert comparison["noise_floor"]["repeated"] == comparison["noise_floor"]["seeds"] >= 1  # CPU: it repeats
    verdict = next(line for line in proc.stdout.splitlines() if line.startswith("verdict:"))
    assert verdict.startswith("verdict: SAME POLICY") and "DIFFER" not in proc.stdout

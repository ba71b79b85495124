"""An mjlab run's runner and its deployed `<run>.onnx` (mjlab's exporter, normalizer inside) are the same policy:
onnxruntime rounds its floats its own way, the cartpole's 120-step episodes amplify that until runner and onnx part,
and the verdict says SAME POLICY with a statistical returns verdict, never `DIFFER (exact)`."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("mjlab", reason="the mjlab extra is not installed: pip install -e '.[mjlab]'")

from tests.support.cli_jobs import result_of  # noqa: E402
from tests.support.mjlab_jobs import SAME_POLICY  # noqa: E402


def test_runner_and_its_onnx_export_part_yet_read_same_policy_never_differ(mjlab_run_folder, prefetcher, tmp_path):
    # 8 seeds of 120 steps (runner and onnx part; 20 steps do not): a background job (tests/support/mjlab_jobs.py)
    proc, out = result_of(prefetcher, SAME_POLICY, tmp_path / "job")
    assert proc.returncode == 0, proc.stderr[-3000:]
    comparison = json.loads((out / "summary.json").read_text())["comparison"]
    assert (comparison["a"], comparison["b"]) == ("runner", "onnx")
    assert comparison["differing"] > 0 and comparison["exact"] is False and comparison["verdict"] != "differ"
    assert comparison["same_policy"] is True
    agreement = comparison["agreement"]
    assert agreement["within"] and agreement["max_abs"] <= 1e-5 and agreement["steps"] == 240  # 120 steps both ways
    assert agreement["dtypes"] == {"runner": "float32", "onnx": "float32"}
    assert comparison["noise_floor"]["repeated"] == comparison["noise_floor"]["seeds"] >= 1  # CPU: it repeats
    verdict = next(line for line in proc.stdout.splitlines() if line.startswith("verdict:"))
    assert verdict.startswith("verdict: SAME POLICY") and "DIFFER" not in proc.stdout

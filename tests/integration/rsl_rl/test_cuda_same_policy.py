"""On a GPU: the runner's policy on CUDA against the ONNX export on onnxruntime's CPU, as deployed. TF32 and cuDNN
kernels round otherwise than the CPU, so episodes may part; the verdict must never be `DIFFER (exact)` for a faithful
export. Runs where CUDA is present, skipped with the reason elsewhere."""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device here: the GPU checks need one")

from tests.support.common import ROOT, cli  # noqa: E402

POINTGOAL = ROOT / "assets" / "rsl_pointgoal" / "model_39.pt"


@pytest.mark.parametrize("worlds", [64, 4096])
def test_the_runner_on_cuda_and_its_onnx_export_on_the_cpu_are_never_differ_exact(tmp_path, worlds):
    out = tmp_path / "summary.json"
    proc = cli(POINTGOAL, "--paths", "runner,onnx", "--device", "cuda", "--num-envs", str(worlds), "--headless",
               "--episodes", str(2 * worlds), "--json", out, "--log", tmp_path / "run.sqlite", timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    comparison = json.loads(out.read_text())["comparison"]
    assert not (comparison["exact"] and comparison["verdict"] == "differ"), comparison.get("exact_reason")
    assert comparison["differing"] == 0 or comparison["same_policy"] is True
    assert "policies on cuda" in proc.stderr and "TF32 matmul" in proc.stderr

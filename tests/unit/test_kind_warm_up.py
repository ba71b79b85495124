"""Each kind says what its paths import first, for the checkpoints it opens (the run starts that import in a path's
process while it plans); no kind claims another's checkpoint."""

from __future__ import annotations

from pathlib import Path

from tui_eval.demos import demo_checkpoint
from tui_eval.kinds.registry import plugins


def _claims(checkpoint: Path) -> dict[str, tuple[str, ...]]:
    return {p.name: w for p in plugins() if (w := p.warm_imports(checkpoint)) is not None}


def test_each_demo_is_warmed_by_its_own_kind_only():
    rllib = _claims(demo_checkpoint("rllib"))
    assert list(rllib) == ["rllib"] and "ray.rllib" in rllib["rllib"]
    rsl = _claims(demo_checkpoint("rsl_rl"))
    assert list(rsl) == ["rsl_rl"] and "rsl_rl.runners" in rsl["rsl_rl"] and "mjlab.tasks" not in rsl["rsl_rl"]


def test_an_mjlab_run_folder_warms_mjlab_too(tmp_path):
    (tmp_path / "params").mkdir()
    (tmp_path / "params" / "env.yaml").write_text("scene: !!python/object:mjlab.scene.SceneCfg {}\n")
    (tmp_path / "model_3.pt").write_bytes(b"")
    assert _claims(tmp_path / "model_3.pt")["rsl_rl"][-1] == "mjlab.tasks"


def test_a_file_no_kind_opens_is_claimed_by_none(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    assert _claims(tmp_path / "notes.txt") == {}

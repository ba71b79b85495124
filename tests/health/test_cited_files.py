"""A file the code or the docs cite exists: every `tui_eval/...`, `tests/...`, `bench/...` or `docs/...` path named
anywhere, and every bare `name.py` a module of tui-eval names in its comments and docstrings (besides the scripts of
other projects it names on purpose, and the user files of its examples)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: files of other projects and of the user that our text names on purpose
ELSEWHERE = {"enjoy.py", "play.py", "train.py", "my_loop.py", "my_project.py", "my_envs.py", "my_sim.py",
             "mjlab_env.py", "isaaclab_env.py", "isaaclab_deploy.py", "test_export.py",
             "policy_inference_after_training_w_connector.py", "multi_agent_cartpole.py", "frame_stacking.py"}
OURS = re.compile(r"(?<![\w/.\-])((?:tui_eval|tests|bench|docs)/[\w/\-]+\.(?:py|md))")
BARE = re.compile(r"(?<![\w/.\-])([a-z_][a-z0-9_]*\.py)\b")


def _texts() -> list[Path]:
    folders = [ROOT / name for name in ("tui_eval", "tests", "bench", "docs")]
    return [ROOT / "README.md"] + [p for f in folders for p in f.rglob("*") if p.suffix in (".py", ".md")
                                   and "demo_checkpoints" not in p.parts and "__pycache__" not in p.parts]


def test_every_cited_path_of_ours_exists():
    missing = {f"{p.relative_to(ROOT)}: {cited}" for p in _texts() for cited in OURS.findall(p.read_text())
               if not (ROOT / cited).exists()}
    assert missing == set(), sorted(missing)


def test_every_module_named_in_tui_evals_own_text_exists():
    modules = {p.name for folder in ("tui_eval", "tests", "bench", "docs") for p in (ROOT / folder).rglob("*.py")}
    missing = {f"{p.relative_to(ROOT)}: {name}" for p in (ROOT / "tui_eval").rglob("*.py")
               if "demo_checkpoints" not in p.parts for name in BARE.findall(p.read_text())
               if name not in modules and name not in ELSEWHERE}
    assert missing == set(), sorted(missing)


def test_the_scan_finds_a_stale_citation(tmp_path):
    gone, bare = "tui_eval/" + "engine_proof.py", "env_" + "seeding.py"  # split: this file is scanned too
    assert OURS.findall(f"see `{gone}` and {bare}") == [gone] and BARE.findall(f"see `{gone}` and {bare}") == [bare]

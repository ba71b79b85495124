"""A normal (non-editable) install ships the demo checkpoints and the app's stylesheet, and registers every
checkpoint kind: they are in the wheel, whatever kind a demo is."""

from __future__ import annotations

import subprocess
import sys
import zipfile

from tests.support.common import ROOT
from tui_eval.demos import demos as declared_demos


def test_the_wheel_holds_every_demo_checkpoint_and_registers_every_kind(tmp_path):
    # built with this environment's setuptools (pyproject's build backend): an isolated build would first install
    # setuptools into a fresh environment, most of the build's time, and change nothing of what the wheel holds
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "--no-build-isolation", "-q",
                           "-w", str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (wheel,) = tmp_path.glob("tui_eval-*.whl")
    archive = zipfile.ZipFile(wheel)
    names = set(archive.namelist())
    demos = ROOT / "tui_eval" / "demo_checkpoints"
    shipped = {p.relative_to(ROOT).as_posix() for p in demos.rglob("*") if p.is_file() and "__pycache__" not in p.parts}
    assert shipped and shipped <= names, sorted(shipped - names)[:5]
    # every demo a kind declares names something the wheel holds (a shared one, or one in its package)
    listed = declared_demos()
    assert {"rllib", "rsl_rl", "sb3"} <= set(listed)
    for name, demo in listed.items():
        inside = demo.checkpoint.relative_to(ROOT).as_posix()
        assert any(n == inside or n.startswith(inside + "/") for n in names), name
    assert "tui_eval/ui/app.tcss" in names
    (entry_points,) = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
    text = archive.read(entry_points).decode()
    from tui_eval.kinds.registry import GROUP, plugins

    assert f"[{GROUP}]" in text and all(f"{p.name} = " in text for p in plugins())

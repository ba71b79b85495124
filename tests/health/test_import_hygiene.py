"""The core works without the TUI: nothing outside tui_eval/ui imports Textual (as harlequin checks)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORE = ["tui_eval.engine", "tui_eval.session", "tui_eval.headless", "tui_eval.stats", "tui_eval.kinds",
        "tui_eval.paths", "tui_eval.cli", "tui_eval.summary", "tui_eval.store", "tui_eval.runs", "tui_eval.feed",
        "tui_eval.ui.inbox", "tui_eval.ui.source", "tui_eval.ui.charts", "tui_eval.ui.export"]


def test_core_imports_without_textual():
    code = ("import sys\n" + "".join(f"import {m}\n" for m in CORE)
            + "bad = sorted(m for m in sys.modules if m == 'textual' or m.startswith('textual.'))\n"
            + "assert not bad, bad[:5]\n")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]


def test_no_textual_import_outside_ui():
    pattern = re.compile(r"^\s*(from|import)\s+textual\b", re.M)
    offenders = [str(p.relative_to(ROOT)) for p in (ROOT / "tui_eval").rglob("*.py")
                 if "ui" not in p.relative_to(ROOT / "tui_eval").parts[:1] and pattern.search(p.read_text())]
    assert offenders == []
    plain_ui = ["inbox.py", "source.py", "charts.py", "export.py"]
    assert [n for n in plain_ui if pattern.search((ROOT / "tui_eval" / "ui" / n).read_text())] == []

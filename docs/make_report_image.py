"""Writes docs/assets/report.png: `tui-eval report` of a headless run of the bundled CartPole demo (its defaults:
RLlib's evaluate() samples, the own loop takes the mode). The README shows it.

    python docs/make_report_image.py [OUT.png] [--episodes N]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "assets" / "report.png"
EPISODES = 150


def make(out: Path, episodes: int) -> Path:
    from tui_eval.report import write_report

    log = Path(tempfile.mkdtemp(prefix="tui-eval-report-image-")) / "cartpole-demo.sqlite"
    run = subprocess.run([sys.executable, "-m", "tui_eval.cli", "demo", "--headless", "--episodes", str(episodes),
                          "--log", str(log)], cwd=log.parent, capture_output=True, text=True, timeout=900)
    if run.returncode not in (0, 3):  # 3: the paths differ (with --fail-on-differ only; kept for safety)
        raise SystemExit(f"the demo run failed ({run.returncode}):\n{run.stderr[-3000:]}")
    out.parent.mkdir(parents=True, exist_ok=True)
    return write_report(log, out)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", type=Path, default=OUT)
    parser.add_argument("--episodes", type=int, default=EPISODES, help=f"per path (default {EPISODES})")
    args = parser.parse_args()
    print(make(args.out, args.episodes))

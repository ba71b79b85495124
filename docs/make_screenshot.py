"""Writes docs/assets/app.svg: the live app at 120×36 on the bundled CartPole demo once its 64 episodes per path
ran (Textual's own screenshot, an SVG). The README shows it.

    python docs/make_screenshot.py [OUT.svg]
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "assets" / "app.svg"
EPISODES = 64


async def screenshot(out: Path) -> Path:
    from tui_eval.cli import build_parser
    from tui_eval.commands.run import spec_from_args
    from tui_eval.demos import demo_checkpoint
    from tui_eval.local_ray import prepare_environment
    from tui_eval.session import plan_run
    from tui_eval.ui.app import EvalApp

    prepare_environment()
    log = Path(tempfile.mkdtemp(prefix="tui-eval-screenshot-")) / "run.sqlite"
    argv = [str(demo_checkpoint("rllib")), "--episodes", str(EPISODES), "--log", str(log)]
    app = EvalApp(plan_run(spec_from_args(build_parser().parse_args(argv))))
    async with app.run_test(size=(120, 36)) as pilot:
        deadline = time.monotonic() + 300
        while not (app.summaries and all(s.get("episodes") == EPISODES for s in app.summaries.values())):
            if time.monotonic() > deadline:
                raise TimeoutError("the demo did not finish within 300 s")
            await pilot.pause(0.2)
        await pilot.pause(1.0)  # the last refresh of the charts and the verdict
        out.parent.mkdir(parents=True, exist_ok=True)
        app.save_screenshot(filename=out.name, path=str(out.parent))
        await pilot.press("q")
    if app.engine is not None:  # as the CLI after its app: the paths (and their processes) end, the log closes
        app.engine.stop()
        app.engine.wait(60)
        app.engine.close()
    return out


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    print(asyncio.run(screenshot(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT)))

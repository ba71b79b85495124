"""The app's frame keys: `v` opens the frame panel, `c` records a clip of the selected episode's seed
(`tui-eval record` in a subprocess, with the run's own options, so the app's GIL stays free)."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from .frame_renderers import FrameOptions
from .frames_screen import FramesScreen
from .widgets import EpisodeLog, StatusLine


def record_argv(spec: dict[str, Any], seed: int, paths: list[str], explore: dict[str, Any], out: Path) -> list[str]:
    """`tui-eval record` for the run described by `spec` (RunSpec.to_json()), on one seed."""
    argv = [sys.executable, "-m", "tui_eval.cli", "record", str(spec["checkpoint"]), "--seed", str(seed),
            "--out", str(out), "--paths", ",".join(paths), "--device", str(spec.get("device") or "cpu")]
    for item in spec.get("imports") or []:
        argv += ["--import", str(item)]
    for item in spec.get("custom_paths") or []:
        argv += ["--path", str(item)]
    for option, key in (("--env", "env_id"), ("--module", "module"), ("--success-key", "success_key"),
                        ("--vs", "vs"), ("--agent-cfg", "agent_cfg"), ("--activation", "activation"),
                        ("--vecenv", "vecenv"), ("--vs-env", "vs_env"), ("--vs-vecenv", "vs_vecenv")):
        if spec.get(key):
            argv += [option, str(spec[key])]
    if spec.get("env_config"):
        import json

        argv += ["--env-config", json.dumps(spec["env_config"])]
    if spec.get("vs_env_config"):
        import json

        argv += ["--vs-env-config", json.dumps(spec["vs_env_config"])]
    if spec.get("generic_connectors"):
        argv.append("--generic-connectors")
    for name in paths:
        if explore.get(name) is not None:
            argv += ["--explore", f"{name}={'on' if explore[name] else 'off'}"]
    return argv


class FrameActions:
    """Mixed into EvalApp."""

    frame_options: FrameOptions

    def open_frames(self) -> None:
        if self.frame_options.renderer == "off":
            self.query_one(StatusLine).say("frames are off (--frames-renderer off)", style="italic")
            return
        if not isinstance(self.screen, FramesScreen):
            self.push_screen(FramesScreen(self.paths, self.frame_options))

    def action_frames(self) -> None:
        self.open_frames()

    def action_clip(self) -> None:
        rec = self.query_one(EpisodeLog).selected()
        if rec is None:
            self.query_one(StatusLine).say("clip: select an episode in the log first", style="italic")
            return
        self.record_clip(rec.seed, self.paths)

    def record_clip(self, seed: int, paths: list[str]) -> None:
        """Write `<log>.seed-S.gif` in the background; the status line says where, or why not."""
        spec = self.plan.spec.to_json() if self.plan is not None else (self.source.meta().get("spec") or {})
        if not spec.get("checkpoint"):
            self.query_one(StatusLine).say("clip: the run's checkpoint is unknown", style="bold red")
            return
        out = self.log_path.with_name(f"{self.log_path.stem}.seed-{seed}.gif")
        explore = {n: self.source.explore(n) for n in paths} if self.source is not None else {}
        argv = record_argv(spec, seed, paths, explore, out)
        self.query_one(StatusLine).say(f"recording seed {seed} ({', '.join(paths)}) to {out}…")
        threading.Thread(target=self._record, args=(argv, out), name="tui-eval-clip", daemon=True).start()

    def _record(self, argv: list[str], out: Path) -> None:
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=1800)
            message = (f"clip written: {done.stdout.strip() or out}" if done.returncode == 0 else
                       f"clip failed: {(done.stderr.strip().splitlines() or ['?'])[-1]}")
        except Exception as exc:  # the recording must not take the app down
            message = f"clip failed: {type(exc).__name__}: {exc}"
        self.call_from_thread(self.query_one(StatusLine).say, message,
                              style="bold green" if message.startswith("clip written") else "bold red")

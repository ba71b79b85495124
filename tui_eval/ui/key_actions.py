"""What the keys do on the run's screen: pause, resample, explore, export, filters, help, diagnosis, the
seed detail, frames and clips. The screen reaches the run through its host's source only."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

from tui_eval.outputs import stderr_path
from tui_eval.views.snapshot import RunSource

from . import messages as msg
from .frame_actions import record_argv, run_recording
from .frames_screen import FramesScreen
from .records_export import export_paths, export_run
from .run_view import RunView
from .widgets import (
    EpisodeLog,
    ExploreScreen,
    HelpScreen,
    Histograms,
    SeedDetail,
)
from .widgets.episode_log import Filter
from .widgets.paired_screen import PairedScreen

CONTROLS = ("toggle_pause", "resample", "explore")


class RunScreen(RunView):
    """The run's screen with its key actions (bound by the app, so that they work over any screen)."""

    def __init__(self, host):
        super().__init__(host)
        self.exporting = False
        self.paired: PairedScreen | None = None  # the paired view while it is open: it takes new episodes

    def take(self, batch) -> None:
        super().take(batch)
        if self.paired is not None and batch.episodes:
            self.paired.add([rec for _, rec in batch.episodes])

    # ------------------------------------------------------------------ actions
    def check_action(self, action: str, parameters) -> bool | None:
        """The read-only view shows the run's controls disabled (dimmed in the footer)."""
        if self.host.readonly and action in CONTROLS:
            return None
        return True

    def _controlled(self, what: str) -> RunSource | None:
        """The source to steer, or None (and why, on the status line)."""
        host, source = self.host, self.host.source
        if host.readonly:
            self.say(f"{what}: disabled in the read-only view of a run log", style="italic")
            return None
        if source is None:
            self.say(f"{what}: {'cannot run' if host.load_error else 'still loading'}", style="italic")
            return None
        if source.state not in ("running", "paused"):
            self.say(f"{what}: the run is {source.state}", style="italic")
            return None
        return source

    def _control(self, what: str, act: Callable):
        """Run a control action; a live run reached through its channel may refuse or be gone."""
        try:
            return act()
        except (OSError, RuntimeError) as exc:
            self.say(f"{what}: {exc}", style="bold red")
            return None

    def action_toggle_pause(self) -> None:
        source = self._controlled("pause")
        if source is None:
            return
        self._control("pause", source.toggle_pause)
        self.show_header()  # on screen at the next frame, not at the next tick

    def action_resample(self) -> None:
        source = self._controlled("resample")
        if source is None:
            return
        block = self._control("resample", source.resample)
        if block is None:
            return
        self.say(f"resampled: new held-out seed block {block} (block {len(source.blocks) - 1}); earlier records "
                 "keep their block", style="bold")
        self.stats_dirty = True
        self.show_header()

    def action_toggle_view(self) -> None:
        if self.host.source is None:
            return
        self.view_block = not self.view_block
        self.say("statistics of the current seed block only" if self.view_block else "statistics of all seed blocks")
        self.stats_dirty = True
        self.last_stats = 0.0
        self.host.tick()

    def action_explore(self) -> None:
        source = self._controlled("explore")
        if source is None:
            return
        current = {n: source.explore(n) for n in self.paths}
        if len(self.paths) == 1:
            self._flip_explore(self.paths[0])
            return
        self.app.push_screen(ExploreScreen(current), self._flip_explore)

    def _flip_explore(self, name: str | None) -> None:
        source = None if name is None else self._controlled("explore")
        if name is None or source is None:
            return
        on = not source.explore(name)
        block = self._control("explore", lambda: source.set_explore(name, on))
        if block is None:
            return
        deterministic = not any(source.explore(n) for n in self.paths)
        text = (f"explore {'on' if on else 'off'} for {name}: new seed block {block} "
                f"(block {len(source.blocks) - 1}); "
                + ("every path is deterministic now: b shows this block's exact verdict" if deterministic
                   else "this block's verdict is statistical (b shows it alone)"))
        self.say(text, style="bold")
        self.app.notify(text, title="explore changed", timeout=6)
        self.stats_dirty = True

    def action_export(self) -> None:
        source, log_path = self.host.source, self.host.log_path
        if self.exporting:
            self.say("an export is already running")
            return
        if source is None or not log_path.is_file():
            self.say("export: nothing to export yet")
            return
        self.exporting = True
        throughput = {n: source.throughput(n) for n in self.paths} if not self.host.readonly else None
        self.say(f"exporting {log_path}…")
        threading.Thread(target=self._export, args=(log_path, throughput), name="tui-eval-export",
                         daemon=True).start()

    def _export(self, log_path: Path, throughput) -> None:
        t0 = time.perf_counter()
        try:
            csv_path, json_path, count = export_run(log_path, throughput)
        except Exception as exc:
            self.post_message(msg.ExportFailed(f"{type(exc).__name__}: {exc}"))
            return
        self.post_message(msg.ExportDone(csv_path, json_path, count, time.perf_counter() - t0))

    def on_export_done(self, message: msg.ExportDone) -> None:
        self.exporting = False
        self.say(f"exported {message.count:,} records to {message.csv_path} and {message.json_path}",
                 style="bold green")
        self.app.notify(f"{message.csv_path}\n{message.json_path}", title=f"exported {message.count:,} records",
                        timeout=8)

    def on_export_failed(self, message: msg.ExportFailed) -> None:
        self.exporting = False
        self.say(f"export failed: {message.message}", style="bold red")
        self.app.notify(message.message, title="export failed", severity="error")

    def action_filter_path(self) -> None:
        log = self.query_one(EpisodeLog)
        order = [None, *self.paths]
        nxt = order[(order.index(log.filter.path) + 1) % len(order)] if log.filter.path in order else None
        log.set_filter(Filter(path=nxt, invalid_only=log.filter.invalid_only))
        self.set_log_title()

    def action_filter_invalid(self) -> None:
        log = self.query_one(EpisodeLog)
        log.set_filter(Filter(path=log.filter.path, invalid_only=not log.filter.invalid_only))
        self.set_log_title()

    def action_toggle_histograms(self) -> None:
        visible = self.query_one(Histograms).display
        self.set_class(visible, "-hist-off")
        self.set_class(not visible, "-hist-on")
        self.stats_dirty = True
        self.last_stats = 0.0

    def action_diagnose(self) -> None:
        """The doctor's findings: paths built afresh in a daemon thread, the run's records as the batch."""
        from .widgets.diagnosis_screen import DiagnosisScreen

        plan, source = self.host.plan, self.host.source
        if plan is None or source is None:
            why = ("the paths are still loading; press d again in a moment" if plan is not None else
                   "this view reads a run log; run tui-eval diagnose CHECKPOINT for the findings")
            self.app.push_screen(DiagnosisScreen(None, unavailable=why))
            return
        explore = {n: bool(source.explore(n)) for n in self.paths}

        def compute(progress):
            from tui_eval.doctor.live import diagnose_live

            return diagnose_live(plan, source.records(), explore, progress)

        self.app.push_screen(DiagnosisScreen(compute))

    def action_terms(self) -> None:
        """What ended each path's episodes, and which reward term moved (from the newest snapshot)."""
        from .widgets.terms_screen import TermsScreen

        source = self.host.source
        self.app.push_screen(TermsScreen(self.snapshot, source.records() if source is not None else []))

    def action_contract(self) -> None:
        """The export's deployment contract against the env, item by item (from the run's log)."""
        from .widgets.contract_screen import ContractScreen

        source = self.host.source
        self.app.push_screen(ContractScreen((source.meta() if source is not None else {}).get("contract")))

    def action_help(self) -> None:
        log_path, readonly = self.host.log_path, self.host.readonly
        csv_path, json_path = export_paths(log_path)
        files = {"run log": str(log_path), "export (e)": f"{csv_path}, {json_path}"}
        if not readonly:
            files["library output"] = f"{stderr_path(log_path)} (written while the app runs)"
        self.app.push_screen(HelpScreen(readonly=readonly, files=files))

    def on_episode_log_seed_selected(self, message: EpisodeLog.SeedSelected) -> None:
        self.open_seed(message.record.seed, message.record.block)

    def open_seed(self, seed: int, block: int) -> None:
        """The seed's episodes on every path, side by side (read from the log in a thread)."""
        panel = self.query_one("#detail-panel")
        panel.add_class("-open")
        detail = self.query_one(SeedDetail)
        detail.show(self.paths, seed, block, None)
        threading.Thread(target=self._lookup, args=(self.host.log_path, seed, block), daemon=True).start()

    def action_paired(self) -> None:
        """`s`: each seed's return on the first path against the second's, growing as episodes arrive."""
        source = self.host.source
        if len(self.paths) < 2 or source is None:
            self.say("paired view: it needs two paths with episodes", style="italic")
            return
        self.paired = PairedScreen(self.paths, source.records(), lambda seed, block: self.record_clip(seed, self.paths))
        self.app.push_screen(self.paired, self._paired_closed)

    def _paired_closed(self, chosen: tuple[int, int] | None) -> None:
        self.paired = None
        if chosen is not None:  # enter on a seed: its episodes on every path
            self.open_seed(*chosen)

    def _lookup(self, log_path: Path, seed: int, block: int) -> None:
        from tui_eval.log.store import RunLog

        try:
            log = RunLog(log_path, readonly=True)
            try:
                records = log.records_for_seed(seed, block)
            finally:
                log.close()
        except Exception:
            records = []
        self.post_message(msg.SeedFound(seed, block, records))

    def on_seed_found(self, message: msg.SeedFound) -> None:
        detail = self.query_one(SeedDetail)
        if detail.seed == message.seed and detail.block == message.block:
            detail.show(self.paths, message.seed, message.block, message.records)

    def action_close_detail(self) -> None:
        self.query_one("#detail-panel").remove_class("-open")

    # ------------------------------------------------------------------ frames (`v`) and clips (`c`)
    def open_frames(self) -> None:
        options = self.host.frame_options
        if options.renderer == "off":
            self.say("frames are off (--frames-renderer off)", style="italic")
            return
        if not isinstance(self.app.screen, FramesScreen):
            self.app.push_screen(FramesScreen(self.paths, options, self.host, self.action_toggle_pause,
                                              self.record_clip))

    def action_frames(self) -> None:
        self.open_frames()

    def action_clip(self) -> None:
        rec = self.query_one(EpisodeLog).selected()
        if rec is None:
            self.say("clip: select an episode in the log first", style="italic")
            return
        self.record_clip(rec.seed, self.paths)

    def record_clip(self, seed: int, paths: list[str]) -> None:
        """Write `<log>.seed-S.gif` in the background; the status line says where, or why not."""
        host, source = self.host, self.host.source
        spec = host.plan.spec.to_json() if host.plan is not None else (
            (source.meta().get("spec") or {}) if source is not None else {})
        if not spec.get("checkpoint"):
            self.say("clip: the run's checkpoint is unknown", style="bold red")
            return
        out = host.log_path.with_name(f"{host.log_path.stem}.seed-{seed}.gif")
        explore = {n: source.explore(n) for n in paths} if source is not None else {}
        argv = record_argv(spec, seed, paths, explore, out)
        self.say(f"recording seed {seed} ({', '.join(paths)}) to {out}…")

        def done(message: str) -> None:
            self.app.call_from_thread(self.say, message,
                                      style="bold green" if message.startswith("clip written") else "bold red")

        threading.Thread(target=run_recording, args=(argv, out, done), name="tui-eval-clip", daemon=True).start()

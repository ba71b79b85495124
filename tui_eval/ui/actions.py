"""What the keys do in the app: pause, resample, explore, export, filters, help, diagnosis, the seed
detail. A mixin of `EvalApp` (it uses the app's source, engine and widgets)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from tui_eval.outputs import stderr_path

from . import messages as msg
from .export import export_paths, export_run
from .widgets import (
    EpisodeLog,
    ExploreScreen,
    HelpScreen,
    Histograms,
    SeedDetail,
    StatusLine,
)
from .widgets.episode_log import Filter


class RunActions:
    """The app's key actions and their replies (mixed into EvalApp)."""

    view_block: bool  # statistics of the current block only (`b`)
    _exporting: bool

    # ------------------------------------------------------------------ actions
    def check_action(self, action: str, parameters) -> bool | None:
        """The read-only view shows the run's controls disabled (dimmed in the footer)."""
        if self.readonly and action in ("toggle_pause", "resample", "explore"):
            return None
        return True

    def _can_control(self, what: str) -> bool:
        status = self.query_one(StatusLine)
        if self.readonly:
            status.say(f"{what}: disabled in the read-only view of a run log", style="italic")
            return False
        if self.plan is not None and self.engine is None:
            status.say(f"{what}: {'cannot run' if self.load_error else 'still loading'}", style="italic")
            return False
        state = self.source.state
        if state not in ("running", "paused"):
            status.say(f"{what}: the run is {state}", style="italic")
            return False
        return True

    def _control(self, what: str, act: Callable):
        """Run a control action; a live run reached through its channel may refuse or be gone."""
        try:
            return act()
        except (OSError, RuntimeError) as exc:
            self.query_one(StatusLine).say(f"{what}: {exc}", style="bold red")
            return None

    def action_toggle_pause(self) -> None:
        if not self._can_control("pause"):
            return
        self._control("pause", self.source.toggle_pause)
        self._show_header()  # on screen at the next frame, not at the next tick

    def action_resample(self) -> None:
        if not self._can_control("resample"):
            return
        block = self._control("resample", self.source.resample)
        if block is None:
            return
        self.query_one(StatusLine).say(f"resampled: new held-out seed block {block} (block "
                                       f"{len(self.source.blocks) - 1}); earlier records keep their block",
                                       style="bold")
        self._stats_dirty = True
        self._show_header()

    def action_toggle_view(self) -> None:
        if self.source is None:
            return
        self.view_block = not self.view_block
        self.query_one(StatusLine).say("statistics of the current seed block only" if self.view_block
                                       else "statistics of all seed blocks")
        self._stats_dirty = True
        self._last_stats = 0.0
        self._tick()

    def action_explore(self) -> None:
        if not self._can_control("explore"):
            return
        current = {n: self.source.explore(n) for n in self.paths}
        if len(self.paths) == 1:
            self._flip_explore(self.paths[0])
            return
        self.push_screen(ExploreScreen(current), self._flip_explore)

    def _flip_explore(self, name: str | None) -> None:
        if name is None or not self._can_control("explore"):
            return
        on = not self.source.explore(name)
        block = self._control("explore", lambda: self.source.set_explore(name, on))
        if block is None:
            return
        deterministic = not any(self.source.explore(n) for n in self.paths)
        text = (f"explore {'on' if on else 'off'} for {name}: new seed block {block} "
                f"(block {len(self.source.blocks) - 1}); "
                + ("every path is deterministic now: b shows this block's exact verdict" if deterministic
                   else "this block's verdict is statistical (b shows it alone)"))
        self.query_one(StatusLine).say(text, style="bold")
        self.notify(text, title="explore changed", timeout=6)
        self._stats_dirty = True

    def action_export(self) -> None:
        if self._exporting:
            self.query_one(StatusLine).say("an export is already running")
            return
        if self.source is None or not self.log_path.is_file():
            self.query_one(StatusLine).say("export: nothing to export yet")
            return
        self._exporting = True
        throughput = {n: self.source.throughput(n) for n in self.paths} if not self.readonly else None
        self.query_one(StatusLine).say(f"exporting {self.log_path}…")
        threading.Thread(target=self._export, args=(throughput,), name="tui-eval-export", daemon=True).start()

    def _export(self, throughput) -> None:
        t0 = time.perf_counter()
        try:
            csv_path, json_path, count = export_run(self.log_path, throughput)
        except Exception as exc:
            self.post_message(msg.ExportFailed(f"{type(exc).__name__}: {exc}"))
            return
        self.post_message(msg.ExportDone(csv_path, json_path, count, time.perf_counter() - t0))

    def on_export_done(self, message: msg.ExportDone) -> None:
        self._exporting = False
        text = f"exported {message.count:,} records to {message.csv_path} and {message.json_path}"
        self.query_one(StatusLine).say(text, style="bold green")
        self.notify(f"{message.csv_path}\n{message.json_path}", title=f"exported {message.count:,} records",
                    timeout=8)

    def on_export_failed(self, message: msg.ExportFailed) -> None:
        self._exporting = False
        self.query_one(StatusLine).say(f"export failed: {message.message}", style="bold red")
        self.notify(message.message, title="export failed", severity="error")

    def action_filter_path(self) -> None:
        log = self.query_one(EpisodeLog)
        order = [None, *self.paths]
        nxt = order[(order.index(log.filter.path) + 1) % len(order)] if log.filter.path in order else None
        log.set_filter(Filter(path=nxt, invalid_only=log.filter.invalid_only))
        self._set_log_title()

    def action_filter_invalid(self) -> None:
        log = self.query_one(EpisodeLog)
        log.set_filter(Filter(path=log.filter.path, invalid_only=not log.filter.invalid_only))
        self._set_log_title()

    def action_toggle_histograms(self) -> None:
        visible = self.query_one(Histograms).display
        self.screen.set_class(visible, "-hist-off")
        self.screen.set_class(not visible, "-hist-on")
        self._stats_dirty = True
        self._last_stats = 0.0

    def action_diagnose(self) -> None:
        """The doctor's findings: paths built afresh in a daemon thread, the run's records as the batch."""
        from .widgets.diagnosis_screen import DiagnosisScreen

        if self.plan is None or self.engine is None:
            why = ("the paths are still loading; press d again in a moment" if self.plan is not None else
                   "this view reads a run log; run tui-eval diagnose CHECKPOINT for the findings")
            self.push_screen(DiagnosisScreen(None, unavailable=why))
            return
        plan, engine = self.plan, self.engine
        explore = {n: engine.explore_of(n) for n in self.paths}

        def compute(progress):
            from tui_eval.doctor.core import diagnose_live

            return diagnose_live(plan, engine.log.records(), explore, progress)

        self.push_screen(DiagnosisScreen(compute))

    def action_help(self) -> None:
        csv_path, json_path = export_paths(self.log_path)
        files = {"run log": str(self.log_path), "export (e)": f"{csv_path}, {json_path}"}
        if not self.readonly:
            files["library output"] = f"{stderr_path(self.log_path)} (written while the app runs)"
        self.push_screen(HelpScreen(readonly=self.readonly, files=files))

    def on_episode_log_seed_selected(self, message: EpisodeLog.SeedSelected) -> None:
        rec = message.record
        panel = self.query_one("#detail-panel")
        panel.add_class("-open")
        detail = self.query_one(SeedDetail)
        detail.show(self.paths, rec.seed, rec.block, None)
        threading.Thread(target=self._lookup, args=(rec.seed, rec.block), daemon=True).start()

    def _lookup(self, seed: int, block: int) -> None:
        from tui_eval.store import RunLog

        try:
            log = RunLog(self.log_path, readonly=True)
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

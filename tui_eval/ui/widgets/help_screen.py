"""`?`: the keys and what the numbers mean."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

KEYS = (
    ("space / p", "pause or resume: no new episode starts; episodes in flight finish and are recorded"),
    ("r", "resample: a fresh held-out seed block for every path (records keep their block)"),
    ("b", "show statistics of the current seed block, or of all blocks"),
    ("x", "change explore for a path (starts a new seed block)"),
    ("e", "export records and summary (CSV + JSON) next to the run log"),
    ("f / i", "filter the episode log by path / invalid episodes only"),
    ("enter", "on an episode: every path's result for that seed, side by side"),
    ("tab", "move between panels (↑↓ PgUp PgDn Home End in the log)"),
    ("s", "paired view: each seed's return on the first path against the second's (on the diagonal when they "
          "agree); ←/→ walk the seeds, largest difference first; enter opens one, c records its clip"),
    ("h", "show or hide the return histograms"),
    ("t", "terms: what ended each path's episodes, and which reward term moved (envs that name their terms: "
          "manager-based robot envs)"),
    ("n", "contract: the export's deployment contract against the env, ✓ / ✗ per item (robot exports)"),
    ("d", "diagnose: why do the paths differ? ranked findings (settings, connector state, stage, step)"),
    ("v", "frames: the paths playing the same seed, rendered (space pause, ←/→ step, [ ] seed, s one/both)"),
    ("c", "on an episode: a clip of its seed, the paths side by side (<log>.seed-S.gif)"),
    ("q", "quit: stop the run; the log keeps every finished episode; the summary is printed"),
    ("ctrl+c", "the same, with exit code 130 (interrupted)"),
)

GLOSSARY = (
    ("anytime 95%", "a confidence sequence: valid however often you look, so watching it and stopping "
                    "when the paths look different is honest (the fixed-n 95% interval is in the final report)"),
    ("Δ row", "path A − path B, paired by seed when both ran it (differences per seed)"),
    ("DIFFER", "the anytime interval of the difference excludes 0 (statistical), or a seed gave different "
               "episodes with both paths deterministic (exact)"),
    ("EQUIVALENT", "the interval lies inside ±margin (a test against ±δ, not 'it contains 0'), or "
                   "identical paired seeds with both deterministic (exact)"),
    ("UNDECIDED", "neither yet: more episodes narrow the interval"),
    ("×", "an invalid episode (the simulation blew up, froze or raised): counted, never a success"),
)


class HelpScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 90%; max-width: 110; height: auto; max-height: 90%;
                                  border: round $accent; background: $surface; padding: 0 1; }
    """
    BINDINGS = [Binding("escape,q,question_mark,f1", "dismiss", "close")]

    def __init__(self, readonly: bool = False, files: dict[str, str] | None = None):
        super().__init__()
        self.readonly = readonly
        self.files = files or {}

    def compose(self) -> ComposeResult:
        keys = Table.grid(padding=(0, 2))
        keys.add_column(style="bold cyan", no_wrap=True)
        keys.add_column()
        for key, what in KEYS:
            if self.readonly and key in ("space / p", "r", "x"):
                what = f"[read-only view of a run log: disabled] {what}"
            keys.add_row(key, what)
        terms = Table.grid(padding=(0, 2))
        terms.add_column(style="bold", no_wrap=True)
        terms.add_column()
        for term, what in GLOSSARY:
            terms.add_row(term, what)
        files = Table.grid(padding=(0, 2))
        files.add_column(style="bold", no_wrap=True)
        files.add_column()
        for what, where in self.files.items():
            files.add_row(what, where)
        with VerticalScroll() as scroll:
            scroll.border_title = "help · esc to close"
            yield Static(Text("Keys", style="bold underline"))
            yield Static(keys)
            yield Static(Text("\nWhat the numbers mean", style="bold underline"))
            yield Static(terms)
            if self.files:
                yield Static(Text("\nThis run", style="bold underline"))
                yield Static(files)

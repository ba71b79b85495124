"""`t`: what ended each path's episodes and which reward term moved between the paths (an env that names its
termination and reward terms: mjlab, Isaac Lab)."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from tui_eval.records import EpisodeRecord
from tui_eval.stats.episode_terms import term_differences
from tui_eval.views.format import interval, num
from tui_eval.views.snapshot import RunSnapshot

UNNAMED = "this env names no termination or reward terms (manager-based robot envs do): nothing to show"


def terms_tables(snapshot: RunSnapshot | None, records: list[EpisodeRecord]) -> list[Table | Text]:
    """The termination shares per path, then the first two paths' reward terms paired by seed, the term that moved
    most first."""
    if snapshot is None:
        return [Text("no episodes yet")]
    summaries = {n: dict(snapshot.summaries.get(n) or {}) for n in snapshot.paths}
    if not any(s.get("terminations") or s.get("reward_terms") for s in summaries.values()):
        return [Text(UNNAMED)]
    out: list[Table | Text] = []
    ended = Table(title="ended by (share of the path's episodes)", title_justify="left", expand=False)
    ended.add_column("termination term")
    for name in snapshot.paths:
        ended.add_column(name, justify="right")
    terms = list(dict.fromkeys(t for s in summaries.values() for t in (s.get("terminations") or {})))
    for term in terms:
        ended.add_row(term, *(_share(summaries[n], term) for n in snapshot.paths))
    out.append(ended)
    if len(snapshot.paths) >= 2:
        a, b = snapshot.paths[:2]
        pairs, rows = term_differences(records, a, b)
        rewards = Table(title=f"reward terms (episode sums on {pairs} paired seeds)", title_justify="left",
                        expand=False, caption=f"{b} − {a}: the paired difference, 95% CI fixed-n; bold: it excludes 0",
                        caption_justify="left")
        for header in ("term", a, b, f"{b} − {a}", "95% CI"):
            rewards.add_column(header, justify="left" if header == "term" else "right", no_wrap=True)
        for d in rows:
            moved = d.ci is not None and (d.ci[0] > 0 or d.ci[1] < 0)
            rewards.add_row(Text(d.term, style="bold" if moved else ""), num(d.mean_a, 3), num(d.mean_b, 3),
                            Text(num(d.diff, 3), style="bold yellow" if moved else ""),
                            interval(list(d.ci) if d.ci else None, 3))
        out.append(rewards)
    return out


def _share(summary: dict[str, Any], term: str) -> str:
    counts = summary.get("terminations") or {}
    total = sum(counts.values())
    return f"{100 * counts.get(term, 0) / total:.0f}% ({counts.get(term, 0)})" if total else "—"


class TermsScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    TermsScreen { align: center middle; }
    TermsScreen > VerticalScroll { width: 95%; max-width: 120; height: auto; max-height: 90%;
                                   border: round $accent; background: $surface; padding: 0 1; }
    """
    BINDINGS = [Binding("escape,q,t", "dismiss", "close")]

    def __init__(self, snapshot: RunSnapshot | None, records: list[EpisodeRecord]):
        super().__init__()
        self.snapshot = snapshot
        self.records = records

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(Text("termination and reward terms (t / esc: close)", style="bold"), id="terms-title")
            for i, part in enumerate(terms_tables(self.snapshot, self.records)):
                yield Static(part, id=f"terms-{i}")

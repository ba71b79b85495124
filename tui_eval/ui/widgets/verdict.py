"""The verdict, prominent and in colour, with the numbers that decide it."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widget import Widget

from tui_eval.format import could_differ, interval, num, verdict_kind

from .palette import VERDICT_STYLES


def verdict_text(c: dict[str, Any] | None, single_path: str | None = None) -> Text:
    if c is None and single_path is None:  # two paths, no numbers yet: still loading
        text = Text(" WAITING ", style="bold black on #b2b2b2", no_wrap=True, overflow="ellipsis")
        text.append("  the verdict comes with the first episodes of both paths", style="dim")
        return text
    if c is None:
        text = Text(" ONE PATH ", style="bold black on #b2b2b2", no_wrap=True, overflow="ellipsis")
        text.append(f"  only {single_path or 'one path'} runs: nothing to compare (run two with --paths A,B)",
                    style="dim")
        return text
    verdict = c.get("verdict", "undecided")
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(f" {verdict.upper()} ", style=VERDICT_STYLES.get(verdict, "bold reverse"))
    text.append(f" {verdict_kind(c)} ", style="bold")
    if c.get("exact") and not c.get("differing"):  # deterministic, no differing seed: the bound decides
        text.append(f" {c['a']} vs {c['b']}: {could_differ(c)}")
    else:
        text.append(f" {c['a']} − {c['b']} = ")
        text.append(num(c.get("diff_mean"), 2), style="bold")
        text.append(f"  anytime {100 * (1 - c.get('alpha_each', 0.025)):.4g}% {interval(c.get('diff_cs95'), 2)}")
        margin = c.get("margin")
        text.append(f"  margin ±{num(margin, 2)}" if margin is not None else "  no margin yet", style="dim")
        text.append(f"  {c.get('paired', 0):,} paired", style="dim")
    if c.get("explore"):
        text.append("  explore " + "/".join("on" if e else "off" if e is not None else "?" for e in c["explore"]),
                    style="dim")
    if c.get("reason"):
        text.append("\n")
        text.append(c["reason"], style="italic")
    return text


class VerdictBar(Widget):
    DEFAULT_CSS = """
    VerdictBar { height: 2; text-wrap: nowrap; text-overflow: ellipsis; }
    """

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.comparison: dict[str, Any] | None = None
        self.single_path: str | None = None
        self.message: Text | None = None

    def show(self, comparison: dict[str, Any] | None, single_path: str | None = None) -> None:
        self.comparison, self.single_path, self.message = comparison, single_path, None
        self.refresh()

    def show_message(self, text: Text) -> None:
        self.message = text
        self.refresh()

    @property
    def plain(self) -> str:
        return self.render().plain

    def render(self) -> Text:
        if self.message is not None:
            return self.message
        return verdict_text(self.comparison, self.single_path)

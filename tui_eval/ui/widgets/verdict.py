"""The verdict, prominent and in colour, with the numbers that decide it."""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget

from tui_eval.stats import ComparisonSummary
from tui_eval.views.format import (
    agreement_text,
    comparison_reason,
    could_differ,
    interval,
    level,
    num,
    verdict_kind,
)

from .palette import VERDICT_STYLES


def verdict_text(c: ComparisonSummary | None, single_path: str | None = None) -> Text:
    if c is None and single_path is None:  # two paths, no numbers yet: still loading
        text = Text(" WAITING ", style="bold black on #b2b2b2", no_wrap=True, overflow="ellipsis")
        text.append("  the verdict comes with the first episodes of both paths", style="dim")
        return text
    if c is None:
        text = Text(" ONE PATH ", style="bold black on #b2b2b2", no_wrap=True, overflow="ellipsis")
        text.append(f"  only {single_path or 'one path'} runs: nothing to compare (run two with --paths A,B)",
                    style="dim")
        return text
    text = Text(no_wrap=True, overflow="ellipsis")
    if c.per_seed == "identical":  # deterministic, every paired seed the same episode: said first, in plain words
        text.append(" IDENTICAL ", style=VERDICT_STYLES["equivalent"])
        text.append(f" on {c.identical_pairs:,}/{c.identical_pairs:,} seeds ", style="bold")
        text.append(f" {c.a} vs {c.b}, both deterministic; statistically ")
        text.append(c.verdict.upper(), style="bold")
        if c.could_differ_upper is not None:
            text.append(f": ≤ {100 * c.could_differ_upper:.1f}% of seeds could differ (anytime {level(c.alpha)})",
                        style="dim")
    else:
        if c.same_policy:  # the same actions on the same observations: the returns' verdict is statistical
            text.append(" SAME POLICY ", style=VERDICT_STYLES["equivalent"])
            text.append(f" {agreement_text(c.agreement)};  returns", style="bold")
        text.append(f" {c.verdict.upper()} ", style=VERDICT_STYLES.get(c.verdict, "bold reverse"))
        text.append(f" {verdict_kind(c)} ", style="bold")
        if c.exact and not c.differing:  # deterministic, no differing seed yet: the bound decides
            text.append(f" {c.a} vs {c.b}: {could_differ(c)}")
        else:
            text.append(f" {c.a} − {c.b} = ")
            text.append(num(c.diff_mean, 2), style="bold")
            text.append(f"  anytime {level(c.alpha_each)} {interval(c.diff_cs95, 2)}")
            text.append(f"  margin ±{num(c.margin, 2)}" if c.margin is not None else "  no margin yet", style="dim")
            text.append(f"  {c.paired:,} paired", style="dim")
    if c.explore:
        text.append("  explore " + "/".join("on" if e else "off" if e is not None else "?" for e in c.explore),
                    style="dim")
    text.append("\n")
    text.append(comparison_reason(c), style="italic")
    return text


def void_text(reason: str) -> Text:
    """The bar once a path was given up: no verdict from its episodes."""
    text = Text(" VOID ", style="bold white on red", no_wrap=True, overflow="ellipsis")
    text.append("  no verdict from a failed path\n", style="bold")
    text.append(reason)
    return text


class VerdictBar(Widget):
    DEFAULT_CSS = """
    VerdictBar { height: 2; text-wrap: nowrap; text-overflow: ellipsis; }
    """

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.comparison: ComparisonSummary | None = None
        self.single_path: str | None = None
        self.message: Text | None = None

    def show(self, comparison: ComparisonSummary | None, single_path: str | None = None) -> None:
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

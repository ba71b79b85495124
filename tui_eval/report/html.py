"""The report as one HTML page that holds everything it shows: the figure inline as SVG, the summary table (per path:
episodes, explore, mean, anytime interval, success, invalid; then the comparison in words) or a sweep's board, and
the caption. Self-contained: no script, no stylesheet or font fetched, nothing from the network; it opens from a
mail attachment or a CI artifact as it is."""

from __future__ import annotations

from html import escape
from typing import Any

from tui_eval.views.format import comparison_text, interval, num, on_off, path_rows, percent

from .data import RunReport
from .sweep_data import SweepReport

STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto; max-width: 1450px;
       color: #222; padding: 0 1em; }
h1 { font-size: 1.4em; margin-bottom: 0.2em; }
.verdict { font-weight: bold; font-size: 1.05em; }
.figure svg { width: 100%; height: auto; }
table { border-collapse: collapse; margin: 1em 0; font-variant-numeric: tabular-nums; }
th, td { border-bottom: 1px solid #ddd; padding: 0.3em 0.8em; text-align: right; }
th:first-child, td:first-child { text-align: left; }
th { background: #f4f6f7; }
.caption { color: #444; font-size: 0.92em; line-height: 1.5; }
"""


def run_page(report: RunReport, svg: str) -> str:
    summary = report.summary
    rows = [[label, num(p.get("episodes")), on_off(p.get("explore")), num(p.get("mean"), 2),
             interval(p.get("cs95"), 2),
             "no success signal" if p.get("success_rate") is None and p.get("episodes") else
             percent(p.get("success_rate"), p.get("success_cs95")),
             f"{num(p.get('invalid'))} ({percent(p.get('invalid_rate'), p.get('invalid_cs95'))})"]
            for label, p in path_rows(summary["paths"])]
    table = html_table(["path", "episodes", "explore", "mean return", "anytime 95%", "success [anytime 95%]",
                        "invalid [anytime 95%]"], rows)
    verdict, _, why = comparison_text(summary).partition("\n")
    return page(f"tui-eval report: {report.name}", verdict, svg,
                table + f"<p>{escape(why.strip())}</p>", _rest_of_caption(report.caption))


def sweep_page(report: SweepReport, svg: str) -> str:
    rows = [[str(r["rank"]), r["checkpoint"], num(r.get("iteration"), 0), num(r.get("mean"), 2),
             interval(r.get("cs95"), 2),
             f"out in round {r['eliminated_at']} (< {r['eliminated_by']})" if r.get("eliminated_by") else "in",
             num(r.get("episodes")), num(r.get("training_metric"), 2), percent(r.get("success_rate")),
             num(r.get("invalid"))]
            for r in report.result["checkpoints"]]
    table = html_table(["rank", "checkpoint", "iteration", "held-out mean", "anytime 95%", "status", "episodes",
                        "training", "success", "invalid"], rows)
    return page(f"tui-eval report: sweep {report.name}", report.caption[0], svg, table, report.caption[1:])


def _rest_of_caption(caption: list[str]) -> list[str]:
    """The caption after the verdict's own lines (the page shows those above the figure and the table)."""
    head = next((i for i, line in enumerate(caption) if line.startswith("checkpoint ")), 0)
    return [line for line in caption[:head] if line.startswith("module ")] + caption[head:]


def html_table(header: list[str], rows: list[list[Any]]) -> str:
    head = "".join(f"<th>{escape(str(h))}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def page(title: str, headline: str, svg: str, table: str, caption: list[str]) -> str:
    lines = "<br>".join(escape(line) for line in caption)
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>'
            f"<style>{STYLE}</style></head><body>\n<h1>{escape(title)}</h1>\n"
            f'<p class="verdict">{escape(headline)}</p>\n<div class="figure">{svg}</div>\n{table}\n'
            f'<p class="caption">{lines}</p>\n</body></html>\n')

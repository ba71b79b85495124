"""Colours shared by the widgets: one per path (by position), one per state and verdict.

Names and hex values that both Rich and Textual parse (Textual rejects "grey15" or "bright_blue": a
style it cannot parse is looked up for a suggestion on every render), downgraded to xterm-256color."""

PATH_STYLES = ("bold cyan", "bold magenta", "bold green", "bold yellow")
PATH_BAR_STYLES = ("cyan", "magenta", "green", "yellow")

STATE_STYLES = {
    "loading": "bold black on cyan",
    "running": "bold black on green",
    "paused": "bold black on yellow",
    "stopping": "bold black on yellow",
    "done": "bold white on blue",
    "failed": "bold white on red",
    "stale": "bold black on #b2b2b2",
    "stopped": "bold white on blue",
    "interrupted": "bold white on blue",
}

VERDICT_STYLES = {
    "differ": "bold white on red",
    "equivalent": "bold black on green",
    "undecided": "bold black on yellow",
}


def path_style(paths: list[str], name: str, bar: bool = False) -> str:
    styles = PATH_BAR_STYLES if bar else PATH_STYLES
    try:
        return styles[paths.index(name) % len(styles)]
    except ValueError:
        return "bold"

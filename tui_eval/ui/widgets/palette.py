"""Colours shared by the widgets: one per path (by position), one per state and verdict.

Plain names that Rich downgrades cleanly to xterm-256color (and to 16 colours)."""

PATH_STYLES = ("bold cyan", "bold magenta", "bold green", "bold yellow")
PATH_BAR_STYLES = ("cyan", "magenta", "green", "yellow")

STATE_STYLES = {
    "loading": "bold black on bright_blue",
    "running": "bold black on green",
    "paused": "bold black on yellow",
    "stopping": "bold black on yellow",
    "done": "bold white on blue",
    "failed": "bold white on red",
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

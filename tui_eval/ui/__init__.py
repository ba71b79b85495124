"""The live monitor: a Textual app that is a view over engine events (or over a run log, read-only).

Only this package imports Textual. `inbox`, `source`, `charts` and `export` are plain Python (Rich at
most) so they can be tested and reused without a terminal.
"""

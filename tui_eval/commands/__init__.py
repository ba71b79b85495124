"""The subcommands of `tui-eval`, one module each; `tui_eval.cli` dispatches to their `main(argv)`.

Each module parses its own arguments (bad input: BadInput, one line, exit 2) and returns the exit code.
"""

"""The run options of RLlib checkpoints (declared here, offered by `tui-eval --help` with every kind's)."""

from tui_eval.config.option import Option

OPTIONS = (
    Option("generic_connectors", ("--generic-connectors",), "RLlib: run the connector pipelines step by step even "
           "when they are the stock ones", "store_true"),
    Option("freeze_filters", ("--freeze-filters",), "RLlib: MeanStdFilter normalises with the checkpoint's "
           "statistics on both paths, as deployed (default: it updates while evaluating, as RLlib does)",
           "store_true"),
)

"""The run options of rsl_rl checkpoints and mjlab runs (declared here, offered by `tui-eval --help` with every
kind's)."""

from tui_eval.config import option as o
from tui_eval.config.option import Option

OPTIONS = (
    Option("vecenv", ("--vecenv",), "rsl_rl: module:function returning an rsl_rl VecEnv", metavar="MODULE:FUNCTION"),
    Option("vs_vecenv", ("--vs-vecenv",), "rsl_rl: the second env (sim-to-sim, as --vs-env) as a VecEnv factory",
           metavar="MODULE:FUNCTION"),
    Option("agent_cfg", ("--agent-cfg",), "rsl_rl: the runner config (yaml/json)", localize=o.absolute_file),
    Option("activation", ("--activation",), "rsl_rl: activation when the config is inferred from the weights"),
)

"""A checkpoint kind defined in the tests alone, over a tiny library of its own ("toy"): its checkpoint is a
`*.toy.json` file holding a linear policy for a registered Gymnasium env. It registers with tui-eval's one
registry (`TUI_EVAL_KINDS=tests.support.toy_kind:PLUGIN`) and changes nothing outside this package: its kind
(`kind.py`) declares two paths (`paths.py`), which step tui-eval's shared vector-env loop and replay and rerun
themselves for the doctor."""

from tui_eval.config.option import Option
from tui_eval.integrations.base import KindPlugin

#: the kind's own run option, offered by `tui-eval --help` beside every kind's
OPTIONS = (Option("toy_flip", ("--toy-flip",), "toy: the float32 path plays the policy's weights negated (an export "
                  "bug, planted)", "store_true"),)
PLUGIN = KindPlugin(name="toy", kind="tests.support.toy_kind.kind:ToyKind", opens="a toy policy file (*.toy.json)",
                    distributions=("numpy",), order=5, options=f"{__name__}:OPTIONS")


def save(path, env: str, weights: list[list[float]]) -> None:
    """Write a toy checkpoint: the library's whole saving code."""
    import json

    path.write_text(json.dumps({"env": env, "weights": weights}))

"""Building an RLlib Algorithm imports torch's compiler (torch._dynamo and torch._inductor: 1.0-1.8 s of CPU on a
2-core machine) that evaluating it never runs. Two calls import it, each for one flag:

- RLlib's seeding calls `torch.use_deterministic_algorithms(True)`, which imports `torch._inductor.config` to set its
  `deterministic` and then sets torch's own flag;
- the learner's optimizer calls `Optimizer.add_param_group` (and `load_state_dict` on restore), which torch wraps in
  `torch._disable_dynamo`: on its first call the wrapper imports torch._dynamo to mark the method "not to be traced",
  and keeps the result on the method (`__dynamo_disable`).

`defer_compiler_imports` lets both go without the import: the deterministic flag is set in torch as before, and in
inductor's config where it is loaded, else through the environment variable that config reads when it loads
(TORCHINDUCTOR_DETERMINISTIC); the optimizer's wrapped methods are marked as already resolved to themselves, which is
what the mark means outside a compiled region (no optimizer runs in one during an evaluation). Whatever compiles later
imports the compiler itself. A torch whose internals differ is left as it is.

Measured (CartPole demo, Ray already up): the evaluate path's build took 1.33 s, 0.28 s with the imports deferred;
the check of a differing seed builds it in a fresh process each time.
"""

from __future__ import annotations

import os
import sys

_done = False


def defer_compiler_imports() -> None:
    """Once per process, before an Algorithm is built."""
    global _done
    if _done:
        return
    _done = True
    import torch
    import torch.optim

    try:
        wrapper_code = torch._disable_dynamo(lambda: None).__code__
    except Exception:  # another torch: nothing is changed
        return
    for attribute in vars(torch.optim.Optimizer).values():
        inner = getattr(attribute, "__wrapped__", None)
        if getattr(attribute, "__code__", None) is wrapper_code and callable(inner):
            inner.__dynamo_disable = inner  # what the wrapper looks up before it imports torch._dynamo
    if getattr(torch.use_deterministic_algorithms, "__module__", "") == "torch":
        torch.use_deterministic_algorithms = _use_deterministic_algorithms


def _use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """torch.use_deterministic_algorithms without importing inductor to set its flag."""
    import torch

    config = sys.modules.get("torch._inductor.config")
    if config is not None:
        setattr(config, "deterministic", mode)  # noqa: B010 (a module mypy reads as typed)
    else:
        os.environ["TORCHINDUCTOR_DETERMINISTIC"] = "1" if mode else "0"
    torch._C._set_deterministic_algorithms(mode, warn_only=warn_only)

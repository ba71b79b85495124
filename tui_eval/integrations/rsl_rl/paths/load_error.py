"""What a strict `load_state_dict` failure means for the user, in one line.

torch's RuntimeError lists missing and unexpected keys and size mismatches; the user needs the one that
explains it (std parameterisation, observation normalization, hidden dims, a wrong env) and what to do.
"""

from __future__ import annotations

import re

from tui_eval.errors import first_line


def summarise_load_error(exc: BaseException, source: str = "the agent cfg", role: str = "actor") -> str:
    """The strict load's RuntimeError as one line: which key, checkpoint shape vs cfg shape, what to do."""
    text = str(exc)
    sizes = re.findall(r"size mismatch for ([\w.]+): copying a param with shape torch\.Size\(\[([\d, ]*)\]\) "
                       r"from checkpoint, the shape in current model is torch\.Size\(\[([\d, ]*)\]\)", text)

    def keys_after(label: str) -> list[str]:
        match = re.search(label + r" in state_dict: (.*?)(?:\.\s*$|\.\s*\n|\.\s*(?=Unexpected|Missing))", text, re.S)
        return re.findall(r'"([^"]+)"', match.group(1)) if match else []

    missing, unexpected = keys_after(r"Missing key\(s\)"), keys_after(r"Unexpected key\(s\)")
    parts = []
    std = {"distribution.std_param": "scalar", "distribution.log_std_param": "log"}
    ck_std = [k for k in unexpected if k in std]
    cfg_std = [k for k in missing if k in std]
    if ck_std or cfg_std:
        parts.append(f"std parameterisation: the checkpoint has {ck_std[0] if ck_std else 'no std parameter'}, "
                     f"{source} builds {cfg_std[0] if cfg_std else 'none'} (distribution_cfg std_type "
                     f"{std.get(ck_std[0], '?') if ck_std else 'none'} in the weights)")
    norm_ck = any(k.startswith("obs_normalizer") for k in unexpected)
    norm_cfg = any(k.startswith("obs_normalizer") for k in missing)
    if norm_ck or norm_cfg:
        parts.append(f"obs_normalization is {'on' if norm_ck else 'off'} in the checkpoint, "
                     f"{'off' if norm_ck else 'on'} in {source}")
    other = [k for k in missing + unexpected if k not in std and not k.startswith("obs_normalizer")]
    if other:
        where = "builds" if other[0] in missing else "lacks"
        parts.append(f"{source} {where} {other[0]}{f' (+{len(other) - 1} more)' if len(other) > 1 else ''} "
                     "(hidden_dims / model class)")
    if sizes:
        key, got, want = next(((k, g, w) for k, g, w in sizes if k.startswith("mlp.")), sizes[0])
        if key.startswith("obs_normalizer") or (key == "mlp.0.weight" and got.split(",")[0] == want.split(",")[0]):
            hint = (f"the policy takes {got.split(',')[-1].strip()} observations, the env gives "
                    f"{want.split(',')[-1].strip()}: wrong --env?")
        elif key.startswith("distribution"):
            hint = f"the policy outputs {got} actions, the env takes {want}: wrong --env?"
        else:
            hint = "hidden_dims"
        more = f" (+{len(sizes) - 1} more)" if len(sizes) > 1 else ""
        parts.append(f"{key} is [{got}] in the checkpoint but [{want}] from {source} ({hint}){more}")
    if not parts:
        parts.append(first_line(exc, 160))
    return (f"{source} does not fit the checkpoint's weights: {role} " + "; ".join(parts)
            + "; pass the run's params/agent.yaml with --agent-cfg, or none to infer the cfg from the weights")

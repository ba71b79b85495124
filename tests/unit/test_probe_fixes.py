"""The doctor's probes say their fixes in no library's terms; each kind supplies its own (CheckpointKind.probe_fix):
RLlib's connectors, rsl_rl's exporters, SB3's VecNormalize and unscale_action."""

from __future__ import annotations

import re

import pytest

from tui_eval.doctor.probes import PROBES
from tui_eval.integrations.base import CheckpointKind

LIBRARY_TERMS = re.compile(r"rsl_rl|rllib|isaac|sb3|stable.baselines|vecnormalize|connector|columns\.", re.I)
KINDS = [("tui_eval.integrations.rllib.kind:RllibKind", "tui_eval.integrations.rllib.doctor"),
         ("tui_eval.integrations.rsl_rl.kind:RslRlKind", "tui_eval.integrations.rsl_rl.probe_fixes"),
         ("tui_eval.integrations.rsl_rl.mjlab.kind:MjlabKind", "tui_eval.integrations.rsl_rl.probe_fixes"),
         ("tui_eval.integrations.sb3.kind:Sb3Kind", "tui_eval.integrations.sb3.probe_fixes")]
#: each kind's own words for a missing normalizer
NORMALIZER_TERMS = {"RllibKind": "env_to_module", "RslRlKind": "obs_normalizer", "MjlabKind": "obs_normalizer",
                    "Sb3Kind": "VecNormalize"}


def _kind(path: str) -> type[CheckpointKind]:
    import importlib

    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


@pytest.mark.parametrize("probe", PROBES, ids=lambda p: p.name)
def test_a_probes_own_fix_names_no_library(probe):
    assert not LIBRARY_TERMS.search(probe.fix), probe.fix


@pytest.mark.parametrize("kind_path, fixes_module", KINDS, ids=lambda k: k.rsplit(":", 1)[-1].rsplit(".", 1)[-1])
def test_each_kind_says_the_fix_for_a_missing_normalizer_in_its_librarys_terms(kind_path, fixes_module):
    import importlib

    kind = _kind(kind_path)
    instance = object.__new__(kind)  # probe_fix reads nothing the checkpoint gives
    names = {p.name for p in PROBES}
    fixes = importlib.import_module(fixes_module).PROBE_FIXES
    assert set(fixes) <= names, set(fixes) - names  # a key no probe has is a fix never shown
    fix = instance.probe_fix("observation normalizer missing")
    assert fix is not None and NORMALIZER_TERMS[kind.__name__] in fix, fix
    assert instance.probe_fix("no such probe") is None
    assert "{sus}" in fix and not set(re.findall(r"\{(\w*)\}", fix)) - {"sus", "ref"}  # formatted with the paths

"""The doctor's counterfactual probes on faulty deployments, one mistake each: the top finding names the
mistake and carries its proof (the transformed path agrees with the other). Faithful paths give none."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.common import PENDULUM, SUPPORT
from tests.support.doctor_exports import faulty_export, other_statistics, without_normalizer
from tests.support.engines import plan_for
from tui_eval.doctor import diagnose_plan
from tui_eval.doctor.probes import PROBES

LOOPS = SUPPORT / "doctor_faulty_loops.py"
SEED = 1_000_000_000  # replayed at once where the mistake shows on any seed (no batch run first: faster)


def diagnose(checkpoint: Path, tmp_path: Path, *args: str, seed: int | None = None):
    return diagnose_plan(plan_for(checkpoint, "--episodes", "2", *args, log=tmp_path / "run.sqlite"), seed=seed)


def loops(tmp_path: Path, *names: str, checkpoint: Path = PENDULUM, seed: int | None = SEED):
    """A diagnosis of `names` (connectors or factories in doctor_faulty_loops.py) on the checkpoint."""
    args = ["--paths", ",".join(names)]
    for name in names:
        if name != "connectors":
            factory = name.rstrip("0123456789")
            args += ["--path", f"{name}={LOOPS}:{factory}"]
    return diagnose(checkpoint, tmp_path, *args, seed=seed)


def test_probes_have_distinct_names_and_one_small_interface():
    assert len({p.name for p in PROBES}) == len(PROBES) >= 12
    for p in PROBES:
        assert p.topic and "{sus}" in p.cause and callable(p.applies) and callable(p.test)


@pytest.mark.parametrize("change, cause, proof", [
    (without_normalizer, "`jit` lacks the observation normalizer",
     "with `runner`'s normalized observation (its env_to_module stage) as input, `jit`'s action equals `runner`'s"),
    (other_statistics, "`jit`'s observation normalizer holds other statistics than `runner`'s",
     "the normalizers' statistics differ by up to 0.3 (mean) and"),
], ids=["missing", "other-statistics"])
def test_rsl_rl_export_with_a_faulty_normalizer_is_named_with_its_proof(tmp_path, change, cause, proof):
    from tui_eval.demos import demo_checkpoint

    checkpoint = faulty_export(Path(demo_checkpoint("rsl_rl")).parent, tmp_path / "run", change)
    d = diagnose(checkpoint, tmp_path, seed=SEED)
    top = d.findings[0]
    assert top.cause.startswith(cause) and "proof: with `runner`" in top.evidence and proof in top.evidence
    assert "to 1e-5" in top.evidence and top.step == 0 and top.stage == "env_to_module"
    assert "export" in top.fix and len(d.findings) == 1  # the 'no setting differs' fallback is gone


@pytest.mark.parametrize("sus, cause, proof", [
    ("sampling", "`sampling` samples its actions (explore on); `connectors` takes the distribution's mode",
     "asked 4 times for its action on the same observation at step 0, `sampling` returns"),
    ("train_mode", "`train_mode` runs its torch module in train mode",
     "with its torch module switched to eval mode (it holds Dropout in train mode), `train_mode`'s action equals"),
    ("clipped", "`clipped` clips its actions where `connectors` does not",
     "`connectors`'s actions clipped to ±0.5 equal `clipped`'s at steps"),
    ("scaled", "`scaled` scales its actions by another factor", "`connectors`'s actions times 0.8 equal `scaled`'s"),
    ("swapped_observation", "`swapped_observation` gives its policy the observation's parts in another order",
     "with the observation's elements 0 and 1 swapped, `swapped_observation`'s action equals `connectors`'s"),
])
def test_a_faulty_loop_against_the_connectors_is_named_with_its_proof(tmp_path, sus, cause, proof):
    d = loops(tmp_path, "connectors", sus)
    top = d.findings[0]
    assert top.cause.startswith(cause), top.cause
    assert "proof: " + proof in top.evidence, top.evidence
    assert top.paths == ["connectors", sus] and top.step is not None


@pytest.mark.parametrize("sus, cause, proof", [
    ("gru_carried_over", "`gru_carried_over` carries its recurrent state over from one episode to the next",
     "built afresh, `gru_carried_over` gives `gru`'s actions at steps 0-"),
    ("gru_reset_every_step", "`gru_reset_every_step` resets its recurrent state on every step",
     "with its recurrent state reset before every step, `gru` gives the actions `gru_reset_every_step` sent"),
])
def test_a_recurrent_state_handled_wrong_is_named_with_its_proof(tmp_path, sus, cause, proof):
    d = loops(tmp_path, "gru", sus, seed=None)  # a state carried over needs episodes played before the replay
    top = d.findings[0]
    assert top.cause.startswith(cause) and "proof: " + proof in top.evidence, top
    assert d.replay["pairs"][0]["step"] == (0 if "carried" in sus else 1)


@pytest.mark.parametrize("names", [("connectors", "faithful"), ("gru", "gru2")], ids=["module", "recurrent"])
def test_faithful_loops_have_no_findings_and_no_probe_notes(tmp_path, names):
    d = loops(tmp_path, *names, seed=None)
    assert d.findings == [] and len(d.batch[names[1]]) == 2 and d.replay["pairs"][0]["kind"] == "none"
    assert not any("probe" in n for n in d.notes)


def test_float64_where_the_other_path_rounds_to_float32_is_named_with_its_proof(tmp_path):
    # --import: the loops' file registers FarPendulum-v0, whose observations are float64
    d = diagnose(PENDULUM, tmp_path, "--import", str(LOOPS), "--env", "FarPendulum-v0", "--paths", "float32,float64",
                 "--path", f"float32={LOOPS}:float32", "--path", f"float64={LOOPS}:float64", seed=SEED)
    top = d.findings[0]
    assert top.cause.startswith("`float64` computes on the float64 observation where `float32` rounds it to float32")
    assert "proof: with the float64 observation rounded to float32" in top.evidence

"""The run options are declared once (tui_eval.config.spec.RUN_OPTIONS): every RunSpec field has a declaration,
the parser has exactly the declared flags, and a spec goes to the command line (to_argv) and to JSON and
comes back the same, for any values; a clip of a run keeps what a recording takes (--step-timeout too)."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tui_eval.cluster.build import portable_spec
from tui_eval.commands import record
from tui_eval.commands.run import build_parser, spec_from_args
from tui_eval.config.option import Scope, Travel
from tui_eval.config.spec import RUN_OPTIONS, RunSpec, SeedBlock, run_option
from tui_eval.errors import BadInput
from tui_eval.kinds.registry import kind_options, run_options
from tui_eval.ui.frame_actions import record_argv

FIELDS = [f.name for f in dataclasses.fields(RunSpec)]
FLAGGED = [o.dest for o in RUN_OPTIONS if o.scope is Scope.RUN and o.flags]

names = st.from_regex(r"[a-z][a-z0-9_@]{0,8}", fullmatch=True)
# a value of exactly "--" is read by argparse as the end of the options, whatever the flag: not a value a user gives
texts = st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\x00"), min_size=1,
                max_size=12).filter(lambda t: t != "--")
floats = st.floats(allow_nan=False, allow_infinity=False, width=64)
json_values = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6), floats, texts)


ANY_FIELDS = st.sets(st.sampled_from(FLAGGED))
KIND_OPTIONS = kind_options()


@st.composite
def specs(draw, fields=ANY_FIELDS) -> RunSpec:
    """A RunSpec with a subset of its flagged fields (drawn from `fields`) away from the default, kept valid."""
    chosen = set(draw(fields))
    values: dict = {}
    seeds = None
    if "seeds" in chosen:
        start = draw(st.integers(0, 10**6))
        seeds = SeedBlock(start, draw(st.one_of(st.none(), st.integers(start + 1, start + 10**4))))
        values["seeds"] = seeds
    if "episodes" in chosen:
        most = len(seeds) if seeds is not None and seeds.stop is not None else 10**6
        values["episodes"] = draw(st.integers(1, most))
    for dest, strategy in {
        "paths": st.lists(names, min_size=1, max_size=3),
        "explore": st.dictionaries(names, st.booleans(), min_size=1, max_size=3),
        "custom_paths": st.lists(texts, min_size=1, max_size=2), "imports": st.lists(texts, min_size=1, max_size=2),
        "env_config": st.dictionaries(texts, json_values, min_size=1, max_size=3),
        "vs_env_config": st.dictionaries(texts, json_values, min_size=1, max_size=3),
        "num_envs": st.integers(1, 4096), "workers": st.integers(2, 64), "step_timeout": floats,
        "equivalence_margin": st.one_of(st.floats(1e-9, 1e12), st.just("floor")), "ray_address": texts,
        "action_tolerance": st.floats(1e-12, 1e3),
        "return_bounds": st.tuples(floats, floats).filter(lambda b: b[0] < b[1]),
        **{opt.dest: st.just(True) for opt in RUN_OPTIONS if opt.action == "store_true"},  # flags: on
    }.items():
        if dest in chosen:
            values[dest] = draw(strategy)
    if "device" in chosen:  # a CUDA device is checked on this machine unless the run joins a cluster
        values["device"] = draw(st.sampled_from(["cuda", "cuda:0", "cuda:3"]))
        values.setdefault("ray_address", draw(texts))
    if chosen & {"fail_if_worse", "fail_if_worse_success"}:  # the gate needs its baseline
        values["vs"] = draw(texts)
        if "fail_if_worse" in chosen:
            values["fail_if_worse"] = draw(st.floats(0, 1e9))
        if "fail_if_worse_success" in chosen:
            values["fail_if_worse_success"] = draw(st.floats(0, 100))
    for dest in chosen - values.keys():
        values[dest] = draw(texts)  # the plain text options (--env, --module, --vs, --log, ...)
    for name, (_, option) in draw(st.sets(st.sampled_from(sorted(KIND_OPTIONS.items())))):  # the kinds' own
        values.setdefault("kind_options", {})[name] = True if option.action == "store_true" else draw(texts)
    checkpoint = draw(texts.filter(lambda t: not t.startswith("-")))
    return RunSpec(checkpoint=checkpoint, **values)


def parse(argv: list[str]) -> RunSpec:
    return spec_from_args(build_parser().parse_args(argv))


def test_every_runspec_field_is_declared_once():
    run_scope = [o.dest for o in RUN_OPTIONS if o.scope is Scope.RUN]
    assert sorted(run_scope) == sorted(FIELDS), "declare each RunSpec field in tui_eval.config.spec.RUN_OPTIONS"
    assert len(set(run_scope)) == len(run_scope)
    terminal = [o.dest for o in RUN_OPTIONS if o.scope is Scope.TERMINAL]
    assert terminal and not set(terminal) & set(FIELDS)
    unflagged = sorted(o.dest for o in RUN_OPTIONS if not o.flags)
    assert unflagged == ["checkpoint", "kind", "kind_options"]  # the positional argument, what the run fills in


def test_the_parser_has_exactly_the_declared_flags():
    declared = {flag for o in run_options() for flag in o.flags}
    parser_flags = {s for action in build_parser()._actions for s in action.option_strings}
    assert parser_flags - {"-h", "--help", "--version"} == declared
    record_flags = {s for action in record.build_parser()._actions for s in action.option_strings}
    assert record_flags - {"-h", "--help", "--seed", "--out", "--stride"} == declared


@pytest.mark.parametrize("dest", FLAGGED)
@settings(max_examples=8, deadline=None)
@given(data=st.data())
def test_each_field_alone_round_trips(dest, data):
    """One flagged field at a time away from its default: to_argv, parse, the same spec."""
    spec = data.draw(specs(st.just({dest})))
    assert getattr(spec, dest) != getattr(RunSpec(spec.checkpoint), dest)
    assert parse(spec.to_argv()) == spec, spec.to_argv()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(specs())
def test_any_spec_round_trips_through_argv_and_json(spec):
    argv = spec.to_argv()
    assert parse(argv) == spec, argv
    assert RunSpec.from_json(json.loads(json.dumps(spec.to_json()))) == spec
    assert argv[0] == spec.checkpoint and all(a.startswith("--") for a in argv[1:])


def test_a_field_at_its_default_is_left_out_of_argv():
    assert RunSpec("ck").to_argv() == ["ck"]
    assert RunSpec("ck", step_timeout=30).to_argv() == ["ck"]


def clip_argv(spec: RunSpec, tmp_path: Path) -> list[str]:
    argv = record_argv(spec.to_json(), 7, ["connectors", "vs"], {"connectors": False, "vs": None},
                       tmp_path / "clip.gif")
    assert argv[:4] == [sys.executable, "-m", "tui_eval.cli", "record"]
    return argv[4:]


def test_a_clip_keeps_the_step_timeout(tmp_path):
    argv = clip_argv(RunSpec("ck", step_timeout=2.5), tmp_path)
    assert "--step-timeout=2.5" in argv
    args = record.build_parser().parse_args(argv)
    record.refuse_options(args)
    assert spec_from_args(args).step_timeout == 2.5


@settings(max_examples=60, deadline=None)
@given(specs())
def test_a_clip_keeps_what_a_recording_takes_and_nothing_else(tmp_path_factory, spec):
    assume(spec.device == "cpu")  # a clip plays here, off the cluster: --device cuda would be checked here
    args = record.build_parser().parse_args(clip_argv(spec, tmp_path_factory.getbasetemp()))
    record.refuse_options(args)  # nothing the clip passes on is refused
    assert (args.seed, args.out) == (7, str(tmp_path_factory.getbasetemp() / "clip.gif"))
    clip, default = spec_from_args(args), RunSpec(spec.checkpoint)
    for option in RUN_OPTIONS:
        if option.scope is not Scope.RUN or option.dest in ("paths", "explore"):
            continue
        kept = option.recorded is Travel.KEEP
        assert getattr(clip, option.dest) == getattr(spec if kept else default, option.dest), option.dest
    assert clip.paths == ["connectors", "vs"] and clip.explore == {"connectors": False}


@pytest.mark.parametrize("option", [o for o in RUN_OPTIONS if o.recorded is Travel.REFUSE and o.flags],
                         ids=lambda o: o.flag)
def test_record_refuses_what_a_clip_cannot_take(option, tmp_path):
    value = [] if option.action == "store_true" else ["1"]
    with pytest.raises(BadInput) as refused:
        record.main(["ck", "--seed", "0", "--out", str(tmp_path / "c.gif"), option.flag, *value])
    assert f"does not take {option.flag}" in str(refused.value)


def test_an_actors_copy_resets_and_localizes_as_declared(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in ("ckpt", "other", "cfg.yaml", "mod.py", "paths.py"):
        (tmp_path / name).touch()
    spec = RunSpec("ckpt", vs="other", kind_options={"agent_cfg": "cfg.yaml"}, imports=["mod.py", "a_module"],
                   custom_paths=["mine=paths.py:make", "theirs=pkg.mod:make"], log="run.sqlite", json="s.json",
                   report="r.png", workers=4, ray_address="auto", step_timeout=3.0)
    copy = portable_spec(spec)
    reset = sorted(o.dest for o in RUN_OPTIONS if o.remote is Travel.RESET)
    assert reset == ["in_process", "json", "log", "ray_address", "report", "workers"]
    assert all(getattr(copy, dest) == getattr(RunSpec("ckpt"), dest) for dest in reset)
    here = Path.cwd()
    assert (copy.checkpoint, copy.vs, copy.kind_option("agent_cfg")) == tuple(
        str(here / n) for n in ("ckpt", "other", "cfg.yaml"))
    assert copy.imports == [str(here / "mod.py"), "a_module"]
    assert copy.custom_paths == [f"mine={here / 'paths.py'}:make", "theirs=pkg.mod:make"]
    assert copy.step_timeout == 3.0 and run_option("step_timeout").remote is Travel.KEEP

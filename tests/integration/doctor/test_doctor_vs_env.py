"""Sim-to-sim parity: `--vs-env` runs the first path's policy on a second env as `<path>@vs-env`, in a run
and in `diagnose`; the doctor names the env fact that differs and where the episodes part."""

from __future__ import annotations

import json

from tests.support.common import CARTPOLE, PENDULUM
from tests.support.engines import plan_for
from tui_eval.cli import main
from tui_eval.doctor import diagnose_plan

SHORT = json.dumps({"max_episode_steps": 100})


def test_vs_env_with_only_another_time_limit_ranks_the_time_limit_first(tmp_path):
    plan = plan_for(CARTPOLE, "--episodes", "2", "--vs-env", "CartPole-v1", "--vs-env-config", SHORT,
                    log=tmp_path / "run.sqlite")
    assert plan.paths == ["connectors", "connectors@vs-env"]
    d = diagnose_plan(plan)
    assert all(v == 100 for v in d.batch["connectors@vs-env"].values())  # every episode cut at 100 steps
    top = d.findings[0]
    assert top.cause == "the env's time limit differs between paths"
    assert "time limit: connectors: 500; connectors@vs-env: 100" in top.evidence
    assert top.step == 100 and top.stage == "env" and "--vs-env-config" in top.fix
    assert {"dt", "observation space", "action space"} <= {s["fact"] for s in d.same}


def test_vs_env_on_another_gravity_shows_the_first_divergent_step(tmp_path):
    d = diagnose_plan(plan_for(PENDULUM, "--episodes", "2", "--paths", "connectors", "--vs-env-config",
                               json.dumps({"g": 12.0}), log=tmp_path / "run.sqlite"))
    assert d.paths == ["connectors", "connectors@vs-env"]
    pair = d.replay["pairs"][0]
    assert pair["stage"] == "obs" and pair["step"] == 1  # the same action at step 0, another next state
    top = d.findings[0]
    assert top.cause == "the env differs between paths (env_config)" and '{"g": 12.0}' in top.evidence
    assert not any("proof" in f.evidence for f in d.findings)  # the same policy: no deployment mistake


def test_vs_env_runs_in_a_headless_run_as_its_own_path(run_dir, capsys):
    out = run_dir / "summary.json"
    argv = [str(CARTPOLE), "--headless", "--episodes", "2", "--vs-env-config", SHORT, "--json", str(out)]
    assert main(argv) == 0  # 3 needs --fail-on-differ, which is not given
    data = json.loads(out.read_text())
    assert "connectors@vs-env" in json.dumps(data) and "connectors@vs-env" in capsys.readouterr().out


def test_bad_vs_env_options_are_one_line_exit_2(run_dir, capsys):
    for argv in (["--vs-env-config", "{nope"], ["--vs-vecenv", "m:f"], ["--vs-env", "NoSuchEnv-v9"]):
        assert main([str(CARTPOLE), "--headless", "--episodes", "1", *argv]) == 2, argv
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "Traceback" not in err, err


def test_vs_env_runs_a_custom_first_path_on_the_second_env(tmp_path):
    """`--path NAME=MODULE:FACTORY` as the first path: its loop also runs on the second env, as `NAME@vs-env`."""
    from tests.support.common import SUPPORT

    loops = SUPPORT / "doctor_faulty_loops.py"
    plan = plan_for(PENDULUM, "--episodes", "2", "--paths", "faithful", "--path", f"faithful={loops}:faithful",
                    "--vs-env-config", json.dumps({"max_episode_steps": 100}), log=tmp_path / "run.sqlite")
    assert plan.paths == ["faithful", "faithful@vs-env"]
    d = diagnose_plan(plan)
    assert len(d.batch["faithful@vs-env"]) == 2
    top = d.findings[0]
    assert top.cause == "the env's time limit differs between paths" and top.step == 100
    assert "time limit: faithful: 200; faithful@vs-env: 100" in top.evidence and len(d.findings) == 1


def test_vs_vecenv_runs_the_rsl_rl_policy_on_a_vecenv_factory_as_its_own_path(tmp_path):
    """rsl_rl's Gymnasium PointGoal against the same task as a torch VecEnv factory (`--vs-vecenv`), which seeds
    its worlds itself: the doctor names the second sim as what parts, at step 0, from its observations."""
    from tui_eval.demos import demo_checkpoint

    plan = plan_for(demo_checkpoint("rsl_rl"), "--episodes", "2", "--vs-vecenv", "tests.support.rsl:make_vecenv",
                    log=tmp_path / "run.sqlite")
    assert plan.paths == ["jit", "jit@vs-env"]
    d = diagnose_plan(plan)
    assert len(d.batch["jit@vs-env"]) == 2
    top = d.findings[0]
    assert top.cause.startswith("the second env (--vs-env / --vs-vecenv) gives other observations on the same seed")
    assert top.step == 0 and top.stage == "obs" and d.replay["pairs"][0]["stage"] == "obs"

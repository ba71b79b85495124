"""Stable-Baselines3 (2.x) models: a `model.save()` zip or an rl-zoo3 run folder. The kind (`kind.py`) reads the
zip (`model_zip.py`) and the run folder (`zoo.py`) offline; its paths (`paths/`) are the model's own `predict()`
behind its VecNormalize and the ONNX export a user deploys. Nothing of SB3 is imported until a path is built."""

from tui_eval.integrations.base import KindDemo, KindPlugin

DEMO = KindDemo("sb3", "demo/logs/sac/Pendulum-v1_1",
                "Stable-Baselines3 SAC on Pendulum-v1 behind VecNormalize (an rl-zoo3 run folder): predict vs SB3's "
                "ONNX recipe, which leaves VecNormalize and the unscaling out (the sb3 extra)")
PLUGIN = KindPlugin(name="sb3", kind="tui_eval.integrations.sb3.kind:Sb3Kind",
                    opens="a Stable-Baselines3 model .zip or an rl-zoo3 run folder",
                    distributions=("stable-baselines3",), order=40, demos=(DEMO,))

"""An offline algorithm (BC, MARWIL, CQL) evaluated without its training dataset.

RLlib builds an `OfflineData` in every Algorithm whose config names an input dataset, and its constructor
reads that dataset with Ray Data (`ray.data.read_parquet`: tens of seconds of Ray Data tasks, and an error
on a machine that does not hold the training files). Only `training_step` samples from it; `evaluate()`,
the evaluation runner and the learner's weights never touch it. The `evaluate` path builds its Algorithm
with this stand-in instead, so an offline checkpoint evaluates like an online one.
"""

from __future__ import annotations

from typing import Any

from ray.rllib.offline.offline_data import OfflineData


class TrainingDataNotRead(OfflineData):
    """RLlib's OfflineData minus the dataset: it keeps what the Algorithm sets on it and refuses to sample."""

    def __init__(self, config: Any):  # noqa: D107  (OfflineData's own constructor would read the dataset)
        self.config = config
        self.path = config.input_
        self.data = None
        self.locality_hints = None
        self.learner_handles = None
        self.module_spec = None
        self.spaces = None

    def sample(self, *args: Any, **kwargs: Any):
        raise RuntimeError("this Algorithm was built for evaluation only: it has not read its training dataset")


def evaluation_only(config):
    """`config` (unfrozen), built to evaluate: an offline config's dataset is not read."""
    config.offline_data(offline_data_class=TrainingDataNotRead)
    return config

"""Libraries' chatter kept off the user's terminal."""

from __future__ import annotations


def quiet_libraries() -> None:
    """Keep ray's and gymnasium's chatter off the user's terminal (errors still come through)."""
    import logging
    import warnings

    warnings.filterwarnings("ignore")
    for name in ("ray", "ray.rllib", "ray.tune", "gymnasium"):
        logging.getLogger(name).setLevel(logging.ERROR)

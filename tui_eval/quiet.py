"""Libraries' chatter kept off the user's terminal."""

from __future__ import annotations


def quiet_libraries() -> None:
    """Keep Ray's, gymnasium's and every kind's library's chatter off the user's terminal (errors still come
    through); a kind names its library's loggers (`KindPlugin.loggers`)."""
    import logging
    import warnings

    from tui_eval.kinds.registry import plugins

    warnings.filterwarnings("ignore")
    for name in ("ray", "gymnasium", *(logger for plugin in plugins() for logger in plugin.loggers)):
        logging.getLogger(name).setLevel(logging.ERROR)

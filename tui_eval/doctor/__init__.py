"""The divergence doctor: why do two inference paths disagree?

`diagnose_plan(plan)` runs a small paired batch to find a seed whose returns differ (or takes the
one given), reads what each path actually uses from its live objects (`static_diff`), replays the
seed on every path step by step (`replay`), and ranks likely causes (`findings`). Headless: nothing
here imports Textual.
"""

from tui_eval.doctor.diagnosis import Diagnosis, diagnose_plan

__all__ = ["Diagnosis", "diagnose_plan"]

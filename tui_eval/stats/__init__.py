"""Statistics of tui-eval: honest while watched.

Per path (`PathStats`): running mean/std (Welford), a fixed-n t interval for the final report, an
anytime-valid confidence sequence for the live view, IQM with a bootstrap interval, success and
invalid rates with Wilson and beta-mixture intervals. Between two paths (`Comparison`): paired-by-seed
differences with an anytime-valid interval and a differ / equivalent / undecided verdict. For a run
(`RunStats`): both, kept apart per (path, explore setting). Return bounds of well-known envs:
`bounds.known_return_bounds`; guards against degenerate data: `guards`, `tail_guard` (without bounds).

Modelled on google-research/rliable: every metric is a short, named, documented pure function with its
reference (`intervals`, `sequences`, `running`); `PathStats` and `Comparison` only keep running sums
and call them. numpy/scipy only.
"""

from .bounds import known_return_bounds, return_bounds_from
from .compare import Comparison, difference_interval, verdict
from .comparison_summary import ComparisonSummary, FirstDifference, ReturnDifference, SeedResult
from .exact_proof import ExactProof
from .guards import (
    anytime_share_upper,
    guarded_asymptotic_cs,
    guarded_asymptotic_cs_from_moments,
    guarded_variance,
    returns_identical,
)
from .intervals import (
    clopper_pearson_interval,
    iqm,
    iqm_bootstrap_ci,
    iqm_fast,
    t_interval,
    t_interval_from_moments,
    welch_interval_from_moments,
    wilson_interval,
)
from .path import PathStats, ReturnBounds, ReturnsSnapshot
from .run_statistics import RunStats
from .running import RunningMoments, welford
from .sequences import (
    PrPlEB,
    asymptotic_cs,
    asymptotic_cs_from_moments,
    best_rho2,
    beta_mixture_cs,
    beta_mixture_cs_scalar,
    beta_mixture_log_martingale,
    gaussian_mixture_half_width,
    normal_mixture_cs,
    normal_mixture_cs_from_mean,
    prpl_eb_cs,
    running_intersection,
)
from .tail_guard import tail_guarded_cs, tail_guarded_cs_from_moments

__all__ = [
    "PathStats",
    "ReturnBounds",
    "ReturnsSnapshot",
    "Comparison",
    "ComparisonSummary", "ExactProof",
    "FirstDifference",
    "ReturnDifference",
    "SeedResult",
    "RunStats",
    "known_return_bounds",
    "return_bounds_from",
    "returns_identical",
    "guarded_variance",
    "guarded_asymptotic_cs",
    "guarded_asymptotic_cs_from_moments",
    "tail_guarded_cs",
    "tail_guarded_cs_from_moments",
    "anytime_share_upper",
    "difference_interval",
    "verdict",
    "RunningMoments",
    "welford",
    "t_interval",
    "t_interval_from_moments",
    "welch_interval_from_moments",
    "wilson_interval",
    "clopper_pearson_interval",
    "iqm",
    "iqm_fast",
    "iqm_bootstrap_ci",
    "best_rho2",
    "gaussian_mixture_half_width",
    "asymptotic_cs",
    "asymptotic_cs_from_moments",
    "normal_mixture_cs",
    "normal_mixture_cs_from_mean",
    "prpl_eb_cs",
    "PrPlEB",
    "running_intersection",
    "beta_mixture_log_martingale",
    "beta_mixture_cs",
    "beta_mixture_cs_scalar",
]

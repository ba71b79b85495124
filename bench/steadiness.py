"""How steady this host's speed is right now: one fixed pure-Python work unit, timed back to back.

On a shared host the speed drifts with nothing else running: on the days docs/benchmarks.md describes, a 6 ms unit
took 6.1 to 11.8 ms, and one contender pair's per-round ratios spread from 0.45 to 1.6. No interleaving removes that,
and a ratio's interval narrows only with the rounds a budget buys. So each bench says, before and after it measures
(`common.run_measure`), how far the unit strayed: a reader then knows whether a wide interval is the paths' or the
day's.
"""

from __future__ import annotations

import statistics
import time

UNIT_S = 0.005  # one unit's length: of the order of the pieces a slice's contenders are compared over
UNITS = 120  # 0.6 s in all


def _work(n: int) -> int:
    total = 0
    for i in range(n):
        total += i * i
    return total


_size: list[int] = []  # the unit's iterations, found once: units before and after a bench are the same work


def _unit_size() -> int:
    """Loop iterations that take about UNIT_S here (the fastest of a few tries), found on the first call."""
    if _size:
        return _size[0]
    n = 10_000
    took = min(_timed(n) for _ in range(5))
    _size.append(max(1_000, int(n * UNIT_S / max(took, 1e-6))))
    return _size[0]


def _timed(n: int) -> float:
    started = time.perf_counter()
    _work(n)
    return time.perf_counter() - started


def steadiness(units: int = UNITS) -> tuple[float, float, float]:
    """(the unit's median ms, its 5-95 % range as a share of the median, the interquartile half-width of the ratio
    of two units back to back) over `units` units."""
    n = _unit_size()
    times = [_timed(n) for _ in range(units)]
    median = statistics.median(times)
    ranked = sorted(times)
    spread = (ranked[int(0.95 * (units - 1))] - ranked[int(0.05 * (units - 1))]) / median
    pairs = sorted(b / a for a, b in zip(times, times[1:]))
    quarter = len(pairs) // 4
    adjacent = (pairs[-1 - quarter] - pairs[quarter]) / 2
    return median * 1000, spread, adjacent


def steadiness_line(when: str) -> str:
    median_ms, spread, adjacent = steadiness()
    return (f"host steadiness {when}: a {median_ms:.1f} ms work unit strayed {spread:.0%} of its median (5-95 %) over "
            f"{UNITS} units; two back to back differ by ±{adjacent:.1%} (interquartile)")

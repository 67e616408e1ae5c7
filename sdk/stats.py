"""The one interval the SDK's ``evaluate`` and the leaderboard's tables both give a win rate:
written here, at the SDK's level, so that the leaderboard (above it) imports it and the SDK
(which may not import the leaderboard) has it too."""

from __future__ import annotations

import math

Z95 = 1.959963984540054  #: two-sided 95% normal quantile


def wilson_interval(successes: int, trials: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (95% by default).

    Unlike p +- z sqrt(p(1-p)/n), it stays inside [0, 1] and does not collapse to a point at
    0/n or n/n, which is exactly where a small tournament's win rates sit. No trials: (0, 1),
    we know nothing.
    """
    if trials < 0 or not 0 <= successes <= trials:
        raise ValueError(f"wilson_interval: {successes} successes in {trials} trials")
    if trials == 0:
        return (0.0, 1.0)
    p = successes / trials
    z2 = z * z
    denominator = 1 + z2 / trials
    centre = (p + z2 / (2 * trials)) / denominator
    half = z / denominator * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials))
    return (max(0.0, centre - half), min(1.0, centre + half))

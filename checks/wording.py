"""How checks print numbers from the policy: thresholds keep the precision they were given."""

from __future__ import annotations


def percent(fraction: float) -> str:
    """A policy fraction as a percentage with the digits it has: 0.05 → 5%, 0.005 → 0.5%."""
    return f"{round(fraction * 100, 9):g}%"

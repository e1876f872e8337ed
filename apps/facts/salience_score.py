"""Salience (seed 001, layer 1): importance, boosted by use, decayed by time since last use.

    salience = min(1, importance * (1 + boost * ln(1 + access_count))) * decay ** days

`days` counts from the last access, or from creation for a fact never recalled. Every
constant is a per-agent setting (AgentConfig.salience_*).
"""

import math
from datetime import datetime


def salience(
    *,
    importance: float,
    access_count: int,
    last_used_at: datetime,
    now: datetime,
    decay_per_day: float,
    access_boost: float,
) -> float:
    """The score in [0, 1]; a future `last_used_at` counts as now."""
    days = max(0.0, (now - last_used_at).total_seconds() / 86400.0)
    boosted = min(1.0, importance * (1.0 + access_boost * math.log1p(max(0, access_count))))
    return boosted * (decay_per_day**days)

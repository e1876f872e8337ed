"""Vector helpers for the few comparisons done in Python (an agent's categories)."""

from typing import Any

import numpy as np


def unit(vector: Any) -> np.ndarray:
    """`vector` scaled to length 1 (a zero vector stays zero)."""
    array = np.asarray(vector, dtype=np.float32)
    norm = float(np.linalg.norm(array))
    return array / norm if norm else array

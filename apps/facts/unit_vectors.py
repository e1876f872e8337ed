"""Vector helpers for the few comparisons done in Python (an agent's categories)."""

import numpy as np
from numpy.typing import ArrayLike


def unit(vector: ArrayLike) -> np.ndarray:
    """`vector` scaled to length 1 (a zero vector stays zero)."""
    array = np.asarray(vector, dtype=np.float32)
    norm = float(np.linalg.norm(array))
    return array / norm if norm else array

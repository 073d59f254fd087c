"""Reading device values on the host: what TF keeps in host memory (indices, sizes, shapes) as NumPy arrays."""

from __future__ import annotations

import numpy as np


def to_host(value):
    """A device array as a NumPy array (NumPy values, scalars and None pass through)."""
    if value is None or isinstance(value, np.ndarray | np.generic) or not hasattr(value, "get"):
        return value
    return value.get()

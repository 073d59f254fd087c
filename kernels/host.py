"""Reading device values on the host (what TF keeps in host memory: indices, sizes, shapes) as NumPy arrays, and
waiting for a device's queued work."""

from __future__ import annotations

import numpy as np


def to_host(value):
    """A device array as a NumPy array (NumPy values, scalars and None pass through)."""
    if value is None or isinstance(value, np.ndarray | np.generic) or not hasattr(value, "get"):
        return value
    return value.get()


def queues_work(xp) -> bool:
    """Whether a kernel of array namespace `xp` returns before its work has run (CuPy's, on a GPU's stream)."""
    return hasattr(xp, "cuda")


def synchronize(xp) -> None:
    """Returns once the work this thread queued through `xp` has run (CuPy's current stream; NumPy's has)."""
    if queues_work(xp):
        xp.cuda.get_current_stream().synchronize()

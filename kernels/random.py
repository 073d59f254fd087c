"""Random kernels: stateful, one NumPy generator per op per session, seeded from the op's seed pair.

Values are drawn on the host with NumPy and then moved to the device (`xp.asarray`), so the same
seeds give the same numbers on every device. Floats are drawn in float32 (float64 for float64).
"""

from __future__ import annotations

import numpy as np

from tfnb.framework.errors import InvalidArgumentError
from tfnb.kernels.registry import kernel

_TRUNCATE_AT = 2.0


def _generator(node) -> np.random.Generator:
    """The op's generator; seeds (0, 0) mean nondeterministic, as in TF."""
    seeds = (node.attrs["seed"], node.attrs["seed2"])
    return np.random.default_rng(list(seeds) if any(seeds) else None)


def _draw_dtype(np_dtype) -> np.dtype:
    return np.dtype(np.float64) if np_dtype == np.float64 else np.dtype(np.float32)


def _dims(shape) -> tuple:
    return tuple(int(d) for d in shape.tolist())


@kernel("RandomStandardNormal", fresh_output=True)
def random_standard_normal(node):
    rng, xp, out = _generator(node), node.xp, node.output_dtypes[0]
    draw = _draw_dtype(out)
    return lambda shape: xp.asarray(rng.standard_normal(_dims(shape), dtype=draw).astype(out, copy=False))


@kernel("TruncatedNormal", fresh_output=True)
def truncated_normal(node):
    rng, xp, out = _generator(node), node.xp, node.output_dtypes[0]
    draw = _draw_dtype(out)

    def run(shape):
        values = rng.standard_normal(_dims(shape), dtype=draw)
        flat = values.reshape(-1)
        redraw = np.flatnonzero(np.abs(flat) >= _TRUNCATE_AT)
        while redraw.size:
            flat[redraw] = rng.standard_normal(redraw.size, dtype=draw)
            redraw = redraw[np.abs(flat[redraw]) >= _TRUNCATE_AT]
        return xp.asarray(values.astype(out, copy=False))

    return run


@kernel("RandomUniform", fresh_output=True)
def random_uniform(node):
    rng, xp, out = _generator(node), node.xp, node.output_dtypes[0]
    if out == np.float16:
        # 10 random bits, exactly representable in float16: a float32 draw could round up to 1.0.
        return lambda shape: xp.asarray((rng.integers(0, 1024, _dims(shape)) / 1024).astype(out))
    draw = _draw_dtype(out)
    return lambda shape: xp.asarray(rng.random(_dims(shape), dtype=draw))


@kernel("RandomUniformInt", fresh_output=True)
def random_uniform_int(node):
    rng, xp, out = _generator(node), node.xp, node.output_dtypes[0]

    def run(shape, minval, maxval):
        low, high = int(minval), int(maxval)
        if low >= high:
            raise InvalidArgumentError(None, None, f"Need minval < maxval, got {low} >= {high}")
        return xp.asarray(rng.integers(low, high, _dims(shape), dtype=out))

    return run

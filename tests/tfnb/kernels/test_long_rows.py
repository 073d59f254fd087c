"""ReLU and per-channel additions over long rows (kernels/long_rows.py): bit for bit NumPy's broadcast results."""

import numpy as np
import pytest

from tfnb.kernels import long_rows

# Sizes below, at and past a row, with and without a shorter last row; channel counts that do and do not divide one.
SHAPES = [(), (5,), (3, 7), (long_rows.ROW,), (2, long_rows.ROW + 3), (4, 32, 32, 32), (2, 7, 7, 832),
          (3, 9, 11, 5), (64, 1000)]
SPECIAL = np.array([-0.0, 0.0, np.nan, -np.nan, -1.5, 2.5, np.inf, -np.inf, 1e-45, -1e-45])


def _values(shape, dtype):
    rng = np.random.default_rng(len(shape))
    values = rng.standard_normal(shape).astype(dtype)
    flat = values.reshape(-1)
    flat[:SPECIAL.size] = SPECIAL[:flat.size].astype(dtype)
    return values


def _same_bits(a, b):
    assert a.shape == b.shape and a.dtype == b.dtype
    assert a.tobytes() == b.tobytes()


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_relu_matches_maximum_with_zero(shape, dtype):
    x = _values(shape, dtype)
    expected = np.maximum(x, x.dtype.type(0))
    _same_bits(long_rows.relu_into(np, x, np.empty_like(x)), expected)
    in_place = x.copy()
    assert long_rows.relu_into(np, in_place, in_place) is in_place
    _same_bits(in_place, expected)


def test_relu_of_integers_and_of_strided_views():
    ints = np.arange(-20_000, 20_000, dtype=np.int32).reshape(40, 1000)
    _same_bits(long_rows.relu_into(np, ints, np.empty_like(ints)), np.maximum(ints, 0))
    view = _values((64, 300), np.float32)[:, ::3]  # not contiguous: NumPy's own loop
    _same_bits(long_rows.relu_into(np, view, np.empty_like(view)), np.maximum(view, np.float32(0)))


@pytest.mark.parametrize("shape", [s for s in SHAPES if s and s[-1] > 1] + [(64, 32, 32, 3), (2, 28, 28, 64)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_channel_addition_matches_the_broadcast(shape, dtype):
    values = _values(shape, dtype)
    bias = _values((shape[-1],), dtype)[::-1].copy()
    with np.errstate(invalid="ignore"):  # inf + -inf
        expected = values + bias
        _same_bits(long_rows.add_channels_into(np, values, bias, np.empty_like(values)), expected)
        long_rows.add_channels_into(np, values, bias, values)
    _same_bits(values, expected)


def test_channel_addition_of_a_transposed_array():
    values = _values((32, 32, 64, 16), np.float32).transpose(3, 1, 0, 2)  # 64 channels, not contiguous
    bias = _values((64,), np.float32)
    _same_bits(long_rows.add_channels_into(np, values, bias, np.empty(values.shape, np.float32)), values + bias)

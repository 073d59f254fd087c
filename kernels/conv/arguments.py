"""Argument checks shared by the convolution and pooling kernels, with TF's error messages, and their compute dtype."""

from __future__ import annotations

from typing import NoReturn

import numpy as np

from tfnb.framework.common_shapes import Geometry, geometry_from_attrs, pool_geometry
from tfnb.framework.errors import InvalidArgumentError


def fail(message: str) -> NoReturn:
    """Raises InvalidArgumentError (the executor names the op)."""
    raise InvalidArgumentError(None, None, message)


def check_rank4(**arrays) -> None:
    """Fails unless every array given by name is 4-dimensional."""
    for what, array in arrays.items():
        if array.ndim != 4:
            fail(f"{what} must be 4-dimensional: {list(array.shape)}")


def size_vector(array) -> tuple:
    """A 4-element sizes input (input_sizes, filter_sizes, orig_input_shape) as a tuple of ints."""
    sizes = tuple(map(int, array.reshape(-1).tolist()))
    if len(sizes) != 4:
        fail(f"sizes must be a 4-element vector, got {list(sizes)}")
    return sizes


def compute_dtype(np_dtype) -> np.dtype:
    """The dtype the arithmetic runs in: float32 for float16, else the op's dtype."""
    # float16 products lose too many digits: compute in float32 and round once at the end.
    return np.dtype(np.float32) if np_dtype == np.float16 else np.dtype(np_dtype)


def geometry_or_fail(attrs: dict, in_hw, filter_hw) -> Geometry:
    """A convolution's geometry from its attrs and sizes; InvalidArgumentError where they do not fit."""
    try:
        return geometry_from_attrs(attrs, in_hw, filter_hw)
    except ValueError as error:
        raise InvalidArgumentError(None, None, str(error)) from None


def pool_geometry_or_fail(attrs: dict, shape: tuple) -> Geometry:
    """A pooling's geometry from its attrs and input shape; InvalidArgumentError where they do not fit."""
    if len(shape) != 4:
        fail(f"input must be 4-dimensional: {list(shape)}")
    try:
        return pool_geometry(attrs, shape[1:3])
    except ValueError as error:
        raise InvalidArgumentError(None, None, str(error)) from None

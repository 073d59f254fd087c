"""Shape arithmetic that shape inference and kernels share, computed as TF computes it.

Static shape rules (tfnb/ops) and kernels (tfnb.kernels) both need a convolution's output size and
padding, a strided slice's index, a range's length; as TF keeps such functions beside its framework,
they live here, below both.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from tfnb.framework.errors import InvalidArgumentError


def _invalid(message: str):
    raise InvalidArgumentError(None, None, message)


# -- convolution and pooling windows --------------------------------------------------------------


@dataclass(frozen=True)
class Axis:
    """One spatial axis of a convolution or pooling window, in TF's arithmetic.

    Input element h sits at position `pad + h` of a zero-padded canvas; output i reads the canvas
    at `i * stride + tap * dilation` for each tap.
    """

    size: int
    taps: int
    stride: int
    dilation: int
    pad: int
    out: int

    @property
    def canvas(self) -> int:
        """Extent of the padded input that the outputs read."""
        return (self.out - 1) * self.stride + (self.taps - 1) * self.dilation + 1 if self.out else 0

    def input_positions(self) -> np.ndarray:
        return self.pad + np.arange(self.size)

    def output_positions(self) -> np.ndarray:
        return self.stride * np.arange(self.out)

    def tap_positions(self) -> np.ndarray:
        return self.dilation * np.arange(self.taps)

    def is_tiling(self) -> bool:
        """Windows that neither overlap nor reach into padding (pooling's common case)."""
        return self.taps == self.stride and self.dilation == 1 and self.pad == 0 and self.canvas <= self.size


def conv_axis(size: int, taps: int, stride: int, dilation: int, padding: str, explicit=(0, 0)) -> Axis:
    """TF's output size and leading padding for one axis; ValueError when the output would be negative."""
    reach = (taps - 1) * dilation + 1
    if padding == "SAME":
        out = -(-size // stride)
        pad = max((out - 1) * stride + reach - size, 0) // 2
    else:
        pad, after = explicit if padding == "EXPLICIT" else (0, 0)
        out = math.trunc((size + pad + after - reach + stride) / stride)
        if out < 0:
            raise ValueError(f"Computed output size would be negative: {out} [input_size: {size}, "
                             f"effective_filter_size: {reach}, stride: {stride}]")
    return Axis(size, taps, stride, dilation, pad, out)


@dataclass(frozen=True)
class Geometry:
    """The two spatial axes (height, width) of a convolution."""

    h: Axis
    w: Axis


def geometry_from_attrs(attrs: dict, in_hw, filter_hw) -> Geometry:
    """The convolution geometry that an op's attrs give for input and filter sizes (height, width)."""
    explicit = attrs.get("explicit_paddings") or [0] * 8
    strides, dilations = attrs["strides"], attrs.get("dilations", [1, 1, 1, 1])
    return Geometry(*(conv_axis(in_hw[i], filter_hw[i], strides[i + 1], dilations[i + 1], attrs["padding"],
                                explicit[2 * i + 2:2 * i + 4]) for i in range(2)))


def pool_geometry(attrs: dict, in_hw) -> Geometry:
    """The window geometry of a pooling op: its ksize as filter taps, no dilation."""
    ksize, strides = attrs["ksize"], attrs["strides"]
    return Geometry(*(conv_axis(in_hw[i], ksize[i + 1], strides[i + 1], 1, attrs["padding"]) for i in range(2)))


# -- slices and ranges ----------------------------------------------------------------------------


def strided_slice_index(attrs: dict):
    """A function (begin, end, strides) -> the NumPy index tuple that is TF's strided slice with these masks.

    NumPy canonicalizes slice bounds as TF does (negatives count from the end, then clamp), so raw
    bounds go into Python slices; a trailing Ellipsis (TF's implicit one) keeps 0-d results arrays.
    """
    begin_mask, end_mask = attrs["begin_mask"], attrs["end_mask"]
    ellipsis_mask, new_axis_mask, shrink_mask = attrs["ellipsis_mask"], attrs["new_axis_mask"], attrs["shrink_axis_mask"]
    if ellipsis_mask & (ellipsis_mask - 1):
        raise ValueError("Multiple ellipses in slice spec not allowed")

    def index(begin, end, strides) -> tuple:
        items = []
        for i, (b, e, s) in enumerate(zip(begin, end, strides)):
            bit = 1 << i
            if ellipsis_mask & bit:
                items.append(Ellipsis)
            elif new_axis_mask & bit:
                items.append(None)
            elif shrink_mask & bit:
                if s <= 0:
                    _invalid("only stride 1 allowed on non-range indexing.")
                items.append(b)
            else:
                items.append(slice(None if begin_mask & bit else b, None if end_mask & bit else e, s))
        if not ellipsis_mask & ((1 << len(items)) - 1):
            items.append(Ellipsis)
        return tuple(items)

    return index


def range_length(start, limit, delta) -> int:
    """How many values tf.range(start, limit, delta) has, computed as TF does (in the values' own type)."""
    if delta == 0:
        _invalid("Requires delta != 0")
    if (delta > 0 and start > limit) or (delta < 0 and start < limit):
        _invalid(f"Requires start {'<=' if delta > 0 else '>='} limit when delta {'>' if delta > 0 else '<'} 0: "
              f"{start}/{limit}")
    if isinstance(start + limit + delta, (int, np.integer)):
        return int((abs(limit - start) + abs(delta) - 1) // abs(delta))
    return int(np.ceil(np.abs((limit - start) / delta)))

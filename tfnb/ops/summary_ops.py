"""Summary ops: ScalarSummary, HistogramSummary and MergeSummary, each giving a serialized `Summary` protocol buffer.

tf.summary (tfnb/summary.py) builds them with TF1's tags and collections; their kernels serialize the
values each step (kernels/summary.py).
"""

from __future__ import annotations

import numpy as np

from tfnb.framework import dtypes
from tfnb.framework.graph import get_default_graph
from tfnb.framework.op_registry import Example, not_differentiable, register_op
from tfnb.framework.tensor import Tensor
from tfnb.framework.tensor_shape import TensorShape
from tfnb.ops.array.reshaping import reshape
from tfnb.ops.constant_op import convert_to_tensor

_SCALAR = TensorShape([])


def scalar_summary(tags, values, name: str | None = None) -> Tensor:
    """A Summary with one simple value per tag: a scalar string tensor (TF's ScalarSummary)."""
    inputs = [convert_to_tensor(tags, name="tags"), convert_to_tensor(values)]
    return get_default_graph().create_op("ScalarSummary", inputs, None, name).outputs[0]


def histogram_summary(tag, values, name: str | None = None) -> Tensor:
    """A Summary with the histogram of `values` under `tag`: a scalar string tensor (TF's HistogramSummary)."""
    inputs = [convert_to_tensor(tag, name="tag"), convert_to_tensor(values)]
    return get_default_graph().create_op("HistogramSummary", inputs, None, name).outputs[0]


def merge_summary(inputs, name: str | None = None) -> Tensor:
    """One Summary holding the values of all `inputs` (string tensors of Summaries) (TF's MergeSummary)."""
    inputs = [convert_to_tensor(s) for s in inputs]
    return get_default_graph().create_op("MergeSummary", inputs, None, name).outputs[0]


def _infer_scalar_summary(op):
    tags, values = op.inputs
    if tags.dtype is not dtypes.string:
        raise TypeError(f"ScalarSummary tags must be string, got {tags.dtype.name}")
    if values.dtype not in dtypes.REAL:
        raise TypeError(f"ScalarSummary values must be a real number type, got {values.dtype.name}")
    if not tags.shape.is_compatible_with(values.shape):
        raise ValueError(f"tags and values not the same shape: {tags.shape} != {values.shape}")
    return [(dtypes.string, _SCALAR)]


def _infer_histogram_summary(op):
    tag, values = op.inputs
    if tag.dtype is not dtypes.string or not tag.shape.is_compatible_with(_SCALAR):
        raise ValueError(f"HistogramSummary tag must be a scalar string, got {tag.dtype.name} {tag.shape}")
    if values.dtype not in dtypes.REAL:
        raise TypeError(f"HistogramSummary values must be a real number type, got {values.dtype.name}")
    return [(dtypes.string, _SCALAR)]


def _infer_merge_summary(op):
    if not op.inputs:
        raise ValueError("MergeSummary needs at least one input")
    for tensor in op.inputs:
        if tensor.dtype is not dtypes.string:
            raise TypeError(f"MergeSummary inputs must be string, got {tensor.dtype.name}")
    return [(dtypes.string, _SCALAR)]


def _one(summary: Tensor) -> Tensor:
    # A fetched 0-d string is bytes, which the generic op test cannot check as tf.string; a 1-vector it can.
    return reshape(summary, [1])


def _expected(hex_text: str) -> np.ndarray:
    """The serialized Summary in `hex_text` as a string vector of one (what `_one` makes of it)."""
    return np.array([bytes.fromhex(hex_text)], dtype=object)


_LOSS_TAG = np.array(b"loss", dtype=object)
_W_TAG = np.array(b"w", dtype=object)
_W_VALUES = np.array([1.0, 2.0, 2.0, -0.5, 0.0], np.float32)
# Serialized by TensorFlow 2.21's tf.compat.v1.summary ops for the same inputs.
_LOSS_HALF = "0a0b0a046c6f7373150000003f"
_W_HISTOGRAM = (
    "0ac7010a01772ac10109000000000000e0bf1100000000000000401900000000000014402100000000000012402900000000"
    "008022403248b03125ee8091e0bffae55a25d31fdebf000000000000000011ea2d819997713d08996919155aed3f2b14facd"
    "be24f03fdc94cd2e8d75ff3fe011f10c744d0140ffffffffffffef7f3a480000000000000000000000000000f03f00000000"
    "00000000000000000000f03f0000000000000000000000000000f03f000000000000000000000000000000400000000000000000")

register_op("ScalarSummary", _infer_scalar_summary, dtypes=dtypes.REAL, examples=[
    Example(lambda tag, x: _one(scalar_summary(tag, x, "loss")), lambda tag, x: _expected(_LOSS_HALF),
            inputs=(_LOSS_TAG, np.array(0.5, np.float32)), dtypes=(dtypes.float32,), differentiable=False),
    Example(lambda tag, x: _one(scalar_summary(tag, x, "loss")), lambda tag, x: _expected(_LOSS_HALF),
            inputs=(_LOSS_TAG, np.array(0.5, np.float64)), dtypes=(dtypes.float64,), differentiable=False),
])
register_op("HistogramSummary", _infer_histogram_summary, dtypes=dtypes.REAL, examples=[
    Example(lambda tag, x: _one(histogram_summary(tag, x, "w")), lambda tag, x: _expected(_W_HISTOGRAM),
            inputs=(_W_TAG, _W_VALUES), dtypes=(dtypes.float32,), differentiable=False),
])
register_op("MergeSummary", _infer_merge_summary, dtypes=(dtypes.string,), examples=[
    Example(lambda a, b: _one(merge_summary([a, b], "merged")),
            lambda a, b: _expected(_LOSS_HALF + _W_HISTOGRAM),
            inputs=(np.array(bytes.fromhex(_LOSS_HALF), dtype=object),
                    np.array(bytes.fromhex(_W_HISTOGRAM), dtype=object)),
            differentiable=False),
])
not_differentiable("ScalarSummary", "HistogramSummary", "MergeSummary")

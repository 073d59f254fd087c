"""Comparisons (Equal, Less, ...) and logic (LogicalAnd, LogicalOr, LogicalNot): bool results, no gradients."""

from __future__ import annotations

import numpy as np

from tfnb.framework import dtypes
from tfnb.framework.op_registry import Example, not_differentiable, register_op
from tfnb.framework.tensor import Tensor
from tfnb.ops.inference import binary, elementwise
from tfnb.ops.math.cast import cast
from tfnb.ops.math.operands import binary_op, broadcast_examples, unary_op


def _comparison(op):
    return binary(op, dtypes.bool_)


def _equality_examples(build, reference) -> list[Example]:
    """Random operands, and fixed ones with some equal elements in every dtype."""
    return [*broadcast_examples(build, reference, low=-1, high=1, differentiable=False),
            Example(lambda x, y, dtype: build(cast(x, dtype), cast(y, dtype)),
                    lambda x, y, dtype: reference(x.astype(dtype.np_dtype), y.astype(dtype.np_dtype)),
                    inputs=(np.array([0, 1, 2, 3], np.int32), np.array([0, 0, 2, 1], np.int32)),
                    dtypes=dtypes.ARRAY, differentiable=False)]


register_op("Equal", _comparison, dtypes=dtypes.ARRAY + (dtypes.string,),
            examples=_equality_examples(lambda x, y: equal(x, y), np.equal))
register_op("NotEqual", _comparison, dtypes=dtypes.ARRAY + (dtypes.string,),
            examples=_equality_examples(lambda x, y: not_equal(x, y), np.not_equal))
register_op("Less", _comparison, dtypes=dtypes.REAL, examples=broadcast_examples(
    lambda x, y: less(x, y), np.less, low=-1, high=1, differentiable=False))
register_op("LessEqual", _comparison, dtypes=dtypes.REAL, examples=broadcast_examples(
    lambda x, y: less_equal(x, y), np.less_equal, low=-1, high=1, differentiable=False))
register_op("Greater", _comparison, dtypes=dtypes.REAL, examples=broadcast_examples(
    lambda x, y: greater(x, y), np.greater, low=-1, high=1, differentiable=False))
register_op("GreaterEqual", _comparison, dtypes=dtypes.REAL, examples=broadcast_examples(
    lambda x, y: greater_equal(x, y), np.greater_equal, low=-1, high=1, differentiable=False))
register_op("LogicalAnd", binary, dtypes=(dtypes.bool_,), examples=[
    *broadcast_examples(lambda x, y: logical_and(x, y), np.logical_and, differentiable=False),
    Example(lambda x, y: logical_xor(x, y), np.logical_xor, inputs=((2, 3), (3,)), differentiable=False),
])
register_op("LogicalOr", binary, dtypes=(dtypes.bool_,),
            examples=broadcast_examples(lambda x, y: logical_or(x, y), np.logical_or, differentiable=False))
register_op("LogicalNot", elementwise(), dtypes=(dtypes.bool_,), examples=[
    Example(lambda x: logical_not(x), np.logical_not, inputs=((2, 3),), differentiable=False)])
not_differentiable("Equal", "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual", "LogicalAnd", "LogicalOr",
                   "LogicalNot")


def equal(x, y, name: str | None = None) -> Tensor:
    """x == y elementwise, as a bool tensor (the `==` operator compares identity, as in TF1)."""
    return binary_op("Equal", x, y, name)


def not_equal(x, y, name: str | None = None) -> Tensor:
    """x != y elementwise, as a bool tensor."""
    return binary_op("NotEqual", x, y, name)


def less(x, y, name: str | None = None) -> Tensor:
    """x < y elementwise, as a bool tensor."""
    return binary_op("Less", x, y, name)


def less_equal(x, y, name: str | None = None) -> Tensor:
    """x <= y elementwise, as a bool tensor."""
    return binary_op("LessEqual", x, y, name)


def greater(x, y, name: str | None = None) -> Tensor:
    """x > y elementwise, as a bool tensor."""
    return binary_op("Greater", x, y, name)


def greater_equal(x, y, name: str | None = None) -> Tensor:
    """x >= y elementwise, as a bool tensor."""
    return binary_op("GreaterEqual", x, y, name)


def logical_and(x, y, name: str | None = None) -> Tensor:
    """x AND y elementwise, for bool tensors."""
    return binary_op("LogicalAnd", x, y, name)


def logical_or(x, y, name: str | None = None) -> Tensor:
    """x OR y elementwise, for bool tensors."""
    return binary_op("LogicalOr", x, y, name)


def logical_xor(x, y, name: str = "LogicalXor") -> Tensor:
    """x XOR y elementwise, for bool tensors; built as (x OR y) AND NOT (x AND y), as TF1 does."""
    return logical_and(logical_or(x, y), logical_not(logical_and(x, y)), name=name)


def logical_not(x, name: str | None = None) -> Tensor:
    """NOT x elementwise, for bool tensors."""
    return unary_op("LogicalNot", x, name)

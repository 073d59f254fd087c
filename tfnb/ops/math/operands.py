"""What the math ops share: dtype groups, turning operands into tensors, creating the op, and example cases.

As in TF, a Python or NumPy operand takes the dtype of the tensor operand (`x * 2` keeps x's dtype).
"""

from __future__ import annotations

from tfnb.framework import dtypes
from tfnb.framework.graph import get_default_graph
from tfnb.framework.op_registry import Example
from tfnb.framework.tensor import Tensor
from tfnb.ops.constant_op import convert_to_tensor

SIGNED = (dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64)
INEXACT = dtypes.FLOATS + dtypes.COMPLEX
SIGNED_NUMERIC = SIGNED + INEXACT
MATMUL = dtypes.FLOATS + (dtypes.int32, dtypes.int64) + dtypes.COMPLEX


def create(op_type: str, inputs, attrs: dict | None = None, name: str | None = None) -> Tensor:
    """The (first) output of a new op in the default graph."""
    return get_default_graph().create_op(op_type, inputs, attrs, name).outputs[0]


def _is_tensor_like(value) -> bool:
    return isinstance(value, Tensor) or hasattr(value, "_as_graph_element")


def to_tensor(value, dtype: dtypes.DType | None = None) -> Tensor:
    """`value` as a tensor: a Python or NumPy value takes `dtype`; a tensor keeps its own (the op checks it)."""
    return convert_to_tensor(value, dtype=None if _is_tensor_like(value) else dtype)


def convert_pair(x, y) -> tuple[Tensor, Tensor]:
    """Both operands as tensors; a Python or NumPy operand takes the dtype of the tensor operand, as in TF."""
    if _is_tensor_like(y) and not _is_tensor_like(x):
        y = convert_to_tensor(y)
        return convert_to_tensor(x, dtype=y.dtype), y
    x = convert_to_tensor(x)
    return x, to_tensor(y, x.dtype)


def binary_op(op_type: str, x, y, name: str | None) -> Tensor:
    """An elementwise binary op on two operands (see `convert_pair`)."""
    return create(op_type, convert_pair(x, y), None, name)


def unary_op(op_type: str, x, name: str | None) -> Tensor:
    """An elementwise unary op on one operand."""
    return create(op_type, (convert_to_tensor(x),), None, name)


def broadcast_examples(build, reference, **options) -> list[Example]:
    """Binary cases: a row broadcast against a matrix, a scalar against a matrix, a column against a row."""
    return [Example(build, reference, inputs=((2, 3), (3,)), **options),
            Example(build, reference, inputs=((), (2, 2)), **options),
            Example(build, reference, inputs=((2, 1), (3,)), **options)]

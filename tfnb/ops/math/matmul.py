"""Matrix products: MatMul, and BatchMatMulV2 for batches of matrices (its batch dims broadcast)."""

from __future__ import annotations

import numpy as np

from tfnb.framework.op_registry import Example, register_gradient, register_op
from tfnb.framework.tensor import Tensor
from tfnb.framework.tensor_shape import TensorShape, unknown_shape
from tfnb.ops.broadcast_grad import sum_to_inputs
from tfnb.ops.inference import broadcast_shapes, check_dtype_in, check_same_dtype, elements_for_cost
from tfnb.ops.math.operands import MATMUL, convert_pair, create
from tfnb.ops.math.unary import conj


def _contracted(a_dims: tuple, b_dims: tuple, swap_a: bool, swap_b: bool) -> tuple:
    """(m, n) of a product of the last two dims of a and b, after checking their inner dims agree."""
    m, k = (a_dims[-1], a_dims[-2]) if swap_a else (a_dims[-2], a_dims[-1])
    k2, n = (b_dims[-1], b_dims[-2]) if swap_b else (b_dims[-2], b_dims[-1])
    if k is not None and k2 is not None and k != k2:
        raise ValueError(f"Dimensions must be equal, but are {k} and {k2}")
    return m, n


def _infer_matmul(op):
    a, b = op.inputs
    dtype = check_same_dtype(op)
    check_dtype_in(op, dtype, op.op_def.dtypes)
    a_dims, b_dims = a.shape.with_rank(2).as_tuple(), b.shape.with_rank(2).as_tuple()
    return [(dtype, TensorShape(_contracted(a_dims, b_dims, op.attrs["transpose_a"], op.attrs["transpose_b"])))]


def _infer_batch_matmul(op):
    a, b = op.inputs
    dtype = check_same_dtype(op)
    check_dtype_in(op, dtype, op.op_def.dtypes)
    for shape in (a.shape, b.shape):
        if shape.ndims is not None and shape.ndims < 2:
            raise ValueError(f"Shape must be at least rank 2 but is rank {shape.ndims}")
    if a.shape.ndims is None or b.shape.ndims is None:
        return [(dtype, unknown_shape())]
    batch = broadcast_shapes(a.shape[:-2], b.shape[:-2])
    matrix = _contracted(a.shape.as_tuple(), b.shape.as_tuple(), op.attrs["adj_x"], op.attrs["adj_y"])
    return [(dtype, batch.concatenate(matrix))]


def _matmul_cost(op) -> float:
    """2·m·n·k: the output's elements (batch · m · n) times twice the contracted dimension k."""
    dims = op.inputs[0].shape.as_tuple()
    swapped = op.attrs.get("transpose_a", False) or op.attrs.get("adj_x", False)
    k = (dims[-2] if swapped else dims[-1]) if dims else None
    return 2.0 * elements_for_cost(op.outputs[0].shape) * (k or 1)


def _np_adjoint(m):
    return np.conj(np.swapaxes(m, -1, -2))


register_op("MatMul", _infer_matmul, dtypes=MATMUL, cost=_matmul_cost, examples=[
    Example(lambda a, b: matmul(a, b), np.matmul, inputs=((2, 3), (3, 4))),
    Example(lambda a, b: matmul(a, b, transpose_a=True), lambda a, b: a.T @ b, inputs=((3, 2), (3, 4))),
    Example(lambda a, b: matmul(a, b, transpose_b=True), lambda a, b: a @ b.T, inputs=((2, 3), (4, 3))),
    Example(lambda a, b: matmul(a, b, adjoint_a=True, adjoint_b=True),
            lambda a, b: _np_adjoint(a) @ _np_adjoint(b), inputs=((3, 2), (4, 3))),
], attrs={"transpose_a": "bool", "transpose_b": "bool"})


@register_gradient("MatMul")
def _mat_mul_grad(op, grad):
    """For a @ b: grad @ b^T to a and a^T @ grad to b, transposed as the op's flags require (as in TF)."""
    a, b = (conj(t) for t in op.inputs)
    transpose_a, transpose_b = op.attrs["transpose_a"], op.attrs["transpose_b"]
    if not transpose_a and not transpose_b:
        return [matmul(grad, b, transpose_b=True), matmul(a, grad, transpose_a=True)]
    if not transpose_a:
        return [matmul(grad, b), matmul(grad, a, transpose_a=True)]
    if not transpose_b:
        return [matmul(b, grad, transpose_b=True), matmul(a, grad)]
    return [matmul(b, grad, transpose_a=True, transpose_b=True), matmul(grad, a, transpose_a=True, transpose_b=True)]


register_op("BatchMatMulV2", _infer_batch_matmul, dtypes=MATMUL, cost=_matmul_cost, examples=[
    Example(lambda a, b: matmul(a, b), np.matmul, inputs=((2, 2, 3), (2, 3, 4))),
    Example(lambda a, b: matmul(a, b), np.matmul, inputs=((2, 1, 2, 3), (3, 3, 4))),
    Example(lambda a, b: matmul(a, b, transpose_a=True, adjoint_b=True),
            lambda a, b: np.swapaxes(a, -1, -2) @ _np_adjoint(b), inputs=((2, 3, 2), (4, 3))),
    Example(lambda a, b: a @ b, np.matmul, inputs=((3, 2), (2, 2, 1))),
    Example(lambda a, b: matmul(a, b, adjoint_a=True), lambda a, b: _np_adjoint(a) @ b, inputs=((1, 3, 2), (2, 3, 4))),
], attrs={"adj_x": "bool", "adj_y": "bool"})



@register_gradient("BatchMatMulV2")
def _batch_mat_mul_grad(op, grad):
    """As MatMul's with adjoints, each summed over the batch dims along which its input was broadcast."""
    x, y = op.inputs
    adj_x, adj_y = op.attrs["adj_x"], op.attrs["adj_y"]
    if not adj_x and not adj_y:
        return sum_to_inputs(op, matmul(grad, y, adjoint_b=True), matmul(x, grad, adjoint_a=True))
    if not adj_x:
        return sum_to_inputs(op, matmul(grad, y), matmul(grad, x, adjoint_a=True))
    if not adj_y:
        return sum_to_inputs(op, matmul(y, grad, adjoint_b=True), matmul(x, grad))
    return sum_to_inputs(op, matmul(y, grad, adjoint_a=True, adjoint_b=True),
                          matmul(grad, x, adjoint_a=True, adjoint_b=True))


def matmul(a, b, transpose_a: bool = False, transpose_b: bool = False, adjoint_a: bool = False,
           adjoint_b: bool = False, a_is_sparse: bool = False, b_is_sparse: bool = False,
           name: str | None = None) -> Tensor:
    """The matrix product a @ b, optionally transposed or adjoint; rank > 2 multiplies batches (batch dims broadcast).

    a_is_sparse and b_is_sparse are accepted and ignored: tfnb has one dense kernel.
    """
    if transpose_a and adjoint_a:
        raise ValueError("Only one of transpose_a and adjoint_a can be True.")
    if transpose_b and adjoint_b:
        raise ValueError("Only one of transpose_b and adjoint_b can be True.")
    a, b = convert_pair(a, b)
    swap_a, swap_b = transpose_a or adjoint_a, transpose_b or adjoint_b
    ranks = (a.shape.ndims, b.shape.ndims)
    if None in ranks or max(ranks) > 2:
        # BatchMatMulV2 only has adjoint flags: a transpose is the adjoint of the conjugate (conj of reals is x).
        a, b = conj(a) if transpose_a else a, conj(b) if transpose_b else b
        return create("BatchMatMulV2", (a, b), {"adj_x": swap_a, "adj_y": swap_b}, name or "MatMul")
    # MatMul only has transpose flags: an adjoint is the transpose of the conjugate.
    a, b = conj(a) if adjoint_a else a, conj(b) if adjoint_b else b
    return create("MatMul", (a, b), {"transpose_a": swap_a, "transpose_b": swap_b}, name)

"""Tensor contractions: tensordot (built from transpose, reshape and matmul, as TF does) and einsum."""

from __future__ import annotations

import math
import re
import string

import numpy as np

from tfnb.framework import dtypes
from tfnb.framework.graph import get_default_graph, name_scope
from tfnb.framework.op_registry import Example, register_gradient, register_op
from tfnb.framework.tensor import Tensor
from tfnb.framework.tensor_shape import TensorShape, unknown_shape
from tfnb.ops import array_ops, math_ops
from tfnb.ops.array.joining import size_along
from tfnb.ops.broadcast_grad import sum_to_shape_of
from tfnb.ops.constant_op import convert_to_tensor
from tfnb.ops.inference import broadcast_shapes, check_dtype_in, check_same_dtype, normalize_axis

__all__ = ["tensordot", "einsum"]

_CONTRACTED = dtypes.FLOATS + (dtypes.int32, dtypes.int64) + dtypes.COMPLEX
_ELLIPSIS = "..."


# -- tensordot ------------------------------------------------------------------------------------


def _contraction_axes(a: Tensor, b: Tensor, axes) -> tuple[list[int], list[int]]:
    """The axes of a and of b to contract, as lists of ints, from an int or a pair of lists."""
    if isinstance(axes, (int, np.integer)):
        if axes < 0:
            raise ValueError("'axes' must be at least 0.")
        rank = a.shape.ndims
        if rank is None or b.shape.ndims is None:
            raise ValueError("tfnb's tensordot with an int 'axes' needs a and b of known rank")
        if axes > rank:
            raise ValueError(f"'axes' must not be larger than the number of dimensions of tensor {a}. "
                             f"Received {axes}, vs tensor dimensions {rank}.")
        return list(range(rank - axes, rank)), list(range(axes))
    if isinstance(axes, Tensor) or len(axes) != 2:
        raise ValueError("'axes' must be an integer or a pair of lists of ints (tfnb takes no axes tensor).")
    a_axes, b_axes = ([int(i)] if isinstance(i, (int, np.integer)) else [int(j) for j in i] for i in axes)
    if len(a_axes) != len(b_axes):
        raise ValueError(f"Different number of contraction axes 'a' and 'b', {len(a_axes)} != {len(b_axes)}.")
    return a_axes, b_axes


def _as_matrix(x: Tensor, axes: list[int], contracted_first: bool) -> tuple[Tensor, list]:
    """x as a matrix (free dims by contracted dims, or the other way round), and its free dims (ints or tensors)."""
    rank = x.shape.ndims
    if rank is None:
        raise ValueError(f"tfnb's tensordot needs operands of known rank, got {x}")
    axes = [normalize_axis(i, rank, "tensordot axis") for i in axes]
    free = [i for i in range(rank) if i not in axes]
    perm = axes + free if contracted_first else free + axes
    moved = x if perm == list(range(rank)) else array_ops.transpose(x, perm)
    dims = [size_along(x, i) for i in range(rank)]
    free_dims, axes_dims = [dims[i] for i in free], [dims[i] for i in axes]
    shape = [_product(axes_dims), _product(free_dims)] if contracted_first else [_product(free_dims),
                                                                                 _product(axes_dims)]
    return (moved if moved.shape.as_tuple() == tuple(shape) else array_ops.reshape(moved, shape)), free_dims


def _product(dims: list):
    """The product of dims that are ints or scalar tensors: an int when all are known."""
    known = math.prod(d for d in dims if isinstance(d, int))
    unknown = [d for d in dims if not isinstance(d, int)]
    return known if not unknown else math_ops.reduce_prod(array_ops.stack(unknown)) * known


def tensordot(a, b, axes, name: str | None = None) -> Tensor:
    """Sums a * b over a's `axes[0]` and b's `axes[1]` (or a's last and b's first `axes` dims); free dims a's then b's.

    tfnb needs a and b of known rank and takes `axes` as Python ints, not as a tensor.
    """
    with name_scope(name, "Tensordot", [a, b]) as scope:
        a, b = convert_to_tensor(a, name="a"), convert_to_tensor(b, name="b")
        a_axes, b_axes = _contraction_axes(a, b, axes)
        a_matrix, a_free = _as_matrix(a, a_axes, contracted_first=False)
        b_matrix, b_free = _as_matrix(b, b_axes, contracted_first=True)
        product = math_ops.matmul(a_matrix, b_matrix)
        dims = a_free + b_free
        if all(isinstance(d, int) for d in dims) and product.shape.as_tuple() == tuple(dims):
            return product
        return array_ops.reshape(product, dims, name=scope)


# -- einsum: parsing equations --------------------------------------------------------------------


def _split_subscripts(subscripts: str) -> list[str]:
    """One input's or the output's subscripts as tokens: single letters and '...'."""
    tokens = re.findall(r"\.\.\.|[A-Za-z]|.", subscripts)
    bad = [t for t in tokens if t != _ELLIPSIS and t not in string.ascii_letters]
    if bad or tokens.count(_ELLIPSIS) > 1:
        raise ValueError(f"Invalid subscripts {subscripts!r} in einsum: letters and at most one '...' are allowed")
    return tokens


def _parse(equation: str) -> tuple[list[list[str]], list[str]]:
    """An explicit equation's input subscripts and output subscripts, as token lists."""
    inputs, output = equation.split("->")
    return [_split_subscripts(s) for s in inputs.split(",")], _split_subscripts(output)


def _explicit(equation: str, count: int) -> str:
    """The equation without spaces and with its output spelled out, checked against the number of inputs."""
    equation = equation.replace(" ", "")
    if equation.count("->") > 1:
        raise ValueError(f"Invalid einsum equation {equation!r}: more than one '->'")
    left, arrow, right = equation.partition("->")
    specs = [_split_subscripts(s) for s in left.split(",")]
    if len(specs) != count:
        raise ValueError(f'Got {count} inputs for equation "{equation}", expecting {len(specs)}')
    labels = [t for spec in specs for t in spec if t != _ELLIPSIS]
    if not arrow:  # implicit mode: '...', then the labels used once, in alphabetical order
        ellipsis = _ELLIPSIS if any(_ELLIPSIS in spec for spec in specs) else ""
        right = ellipsis + "".join(sorted(t for t in set(labels) if labels.count(t) == 1))
    output = _split_subscripts(right)
    for token in output:
        if output.count(token) > 1:
            raise ValueError(f"Output subscript {token!r} appears more than once in einsum equation {equation!r}")
        if token != _ELLIPSIS and token not in labels:
            raise ValueError(f"Output subscript {token!r} does not appear in the inputs of einsum equation "
                             f"{equation!r}")
    return f"{left}->{right}"


def _join(specs: list[list[str]], output: list[str]) -> str:
    return ",".join("".join(spec) for spec in specs) + "->" + "".join(output)


# -- einsum: the op -------------------------------------------------------------------------------


def _label_dims(spec: list[str], dims: tuple) -> tuple[dict, TensorShape]:
    """Each label's dims in one input (a list: a label may repeat), and the dims its '...' stands for."""
    if _ELLIPSIS not in spec:
        if len(dims) != len(spec):
            raise ValueError(f"Shape must be rank {len(spec)} but is rank {len(dims)}")
        ellipsis = TensorShape([])
    else:
        if len(dims) < len(spec) - 1:
            raise ValueError(f"Shape must be at least rank {len(spec) - 1} but is rank {len(dims)}")
        at = spec.index(_ELLIPSIS)
        tail = len(spec) - 1 - at
        ellipsis = TensorShape(dims[at:len(dims) - tail])
        dims = dims[:at] + (None,) + dims[len(dims) - tail:]
    found: dict = {}
    for token, dim in zip(spec, dims):
        if token != _ELLIPSIS:
            found.setdefault(token, []).append(dim)
    return found, ellipsis


def _infer_einsum(op):
    dtype = check_same_dtype(op)
    check_dtype_in(op, dtype, op.op_def.dtypes)
    specs, output = _parse(op.attrs["equation"])
    sizes: dict = {}
    ellipsis = TensorShape([])
    for spec, tensor in zip(specs, op.inputs):
        dims = tensor.shape.as_tuple()
        if dims is None:
            sizes.update((t, sizes.get(t)) for t in spec if t != _ELLIPSIS)
            ellipsis = unknown_shape() if _ELLIPSIS in spec else ellipsis
            continue
        found, own_ellipsis = _label_dims(spec, dims)
        for label, label_dims in found.items():
            for dim in label_dims:
                known = sizes.get(label)
                if known is not None and dim is not None and known != dim:
                    raise ValueError(f"Dimensions must be equal, but are {known} and {dim} for label {label!r}")
                sizes[label] = known if known is not None else dim
        ellipsis = broadcast_shapes(ellipsis, own_ellipsis)
    if _ELLIPSIS in output and ellipsis.ndims is None:
        return [(dtype, unknown_shape())]
    dims = []
    for token in output:
        dims.extend(ellipsis.as_tuple() if token == _ELLIPSIS else (sizes[token],))
    return [(dtype, TensorShape(dims))]


register_op("Einsum", _infer_einsum, dtypes=_CONTRACTED, examples=[
    Example(lambda a, b: einsum("ij,jk->ik", a, b), lambda a, b: a @ b, inputs=((2, 3), (3, 4))),
    Example(lambda a, b: einsum("bij,bkj->bik", a, b), lambda a, b: np.einsum("bij,bkj->bik", a, b),
            inputs=((2, 3, 4), (2, 5, 4))),
    Example(lambda a: einsum("ij->ji", a), lambda a: a.T, inputs=((2, 3),)),
    Example(lambda a: einsum("ijk->j", a), lambda a: a.sum((0, 2)), inputs=((2, 3, 4),)),
    Example(lambda a, b: einsum("i,j", a, b), np.outer, inputs=((3,), (4,))),
    Example(lambda a, b: einsum("i,i->", a, b), np.dot, inputs=((5,), (5,))),
    Example(lambda a, b, c: einsum("ij,jk,kl->il", a, b, c), lambda a, b, c: a @ b @ c,
            inputs=((2, 3), (3, 4), (4, 2))),
    Example(lambda a, b: einsum("...ij,jk->...ik", a, b), lambda a, b: a @ b, inputs=((2, 2, 3), (3, 4))),
    Example(lambda a, b: einsum("i...j,j...->i...", a, b), lambda a, b: np.einsum("i...j,j...->i...", a, b),
            inputs=((2, 3, 1, 4), (4, 1, 5))),
    Example(lambda a: einsum("ii->i", a), np.diagonal, inputs=((3, 3),), differentiable=False),
], attrs={"equation": "string"})


def _conj(x: Tensor) -> Tensor:
    return math_ops.conj(x) if x.dtype.is_complex else x


@register_gradient("Einsum")
def _einsum_grad(op, grad):
    """Each input's gradient is another einsum: the output's gradient with the other (conjugated) inputs."""
    specs, output = _parse(op.attrs["equation"])
    return [_einsum_grad_for(op, i, specs, output, grad) for i in range(len(specs))]


def _einsum_grad_for(op, index: int, specs: list, output: list, grad: Tensor) -> Tensor:
    x, spec = op.inputs[index], specs[index]
    labels = [t for t in spec if t != _ELLIPSIS]
    if len(set(labels)) != len(labels):
        raise ValueError(f"tfnb cannot differentiate einsum {op.attrs['equation']!r}: input {index} repeats a label")
    operands = [grad] + [_conj(t) for j, t in enumerate(op.inputs) if j != index]
    operand_specs = [output] + [s for j, s in enumerate(specs) if j != index]
    if any(not any(t in s for s in operand_specs) for t in spec):  # x's own sums: its gradient broadcasts over them
        operands.append(array_ops.ones_like(x))
        operand_specs.append(spec)
    if _ELLIPSIS not in spec or spec[0] == _ELLIPSIS:
        return sum_to_shape_of(einsum(_join(operand_specs, spec), *operands), x)
    # '...' may broadcast: sum the gradient back with the ellipsis moved to the front, then move it back.
    rank = x.shape.ndims
    if rank is None:
        raise ValueError(f"tfnb cannot differentiate einsum {op.attrs['equation']!r} for an input of unknown rank")
    at, tail = spec.index(_ELLIPSIS), len(spec) - 1 - spec.index(_ELLIPSIS)
    middle = list(range(at, rank - tail))
    perm = middle + [i for i in range(rank) if i not in middle]
    front = [_ELLIPSIS] + labels
    summed = sum_to_shape_of(einsum(_join(operand_specs, front), *operands), array_ops.transpose(x, perm))
    return array_ops.transpose(summed, list(np.argsort(perm)))


def einsum(equation: str, *inputs, **kwargs) -> Tensor:
    """The sums of products that `equation` describes, e.g. 'ij,jk->ik' (implicit outputs and '...' allowed).

    tfnb computes any number of inputs in one Einsum op (TF chains two-input ones); a label repeated within
    one input (a diagonal) works forward but has no gradient.
    """
    name = kwargs.pop("name", None)
    kwargs.pop("optimize", None)  # tfnb's kernel always finds a contraction order
    if kwargs:
        raise TypeError(f"Invalid keyword arguments for einsum: {', '.join(kwargs)}")
    with name_scope(name, "einsum", inputs):
        tensors = [convert_to_tensor(t) for t in inputs]
        attrs = {"equation": _explicit(equation, len(tensors))}
        return get_default_graph().create_op("Einsum", tensors, attrs).outputs[0]

"""Scans: running sums and products along an axis (Cumsum, Cumprod)."""

from __future__ import annotations

import numpy as np

from tfnb.framework import dtypes
from tfnb.framework.op_registry import Example, register_gradient, register_op
from tfnb.framework.tensor import Tensor
from tfnb.ops.constant_op import convert_to_tensor
from tfnb.ops.inference import check_dtype_in, constant_value
from tfnb.ops.math.arithmetic import realdiv
from tfnb.ops.math.operands import create, to_tensor


def _infer_scan(op):
    x, axis = op.inputs
    check_dtype_in(op, x.dtype, op.op_def.dtypes)
    check_dtype_in(op, axis.dtype, dtypes.INDEX, "axis")
    value, rank = constant_value(axis), x.shape.ndims
    if value is not None and rank is not None and not -rank <= int(value) < rank:
        raise ValueError(f"axis {int(value)} is out of range for a tensor of rank {rank}")
    return [(x.dtype, x.shape)]


def _np_scan(scan, x, axis, exclusive, reverse):
    if reverse:
        x = np.flip(x, axis)
    out = scan(x, axis=axis, dtype=x.dtype)
    if exclusive:
        identity = np.ones_like if scan is np.cumprod else np.zeros_like
        out = np.concatenate([identity(np.take(out, [0], axis)), np.delete(out, -1, axis)], axis)
    return np.flip(out, axis) if reverse else out


def _scan_example(build, scan, axis: int, exclusive: bool, reverse: bool) -> Example:
    return Example(lambda x: build(x, axis=axis, exclusive=exclusive, reverse=reverse),
                   lambda x: _np_scan(scan, x, axis, exclusive, reverse), inputs=((2, 4),), low=-2, high=2)


def _scan_examples(build, scan) -> list[Example]:
    return [_scan_example(build, scan, axis, exclusive, reverse)
            for axis, exclusive, reverse in [(0, False, False), (1, True, False), (-1, False, True), (1, True, True)]]


register_op("Cumsum", _infer_scan, dtypes=dtypes.NUMERIC,
            examples=_scan_examples(lambda *a, **k: cumsum(*a, **k), np.cumsum),
            attrs={"exclusive": "bool", "reverse": "bool"})


@register_gradient("Cumsum")
def _cumsum_grad(op, grad):
    """Each element feeds the sums after it (before it, when reversed): a scan of grad the other way."""
    return [cumsum(grad, op.inputs[1], exclusive=op.attrs["exclusive"], reverse=not op.attrs["reverse"]), None]


register_op("Cumprod", _infer_scan, dtypes=dtypes.NUMERIC,
            examples=_scan_examples(lambda *a, **k: cumprod(*a, **k), np.cumprod),
            attrs={"exclusive": "bool", "reverse": "bool"})


@register_gradient("Cumprod")
def _cumprod_grad(op, grad):
    """As Cumsum's, on grad times the products, then divided by x (as TF does, so not where x is 0)."""
    x, axis = op.inputs
    scanned = cumsum(op.outputs[0] * grad, axis, exclusive=op.attrs["exclusive"], reverse=not op.attrs["reverse"])
    return [realdiv(scanned, x), None]


def cumsum(x, axis=0, exclusive: bool = False, reverse: bool = False, name: str | None = None) -> Tensor:
    """Running sums along `axis`; exclusive leaves each element out of its own sum, reverse sums from the end."""
    return create("Cumsum", (convert_to_tensor(x), to_tensor(axis, dtypes.int32)),
                  {"exclusive": bool(exclusive), "reverse": bool(reverse)}, name)


def cumprod(x, axis=0, exclusive: bool = False, reverse: bool = False, name: str | None = None) -> Tensor:
    """Running products along `axis`; exclusive and reverse as in `cumsum`."""
    return create("Cumprod", (convert_to_tensor(x), to_tensor(axis, dtypes.int32)),
                  {"exclusive": bool(exclusive), "reverse": bool(reverse)}, name)

"""Unique: the distinct elements of a vector in order of first appearance, and where each element went."""

from __future__ import annotations

import collections

import numpy as np

from tfnb.framework import dtypes
from tfnb.framework.graph import get_default_graph
from tfnb.framework.op_registry import Example, register_op
from tfnb.framework.tensor_shape import TensorShape
from tfnb.ops.constant_op import convert_to_tensor
from tfnb.ops.inference import ARRAY_AND_STRING, check_claimed, check_dtype_in

__all__ = ["unique"]

Unique = collections.namedtuple("Unique", ["y", "idx"])


def _infer_unique(op):
    x = op.inputs[0]
    dtype = check_claimed(op)
    check_dtype_in(op, op.attrs["out_idx"], dtypes.INDEX, "out_idx")
    if x.shape.ndims not in (None, 1):
        raise ValueError(f"Shape must be rank 1 but is rank {x.shape.ndims}")
    return [(dtype, TensorShape([None])), (op.attrs["out_idx"], x.shape if x.shape.ndims is not None
                                           else TensorShape([None]))]


def _first_appearance(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Reference: the distinct values in order of first appearance, and each element's index among them."""
    seen: dict = {}
    idx = [seen.setdefault(value, len(seen)) for value in x.tolist()]
    return np.array(list(seen), dtype=x.dtype), np.array(idx, dtype=np.int32)


# Unique has no gradient, as in TF.
register_op("Unique", _infer_unique, dtypes=ARRAY_AND_STRING, attrs={"out_idx": "type"}, examples=[
    Example(lambda x: list(unique(x)), _first_appearance, inputs=(np.array([3, 1, 3, 2, 1, 7], np.int32),),
            differentiable=False),
    Example(lambda x: list(unique(x)), _first_appearance, inputs=((6,),), low=0, high=2, differentiable=False)])


def unique(x, out_idx=dtypes.int32, name: str | None = None) -> Unique:
    """(y, idx): the distinct elements of the vector x in order of first appearance, and x == y[idx]."""
    attrs = {"out_idx": dtypes.as_dtype(out_idx)}
    op = get_default_graph().create_op("Unique", (convert_to_tensor(x),), attrs, name)
    return Unique(*op.outputs)

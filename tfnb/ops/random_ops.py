"""Random tensors (normal, uniform, truncated normal) and TF1's graph-level and op-level seeds.

A random op's kernel keeps one generator per session, seeded from the op's (graph seed, op seed)
pair: each run draws new values, and a new Session on the same graph replays the same sequence.
"""

from __future__ import annotations

import numpy as np

from tfnb.framework import dtypes
from tfnb.framework.graph import get_default_graph, name_scope
from tfnb.framework.op_registry import register_op
from tfnb.framework.tensor import Tensor
from tfnb.framework.tensor_shape import TensorShape
from tfnb.ops import math_ops
from tfnb.ops.array.shapes import shape_from
from tfnb.ops.constant_op import convert_to_tensor
from tfnb.ops.inference import check_dtype_in, check_same_dtype

__all__ = ["random_normal", "random_uniform", "truncated_normal", "set_random_seed", "get_seed"]

DEFAULT_GRAPH_SEED = 87654321
_MAXINT32 = 2**31 - 1


# -- seeds ----------------------------------------------------------------------------------------


def set_random_seed(seed: int | None) -> None:
    """Sets the default graph's seed, from which ops without their own seed derive one."""
    get_default_graph().seed = seed


def get_seed(op_seed: int | None) -> tuple[int | None, int | None]:
    """The (graph seed, op seed) pair a random op uses, by TF1's rules; (None, None) means nondeterministic."""
    graph = get_default_graph()
    if graph.seed is not None:
        # TF derives the op seed from the graph's op count, so each op gets its own stream.
        seeds = (graph.seed % _MAXINT32, (len(graph.get_operations()) if op_seed is None else op_seed) % _MAXINT32)
    elif op_seed is not None:
        seeds = (DEFAULT_GRAPH_SEED, op_seed % _MAXINT32)
    else:
        seeds = (None, None)
    # Kernels read (0, 0) as "nondeterministic", which a user who set seed 0 does not mean.
    return (0, _MAXINT32) if seeds == (0, 0) else seeds


def _seed_attrs(seed: int | None) -> dict:
    seed1, seed2 = get_seed(seed)
    return {"seed": seed1 or 0, "seed2": seed2 or 0}


# -- op definitions -------------------------------------------------------------------------------


def _check_shape_input(op, shape: Tensor) -> TensorShape:
    """The static shape that a shape input describes; it must be a 1-D int32/int64 tensor."""
    check_dtype_in(op, shape.dtype, dtypes.INDEX, "shape")
    if shape.shape.ndims not in (None, 1):
        raise ValueError(f"Shape must be rank 1 but is rank {shape.shape.ndims}")
    return shape_from(shape)


def _infer_random(op):
    dtype = op.attrs["dtype"]
    check_dtype_in(op, dtype, op.op_def.dtypes, "dtype")
    return [(dtype, _check_shape_input(op, op.inputs[0]))]


def _infer_random_int(op):
    shape, minval, maxval = op.inputs
    dtype = check_same_dtype(op, 1, 2)
    check_dtype_in(op, dtype, op.op_def.dtypes, "minval")
    for label, bound in (("minval", minval), ("maxval", maxval)):
        if bound.shape.ndims not in (None, 0):
            raise ValueError(f"{label} must be a scalar; got a tensor of shape {bound.shape}")
    return [(dtype, _check_shape_input(op, shape))]


for _type in ("RandomStandardNormal", "RandomUniform", "TruncatedNormal"):
    register_op(_type, _infer_random, dtypes=dtypes.FLOATS, stateful=True,
                attrs={"dtype": "type", "seed": "int", "seed2": "int"})
register_op("RandomUniformInt", _infer_random_int, dtypes=dtypes.INDEX, stateful=True,
            attrs={"seed": "int", "seed2": "int"})


# -- constructors ---------------------------------------------------------------------------------


def _shape_tensor(shape) -> Tensor:
    """The `shape` argument as a 1-D int tensor; an empty list means a scalar."""
    if isinstance(shape, TensorShape):
        shape = shape.as_list()
    if isinstance(shape, (list, tuple)) and not shape:
        shape = np.zeros([0], np.int32)
    return convert_to_tensor(shape, name="shape", preferred_dtype=dtypes.int32)


def _random(op_type: str, shape: Tensor, dtype: dtypes.DType, seed: int | None, name: str | None = None) -> Tensor:
    attrs = {"dtype": dtype, **_seed_attrs(seed)}
    return get_default_graph().create_op(op_type, (shape,), attrs, name).outputs[0]


def _scaled_normal(op_type: str, default_name: str, shape, mean, stddev, dtype, seed, name) -> Tensor:
    """TF's composition: a standard draw, times stddev, plus mean (Mul and Add ops)."""
    dtype = dtypes.as_dtype(dtype)
    with name_scope(name, default_name, [shape, mean, stddev]) as scope:
        shape = _shape_tensor(shape)
        if _is_number(mean, 0) and _is_number(stddev, 1):
            return _random(op_type, shape, dtype, seed, scope)
        mean = convert_to_tensor(mean, dtype=dtype, name="mean")
        stddev = convert_to_tensor(stddev, dtype=dtype, name="stddev")
        standard = _random(op_type, shape, dtype, seed)
        return math_ops.add(math_ops.multiply(standard, stddev), mean, name=scope)


def random_normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed: int | None = None,
                  name: str | None = None) -> Tensor:
    """A tensor of `shape` filled with normal random values.

    tfnb differs: mean 0 and stddev 1 add no Mul and Add ops (TF skips them only in random_uniform).
    tfnb draws float32 values (float64 for float64) with NumPy's generator, so values differ from TF's.
    """
    return _scaled_normal("RandomStandardNormal", "random_normal", shape, mean, stddev, dtype, seed, name)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed: int | None = None,
                     name: str | None = None) -> Tensor:
    """Normal random values of `shape`, re-drawn wherever they fall 2 or more stddevs from the mean.

    tfnb differs: mean 0 and stddev 1 add no Mul and Add ops (TF skips them only in random_uniform).
    tfnb draws float32 values (float64 for float64) with NumPy's generator, so values differ from TF's.
    """
    return _scaled_normal("TruncatedNormal", "truncated_normal", shape, mean, stddev, dtype, seed, name)


def _is_number(value, number: int) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == number


def random_uniform(shape, minval=0, maxval=None, dtype=dtypes.float32, seed: int | None = None,
                   name: str | None = None) -> Tensor:
    """Uniform random values of `shape` in [minval, maxval); integer dtypes need a maxval.

    tfnb draws float32 values (float64 for float64) with NumPy's generator, so values differ from TF's.
    """
    dtype = dtypes.as_dtype(dtype)
    if dtype not in dtypes.FLOATS + dtypes.INDEX:
        raise ValueError(f"Invalid dtype {dtype!r}")
    if maxval is None:
        if dtype.is_integer:
            raise ValueError(f"Must specify maxval for integer dtype {dtype!r}")
        maxval = 1
    with name_scope(name, "random_uniform", [shape, minval, maxval]) as scope:
        shape = _shape_tensor(shape)
        if dtype.is_integer:
            bounds = (convert_to_tensor(minval, dtype=dtype, name="min"),
                      convert_to_tensor(maxval, dtype=dtype, name="max"))
            return get_default_graph().create_op("RandomUniformInt", (shape, *bounds), _seed_attrs(seed),
                                                 scope).outputs[0]
        # As in TF, a range starting at 0 needs no Sub and Add, and [0, 1) no arithmetic at all.
        starts_at_zero = _is_number(minval, 0)
        unit_range = starts_at_zero and _is_number(maxval, 1)
        if not unit_range:
            minval = convert_to_tensor(minval, dtype=dtype, name="min")
            maxval = convert_to_tensor(maxval, dtype=dtype, name="max")
        unit = _random("RandomUniform", shape, dtype, seed)
        if unit_range:
            return unit
        if starts_at_zero:
            return math_ops.multiply(unit, maxval, name=scope)
        return math_ops.add(math_ops.multiply(unit, math_ops.subtract(maxval, minval)), minval, name=scope)

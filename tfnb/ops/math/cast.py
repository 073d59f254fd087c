"""Cast: a tensor's values in another dtype (tf.cast, and TF1's to_float, to_int32, ...)."""

from __future__ import annotations

import numpy as np

from tfnb.framework import dtypes
from tfnb.framework.op_registry import Example, register_gradient, register_op
from tfnb.framework.tensor import Tensor
from tfnb.ops.constant_op import convert_to_tensor
from tfnb.ops.inference import check_dtype_in
from tfnb.ops.math.operands import INEXACT, create


def _infer_cast(op):
    check_dtype_in(op, op.inputs[0].dtype, op.op_def.dtypes)
    check_dtype_in(op, op.attrs["DstT"], op.op_def.dtypes, "DstT")
    return [(op.attrs["DstT"], op.inputs[0].shape)]


_CAST_TARGETS = (dtypes.bool_, dtypes.int8, dtypes.int32, dtypes.int64, dtypes.float16, dtypes.float32,
                 dtypes.float64, dtypes.complex64)


def _np_cast(x, dtype: dtypes.DType):
    if x.dtype.kind == "c" and not (dtype.is_complex or dtype.is_bool):
        x = x.real
    if x.dtype.kind == "f" and dtype.is_integer:
        x = np.trunc(x)
    return x.astype(dtype.np_dtype)


register_op("Cast", _infer_cast, dtypes=dtypes.ARRAY, examples=[
    Example(lambda x: [cast(x, d) for d in _CAST_TARGETS], lambda x: [_np_cast(x, d) for d in _CAST_TARGETS],
            inputs=((2, 3),), differentiable=False),
    Example(lambda x: [cast(x, dtypes.uint8), to_int32(x), to_int64(x), to_float(x), to_double(x)],
            lambda x: [_np_cast(x, d) for d in (dtypes.uint8, dtypes.int32, dtypes.int64, dtypes.float32,
                                                 dtypes.float64)],
            inputs=((2, 3),), low=0, high=9, dtypes=dtypes.REAL, differentiable=False),
    Example(lambda x, dtype: cast(cast(x, dtype), dtypes.int32), lambda x, dtype: np.array([-2, 0, 0, 2]),
            inputs=(np.array([-2.7, -0.5, 0.5, 2.7]),), dtypes=dtypes.FLOATS, differentiable=False),
], attrs={"DstT": "type", "SrcT": "type", "Truncate": "bool"})


@register_gradient("Cast")
def _cast_grad(op, grad):
    """Between float and complex types the gradient is cast back; to or from others none flows (as in TF)."""
    source = op.inputs[0].dtype
    return [cast(grad, source) if source in INEXACT and grad.dtype in INEXACT else None]


def cast(x, dtype, name: str | None = None) -> Tensor:
    """x as `dtype`: floats to integers truncate toward zero, complex to real keeps the real part, to bool is x != 0."""
    dtype = dtypes.as_dtype(dtype)
    x = convert_to_tensor(x)
    if x.dtype is dtype:
        return x
    return create("Cast", (x,), {"SrcT": x.dtype, "DstT": dtype, "Truncate": False}, name)


def to_float(x, name: str = "ToFloat") -> Tensor:
    """x cast to float32 (deprecated in TF1 in favour of `cast`)."""
    return cast(x, dtypes.float32, name=name)


def to_double(x, name: str = "ToDouble") -> Tensor:
    """x cast to float64 (deprecated in TF1 in favour of `cast`)."""
    return cast(x, dtypes.float64, name=name)


def to_int32(x, name: str = "ToInt32") -> Tensor:
    """x cast to int32 (deprecated in TF1 in favour of `cast`)."""
    return cast(x, dtypes.int32, name=name)


def to_int64(x, name: str = "ToInt64") -> Tensor:
    """x cast to int64 (deprecated in TF1 in favour of `cast`)."""
    return cast(x, dtypes.int64, name=name)

"""String ops: StringToNumber (tf.strings.to_number, tf.string_to_number)."""

from __future__ import annotations

import numpy as np

from tfnb.framework import dtypes
from tfnb.framework.graph import get_default_graph
from tfnb.framework.op_registry import Example, not_differentiable, register_op
from tfnb.framework.tensor import Tensor
from tfnb.ops.constant_op import convert_to_tensor
from tfnb.ops.inference import check_dtype_in

__all__ = ["string_to_number"]

# The numbers a string can be parsed to. tfnb differs from TF: uint32 and uint64 are not among them.
NUMBER_DTYPES = (dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64)


def _infer_string_to_number(op):
    check_dtype_in(op, op.inputs[0].dtype, (dtypes.string,), "string_tensor")
    return [(op.attrs["out_type"], op.inputs[0].shape)]


register_op("StringToNumber", _infer_string_to_number, dtypes=(dtypes.string,), attrs={"out_type": "type"},
            examples=[Example(lambda s: string_to_number(s), lambda s: s.astype(np.float32),
                              inputs=(np.array([b"1.5", b" -2 ", b"1e3", b"inf"], dtype=object),),
                              differentiable=False)])
not_differentiable("StringToNumber")


def string_to_number(string_tensor, out_type=dtypes.float32, name: str | None = None) -> Tensor:
    """Parses each string as a number of `out_type`; a string that is not one fails the run (InvalidArgumentError)."""
    out_type = dtypes.as_dtype(out_type)
    if out_type not in NUMBER_DTYPES:
        raise TypeError(f"Value passed to parameter 'out_type' has DataType {out_type.name} not in list of allowed "
                        f"values: {', '.join(d.name for d in NUMBER_DTYPES)}")
    tensor = convert_to_tensor(string_tensor)
    if tensor.dtype is not dtypes.string:
        raise TypeError(f"Input 'string_tensor' of 'StringToNumber' Op has type {tensor.dtype.name} that does not "
                        f"match expected type of string.")
    return get_default_graph().create_op("StringToNumber", (tensor,), {"out_type": out_type}, name).outputs[0]

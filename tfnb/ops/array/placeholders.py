"""Placeholders: tensors whose value is fed to a run (Placeholder), or fed optionally (PlaceholderWithDefault)."""

from __future__ import annotations

from tfnb.framework import dtypes
from tfnb.framework.graph import get_default_graph
from tfnb.framework.op_registry import Example, register_gradient, register_op
from tfnb.framework.tensor import Tensor
from tfnb.framework.tensor_shape import as_shape
from tfnb.ops.array.identity import pass_through_grad
from tfnb.ops.constant_op import convert_to_tensor

register_op("Placeholder", lambda op: [(op.attrs["dtype"], op.attrs["shape"])], dtypes=dtypes.ALL, foldable=False,
            attrs={"dtype": "type", "shape": "shape"})


def placeholder(dtype, shape=None, name: str | None = None) -> Tensor:
    """A tensor whose value must be fed to every run that needs it."""
    attrs = {"dtype": dtypes.as_dtype(dtype), "shape": as_shape(shape)}
    return get_default_graph().create_op("Placeholder", (), attrs, name).outputs[0]


def _infer_placeholder_with_default(op):
    return [(op.inputs[0].dtype, as_shape(op.attrs["shape"]))]


register_op("PlaceholderWithDefault", _infer_placeholder_with_default, dtypes=dtypes.ALL, forwards_input=0, foldable=False,
            examples=[Example(lambda x: placeholder_with_default(x, [2, None]), lambda x: x, inputs=((2, 3),))],
            attrs={"shape": "shape"})
register_gradient("PlaceholderWithDefault")(pass_through_grad)


def placeholder_with_default(input, shape, name: str | None = None) -> Tensor:
    """A tensor that is `input` unless a value is fed for it; `shape` may be less specific than input's."""
    input = convert_to_tensor(input)
    shape = as_shape(shape)
    if not shape.is_compatible_with(input.shape):
        raise ValueError(f"Default shape {input.shape} is not compatible with shape {shape}")
    return get_default_graph().create_op("PlaceholderWithDefault", (input,), {"shape": shape}, name).outputs[0]

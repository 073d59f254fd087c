"""Identity and StopGradient: the input's value, passed on; gradients pass through the first, not the second."""

from __future__ import annotations

from tfnb.framework import dtypes
from tfnb.framework.graph import get_default_graph
from tfnb.framework.op_registry import Example, not_differentiable, register_gradient, register_op
from tfnb.framework.tensor import Tensor
from tfnb.ops.constant_op import convert_to_tensor
from tfnb.ops.inference import same_as_input


def pass_through_grad(op, grad) -> list:
    """The gradient of an op whose output is its input: passed on as it is (sparse stays sparse)."""
    return [grad]


register_op("Identity", same_as_input(0), dtypes=dtypes.ALL, forwards_input=0,
            examples=[Example(lambda x: identity(x), lambda x: x, inputs=((2, 3),))])
register_gradient("Identity")(pass_through_grad)


def identity(input, name: str | None = None) -> Tensor:
    """The same value as `input`; useful to give it a name or a device, or to add control dependencies."""
    return get_default_graph().create_op("Identity", (convert_to_tensor(input),), None, name).outputs[0]


register_op("StopGradient", same_as_input(0), dtypes=dtypes.ALL, forwards_input=0,
            examples=[Example(lambda x: stop_gradient(x), lambda x: x, inputs=((3,),), differentiable=False)])
not_differentiable("StopGradient")


def stop_gradient(input, name: str | None = None) -> Tensor:
    """The same value as `input`; gradients do not flow through it."""
    return get_default_graph().create_op("StopGradient", (convert_to_tensor(input),), None, name).outputs[0]

"""tf.TensorArray: a list of tensors written and read one index at a time inside a graph (TF1's graph API).

As in TF1, an array is a stateful object behind a `handle`, plus a float scalar `flow` that orders the
ops on it: every write returns a new TensorArray object whose flow comes out of the write, and a read
takes the flow it must come after. A tf.while_loop carries the flow as a loop variable, so iterations
write in order and a read after the loop waits for the last write.

Gradients follow TF1's design: each tf.gradients call (its name scope is the "source") gets its own
gradient array per forward array, created on first use by TensorArrayGradV3. A read's gradient writes
into it, a write's gradient reads from it; writes to one index of a gradient array add up.
"""

from __future__ import annotations

from tfnb.framework import dtypes, nest
from tfnb.framework.graph import get_default_graph
from tfnb.framework.op_registry import (
    Example,
    not_differentiable,
    register_gradient,
    register_op,
)
from tfnb.framework.tensor import Tensor
from tfnb.framework.tensor_shape import TensorShape, as_shape, unknown_shape
from tfnb.ops import array_ops, math_ops
from tfnb.ops.constant_op import convert_to_tensor
from tfnb.ops.inference import constant_value

__all__ = ["TensorArray"]

ELEMENT_DTYPES = tuple(d for d in dtypes.ALL if d is not dtypes.resource)
HANDLE_SHAPE = TensorShape([2])
FLOW = (dtypes.float32, TensorShape([]))


class TensorArray:
    """TF1's tf.TensorArray in graph mode: write/read/stack/unstack/gather/scatter/concat/split/size/close.

    tfnb differs: colocate_with_first_write_call is ignored (the placer colocates by handle); TensorArrayReadV3
    has an element_shape attr (the shape known when it was built), so an imported graph keeps it.
    """

    def __init__(self, dtype, size=None, dynamic_size=None, clear_after_read=None, tensor_array_name=None,
                 handle=None, flow=None, infer_shape: bool = True, element_shape=None,
                 colocate_with_first_write_call: bool = True, name: str | None = None) -> None:
        _check_arguments(size, dynamic_size, clear_after_read, tensor_array_name, handle, element_shape)
        self._dtype = dtypes.as_dtype(dtype)
        self._dynamic_size = bool(dynamic_size)
        self._size = size
        self._infer_shape = infer_shape
        self._element_shape = [as_shape(element_shape)]  # one list shared by every TensorArray of this array
        if handle is not None:
            if flow is None:
                raise ValueError("flow must not be None if handle is not None.")
            self._handle, self._flow = handle, flow
            return
        graph = get_default_graph()
        with graph.name_scope(name or "TensorArray") as scope:
            attrs = {"dtype": self._dtype, "element_shape": self._element_shape[0],
                     "dynamic_size": self._dynamic_size,
                     "clear_after_read": True if clear_after_read is None else bool(clear_after_read),
                     "identical_element_shapes": bool(infer_shape), "tensor_array_name": tensor_array_name or ""}
            size = convert_to_tensor(size, dtypes.int32, name="size")
            self._handle, self._flow = graph.create_op("TensorArrayV3", (size,), attrs, scope).outputs

    @property
    def flow(self) -> Tensor:
        """The float scalar that orders the ops on this array."""
        return self._flow

    @property
    def handle(self) -> Tensor:
        """The array's resource handle."""
        return self._handle

    @property
    def dtype(self) -> dtypes.DType:
        """The dtype of the elements."""
        return self._dtype

    @property
    def element_shape(self) -> TensorShape:
        """The static shape of every element, as known from element_shape and the writes so far."""
        return self._element_shape[0]

    @property
    def dynamic_size(self) -> bool:
        """Whether writes past the end grow the array."""
        return self._dynamic_size

    def _with_flow(self, flow: Tensor) -> TensorArray:
        """The same array after the op that produced `flow`."""
        found = TensorArray(self._dtype, handle=self._handle, flow=flow, infer_shape=self._infer_shape)
        found._dynamic_size, found._size, found._element_shape = self._dynamic_size, self._size, self._element_shape
        return found

    def _check_element_shape(self, shape: TensorShape) -> None:
        if not shape.is_compatible_with(self.element_shape):
            raise ValueError(f"Inconsistent shapes: saw {shape} but expected {self.element_shape} ")
        if self._infer_shape:
            self._element_shape[0] = self.element_shape.merge_with(shape)

    def _value(self, value, name: str = "value") -> Tensor:
        return convert_to_tensor(value, preferred_dtype=self._dtype, name=name)

    def identity(self) -> TensorArray:
        """This array with an Identity on its flow (e.g. to pass it through control dependencies)."""
        return self._with_flow(array_ops.identity(self._flow))

    def grad(self, source: str, flow=None, name: str | None = None) -> TensorArray:
        """The gradient array of this one for the gradient computation `source` (created on first use)."""
        flow = self._flow if flow is None else flow
        graph = get_default_graph()
        with graph.name_scope(name or "TensorArrayGrad"):
            op = graph.create_op("TensorArrayGradV3", (self._handle, flow), {"source": source}, "TensorArrayGradV3")
            with graph.control_dependencies([op]):
                flow = array_ops.identity(flow, name="gradient_flow")
        found = TensorArray(self._dtype, handle=op.outputs[0], flow=flow, infer_shape=self._infer_shape)
        found._element_shape = self._element_shape
        return found

    def read(self, index, name: str | None = None) -> Tensor:
        """The element at `index` (freed after the read when the array was made with clear_after_read)."""
        index = convert_to_tensor(index, dtypes.int32)
        attrs = {"dtype": self._dtype, "element_shape": self.element_shape}
        return get_default_graph().create_op("TensorArrayReadV3", (self._handle, index, self._flow), attrs,
                                             name or "TensorArrayReadV3").outputs[0]

    def write(self, index, value, name: str | None = None) -> TensorArray:
        """The array after writing `value` at `index`."""
        graph = get_default_graph()
        with graph.name_scope(name or "TensorArrayWrite"):
            value = self._value(value)
            self._check_element_shape(value.shape)
            index = convert_to_tensor(index, dtypes.int32)
            flow = graph.create_op("TensorArrayWriteV3", (self._handle, index, value, self._flow), None,
                                   name or "TensorArrayWriteV3").outputs[0]
        return self._with_flow(flow)

    def stack(self, name: str | None = None) -> Tensor:
        """All elements stacked along a new first axis."""
        with get_default_graph().name_scope(name or "TensorArrayStack"):
            value = self.gather(array_ops.range(0, self.size()), name=name)
            if self.element_shape and not self._dynamic_size and self._size is not None:
                known = constant_value(convert_to_tensor(self._size, dtypes.int32))
                value.set_shape(TensorShape([None if known is None else int(known)]).concatenate(self.element_shape))
        return value

    def gather(self, indices, name: str | None = None) -> Tensor:
        """The elements at `indices`, stacked along a new first axis."""
        indices = convert_to_tensor(indices, dtypes.int32)
        attrs = {"dtype": self._dtype, "element_shape": self.element_shape}
        return get_default_graph().create_op("TensorArrayGatherV3", (self._handle, indices, self._flow), attrs,
                                             name or "TensorArrayGatherV3").outputs[0]

    def concat(self, name: str | None = None) -> Tensor:
        """All elements concatenated along their first axis."""
        attrs = {"dtype": self._dtype, "element_shape_except0": self.element_shape[1:]}
        value = get_default_graph().create_op("TensorArrayConcatV3", (self._handle, self._flow), attrs,
                                              name or "TensorArrayConcatV3").outputs[0]
        if self.element_shape:
            first = None
            size = constant_value(self.size()) if self._infer_shape else None
            if size is not None and self.element_shape[0].value is not None:
                first = int(size) * self.element_shape[0].value
            value.set_shape(TensorShape([first]).concatenate(self.element_shape[1:]))
        return value

    def unstack(self, value, name: str | None = None) -> TensorArray:
        """The array after writing value[i] at each index i."""
        with get_default_graph().name_scope(name or "TensorArrayUnstack"):
            value = self._value(value)
            count = array_ops.shape(value)[0]
            return self.scatter(array_ops.range(0, count), value, name=name)

    def scatter(self, indices, value, name: str | None = None) -> TensorArray:
        """The array after writing value[i] at index indices[i]."""
        graph = get_default_graph()
        with graph.name_scope(name or "TensorArrayScatter"):
            value = self._value(value)
            self._check_element_shape(value.shape[1:])
            indices = convert_to_tensor(indices, dtypes.int32)
            flow = graph.create_op("TensorArrayScatterV3", (self._handle, indices, value, self._flow), None,
                                   name or "TensorArrayScatterV3").outputs[0]
        return self._with_flow(flow)

    def split(self, value, lengths, name: str | None = None) -> TensorArray:
        """The array after writing consecutive pieces of `value` (lengths[i] rows each) at indices 0, 1, ..."""
        graph = get_default_graph()
        with graph.name_scope(name or "TensorArraySplit"):
            value = convert_to_tensor(value, self._dtype, name="value")
            lengths = math_ops.cast(lengths, dtypes.int64)
            known = constant_value(lengths)
            if value.shape.ndims is not None and known is not None and known.size and known.max() == known.min():
                self._check_element_shape(TensorShape([int(known[0])]).concatenate(value.shape[1:]))
            flow = graph.create_op("TensorArraySplitV3", (self._handle, value, lengths, self._flow), None,
                                   name or "TensorArraySplitV3").outputs[0]
        return self._with_flow(flow)

    def size(self, name: str | None = None) -> Tensor:
        """The number of elements (the size given at creation unless dynamic_size)."""
        if not self._dynamic_size and self._size is not None:
            return convert_to_tensor(self._size, dtypes.int32)
        return get_default_graph().create_op("TensorArraySizeV3", (self._handle, self._flow), None,
                                             name or "TensorArraySizeV3").outputs[0]

    def close(self, name: str | None = None):
        """An op that frees the array's elements; later ops on it fail."""
        return get_default_graph().create_op("TensorArrayCloseV3", (self._handle,), None,
                                             name or "TensorArrayCloseV3")


def _check_arguments(size, dynamic_size, clear_after_read, tensor_array_name, handle, element_shape) -> None:
    if handle is not None and tensor_array_name:
        raise ValueError("Cannot provide both `handle` and `tensor_array_name` arguments at the same time.")
    if handle is not None and not isinstance(handle, Tensor):
        raise TypeError(f"Expected `handle` to be a Tensor, but got `{handle}` of type `{type(handle)}` instead.")
    if handle is None and size is None:
        raise ValueError("Argument `size` must be provided if handle is not provided.")
    for given, what in ((size, "size"), (element_shape, "element_shape"), (dynamic_size, "dynamic_size"),
                        (clear_after_read, "clear_after_read")):
        if handle is not None and given is not None:
            raise ValueError(f"Cannot provide both `handle` and `{what}` arguments at the same time.")


# -- loops carry an array as its flow ------------------------------------------------------------


def flows_of(structure):
    """`structure` with each TensorArray replaced by its flow (what a loop carries)."""
    leaves = nest.flatten(structure)
    return nest.pack_sequence_as(structure, [v.flow if isinstance(v, TensorArray) else v for v in leaves])


def arrays_like(template, structure):
    """`structure` (leaves matching `template`'s) with the leaves where `template` has a TensorArray
    turned back into that array after the given flow."""
    leaves = [t._with_flow(v) if isinstance(t, TensorArray) and isinstance(v, Tensor) else v
              for t, v in zip(nest.flatten(template), nest.flatten(structure))]
    return nest.pack_sequence_as(structure, leaves)


# -- shape and dtype rules -----------------------------------------------------------------------


def _check_handle(op, index: int = 0) -> None:
    handle = op.inputs[index]
    if handle.dtype is not dtypes.resource:
        raise TypeError(f"Input {index} of {op.type} must be a TensorArray handle (resource), got "
                        f"{handle.dtype.name}")


def _check_flow(op, index: int) -> None:
    flow = op.inputs[index]
    if flow.dtype is not dtypes.float32 or flow.shape.ndims not in (None, 0):
        raise TypeError(f"Input {index} of {op.type} must be a TensorArray flow (float32 scalar), got "
                        f"{flow.dtype.name} {flow.shape}")


def _check_index(op, index: int, rank: int) -> None:
    tensor = op.inputs[index]
    if tensor.dtype is not dtypes.int32:
        raise TypeError(f"The index input of {op.type} must be int32, got {tensor.dtype.name}")
    if tensor.shape.ndims not in (None, rank):
        raise ValueError(f"The index input of {op.type} must have rank {rank}, got shape {tensor.shape}")


def _infer_create(op):
    size = op.inputs[0]
    if size.dtype is not dtypes.int32 or size.shape.ndims not in (None, 0):
        raise ValueError(f"The size of a TensorArray must be an int32 scalar, got {size.dtype.name} {size.shape}")
    return [(dtypes.resource, HANDLE_SHAPE), FLOW]


def _infer_grad(op):
    _check_handle(op)
    _check_flow(op, 1)
    return [(dtypes.resource, HANDLE_SHAPE), FLOW]


def _infer_write(op):
    _check_handle(op)
    _check_index(op, 1, 0)
    _check_flow(op, 3)
    return [FLOW]


def _infer_scatter(op):
    _check_handle(op)
    _check_index(op, 1, 1)
    if op.inputs[2].shape.ndims == 0:
        raise ValueError("The value scattered into a TensorArray must be at least a vector, got a scalar")
    _check_flow(op, 3)
    return [FLOW]


def _infer_split(op):
    _check_handle(op)
    lengths = op.inputs[2]
    if lengths.dtype is not dtypes.int64 or lengths.shape.ndims not in (None, 1):
        raise ValueError(f"The lengths of a TensorArray split must be an int64 vector, got {lengths.dtype.name} "
                         f"{lengths.shape}")
    if op.inputs[1].shape.ndims == 0:
        raise ValueError("The value split into a TensorArray must be at least a vector, got a scalar")
    _check_flow(op, 3)
    return [FLOW]


def _created_element_shape(handle: Tensor) -> TensorShape:
    """The element_shape the array behind `handle` was created with (unknown if not visible)."""
    op = handle.op
    while op.type in ("Enter", "Identity", "Switch") and op.inputs:
        op = op.inputs[0].op
    return op.attrs["element_shape"] if op.type == "TensorArrayV3" else unknown_shape()


def _element_shape(op) -> TensorShape:
    """What the array was created with, refined by what the Python TensorArray knew (its writes)."""
    created, known = _created_element_shape(op.inputs[0]), op.attrs["element_shape"]
    return created.merge_with(known) if created.is_compatible_with(known) else created


def _infer_read(op):
    _check_handle(op)
    _check_index(op, 1, 0)
    _check_flow(op, 2)
    return [(op.attrs["dtype"], _element_shape(op))]


def _infer_gather(op):
    """As TF: the number of indices leads only when the array was created with a known element shape."""
    _check_handle(op)
    _check_index(op, 1, 1)
    _check_flow(op, 2)
    element = _element_shape(op)
    count = op.inputs[1].shape[0] if _created_element_shape(op.inputs[0]) and op.inputs[1].shape.ndims else None
    return [(op.attrs["dtype"], TensorShape([count]).concatenate(element) if element else unknown_shape())]


def _infer_concat(op):
    _check_handle(op)
    _check_flow(op, 1)
    return [(op.attrs["dtype"], TensorShape([None]).concatenate(op.attrs["element_shape_except0"])),
            (dtypes.int64, TensorShape([None]))]


def _infer_size(op):
    _check_handle(op)
    _check_flow(op, 1)
    return [(dtypes.int32, TensorShape([]))]


def _infer_close(op):
    _check_handle(op)
    return []


# -- examples: small programs, each through the op it is listed under ------------------------------


def _unstack_stack(x, dtype=None):
    return TensorArray(x.dtype, 3, element_shape=x.shape[1:]).unstack(x).stack()


def _write_read(x, dtype=None):
    ta = TensorArray(x.dtype, 2, clear_after_read=False).write(0, x).write(1, x)
    return [ta.read(1), ta.size(), ta.identity().read(0)]


def _scatter_gather(x, dtype=None):
    ta = TensorArray(x.dtype, 4, dynamic_size=True).scatter([3, 0, 1], x)
    return [ta.gather([1, 3]), ta.size()]


def _split_concat(x, dtype=None):
    ta = TensorArray(x.dtype, 2, infer_shape=False).split(x, [1, 3])
    return ta.concat()


def _close_after_read(x, dtype=None):
    ta = TensorArray(x.dtype, 1).write(0, x)
    value = ta.read(0)
    with get_default_graph().control_dependencies([value]):
        closed = ta.close()
    with get_default_graph().control_dependencies([closed]):
        return array_ops.identity(value)


def _gradient_array(x, dtype=None):
    ta = TensorArray(x.dtype, 2).unstack(x)
    g = ta.grad("gradients").write(0, x[0]).write(0, x[0])
    return g.read(0)


_EXAMPLES = {
    "TensorArrayV3": [Example(_unstack_stack, lambda x, dtype=None: x, inputs=((3, 2),))],
    "TensorArrayScatterV3": [Example(_unstack_stack, lambda x, dtype=None: x, inputs=((3, 2),)),
                             Example(_scatter_gather, lambda x, dtype=None: [x[[2, 0]], 4], inputs=((3, 2),))],
    "TensorArrayGatherV3": [Example(_scatter_gather, lambda x, dtype=None: [x[[2, 0]], 4], inputs=((3, 2),))],
    "TensorArrayWriteV3": [Example(_write_read, lambda x, dtype=None: [x, 2, x], inputs=((2, 3),))],
    "TensorArrayReadV3": [Example(_write_read, lambda x, dtype=None: [x, 2, x], inputs=((2, 3),))],
    "TensorArraySizeV3": [Example(_scatter_gather, lambda x, dtype=None: [x[[2, 0]], 4], inputs=((3, 2),))],
    "TensorArraySplitV3": [Example(_split_concat, lambda x, dtype=None: x, inputs=((4, 2),))],
    "TensorArrayConcatV3": [Example(_split_concat, lambda x, dtype=None: x, inputs=((4, 2),))],
    "TensorArrayCloseV3": [Example(_close_after_read, lambda x, dtype=None: x, inputs=((2,),),
                                   differentiable=False)],
    "TensorArrayGradV3": [Example(_gradient_array, lambda x, dtype=None: 2 * x[0], inputs=((2, 3),),
                                  dtypes=(dtypes.float32, dtypes.float64, dtypes.int32), differentiable=False)],
}

_RULES = {"TensorArrayV3": _infer_create, "TensorArrayGradV3": _infer_grad, "TensorArrayWriteV3": _infer_write,
          "TensorArrayReadV3": _infer_read, "TensorArrayGatherV3": _infer_gather,
          "TensorArrayScatterV3": _infer_scatter, "TensorArrayConcatV3": _infer_concat,
          "TensorArraySplitV3": _infer_split, "TensorArraySizeV3": _infer_size, "TensorArrayCloseV3": _infer_close}
_ATTRS = {"TensorArrayV3": {"dtype": "type", "element_shape": "shape", "dynamic_size": "bool", "clear_after_read": "bool",
                            "identical_element_shapes": "bool", "tensor_array_name": "string"},
          "TensorArrayGradV3": {"source": "string"},
          "TensorArrayReadV3": {"dtype": "type", "element_shape": "shape"},
          "TensorArrayGatherV3": {"dtype": "type", "element_shape": "shape"},
          "TensorArrayConcatV3": {"dtype": "type", "element_shape_except0": "shape"}}
for _type, _rule in _RULES.items():
    register_op(_type, _rule, dtypes=ELEMENT_DTYPES, stateful=True, examples=_EXAMPLES[_type],
                attrs=_ATTRS.get(_type, {}))
not_differentiable("TensorArrayV3", "TensorArrayGradV3", "TensorArraySizeV3", "TensorArrayCloseV3")


# -- gradients -------------------------------------------------------------------------------------


def _source(grad: Tensor) -> str:
    """Which tf.gradients call `grad` belongs to: its name up to the last scope named gradients*."""
    parts = grad.name.split("/")
    found = [i for i, part in enumerate(parts) if part.startswith("gradients")]
    return "/".join(parts[:found[-1] + 1]) if found else "gradients"


def _gradient_array_of(op, dtype, flow: Tensor, source: str) -> TensorArray:
    return TensorArray(dtype, handle=op.inputs[0], flow=flow).grad(source, flow=flow)


def _after_forward(op, flow: Tensor) -> Tensor:
    """`flow`, made to wait for the forward op's own output flow (the forward write comes first)."""
    done = array_ops.identity(op.outputs[0], name="flow_out")
    with get_default_graph().control_dependencies([done]):
        return array_ops.identity(flow, name="write_barrier")


@register_gradient("TensorArrayReadV3")
def _read_grad(op, grad):
    written = _gradient_array_of(op, op.attrs["dtype"], op.inputs[2], _source(grad)).write(op.inputs[1], grad)
    return [None, None, written.flow]


@register_gradient("TensorArrayWriteV3")
def _write_grad(op, flow):
    source = _source(flow)
    flow = _after_forward(op, flow)
    return [None, None, _gradient_array_of(op, op.inputs[2].dtype, flow, source).read(op.inputs[1]), flow]


@register_gradient("TensorArrayGatherV3")
def _gather_grad(op, grad):
    scattered = _gradient_array_of(op, op.attrs["dtype"], op.inputs[2], _source(grad)).scatter(op.inputs[1], grad)
    return [None, None, scattered.flow]


@register_gradient("TensorArrayScatterV3")
def _scatter_grad(op, flow):
    source = _source(flow)
    flow = _after_forward(op, flow)
    return [None, None, _gradient_array_of(op, op.inputs[2].dtype, flow, source).gather(op.inputs[1]), flow]


@register_gradient("TensorArrayConcatV3")
def _concat_grad(op, grad, _lengths_grad):
    split = _gradient_array_of(op, op.attrs["dtype"], op.inputs[1], _source(grad)).split(grad, op.outputs[1])
    return [None, split.flow]


@register_gradient("TensorArraySplitV3")
def _split_grad(op, flow):
    source = _source(flow)
    flow = _after_forward(op, flow)
    gradient_array = _gradient_array_of(op, op.inputs[1].dtype, flow, source)
    return [None, gradient_array.concat(), None, flow]

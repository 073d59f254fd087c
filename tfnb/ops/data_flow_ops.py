"""Queues (paper section 4.6): tf.FIFOQueue, tf.PaddingFIFOQueue and tf.RandomShuffleQueue, as in TF1.

A queue is a stateful resource, as a variable is: its handle op (FIFOQueueV2, ...) names the queue
in the session's resource container, and the enqueue, dequeue, size and close ops take that handle
as input, so the placer puts them where the queue lives. Enqueues wait for room and dequeues for
elements, so steps running at the same time hand data to each other (kernels/queues.py).
"""

from __future__ import annotations

import hashlib

import numpy as np

from tfnb.framework import dtypes
from tfnb.framework.graph import get_default_graph
from tfnb.framework.op_registry import Example, not_differentiable, register_op
from tfnb.framework.operation import Operation
from tfnb.framework.tensor import Tensor
from tfnb.framework.tensor_shape import TensorShape, as_shape, unknown_shape
from tfnb.ops.constant_op import convert_to_tensor
from tfnb.ops.inference import constant_value
from tfnb.ops.random_ops import get_seed

__all__ = ["QueueBase", "FIFOQueue", "PaddingFIFOQueue", "RandomShuffleQueue"]

QUEUE_DTYPES = tuple(d for d in dtypes.ALL if d is not dtypes.resource)
QUEUE_TYPES = ("FIFOQueueV2", "PaddingFIFOQueueV2", "RandomShuffleQueueV2")


# -- shape and dtype rules --------------------------------------------------------------------------


def _check_handle(op) -> None:
    if op.inputs[0].dtype is not dtypes.resource:
        raise TypeError(f"Input 0 of {op.type} must be a queue handle (resource), got {op.inputs[0].dtype.name}")


def _queue_signature(op, count: int) -> list[TensorShape]:
    """The element shapes of the queue behind op's handle input (unknown if it is not a queue op)."""
    queue = op.inputs[0].op
    if queue.type not in QUEUE_TYPES:
        return [unknown_shape()] * count
    types = queue.attrs["component_types"]
    wanted = op.attrs.get("component_types") or op.attrs.get("Tcomponents")
    if tuple(wanted) != tuple(types):
        raise TypeError(f"Queue {queue.name} holds [{', '.join(t.name for t in types)}], but {op.type} uses "
                        f"[{', '.join(t.name for t in wanted)}]")
    return list(queue.attrs["shapes"]) or [unknown_shape()] * count


def _infer_handle(op):
    return [(dtypes.resource, TensorShape([]))]


def _infer_enqueue(op):
    _check_handle(op)
    components = op.inputs[1:]
    for index, (tensor, shape) in enumerate(zip(components, _queue_signature(op, len(components)))):
        element = tensor.shape[1:] if op.type == "QueueEnqueueManyV2" else tensor.shape
        if op.type == "QueueEnqueueManyV2" and tensor.shape.ndims == 0:
            raise ValueError(f"Component {index} ({tensor.name}) of enqueue_many must have a batch dimension")
        if not element.is_compatible_with(shape):
            raise ValueError(f"Component {index} ({tensor.name}) has element shape {element}, which does not fit "
                             f"the queue's shape {shape}")
    return []


def _infer_dequeue(op):
    _check_handle(op)
    types = op.attrs["component_types"]
    shapes = _queue_signature(op, len(types))
    if op.type == "QueueDequeueV2":
        return list(zip(types, shapes))
    n = constant_value(op.inputs[1]) if op.type == "QueueDequeueManyV2" else None
    batch = TensorShape([None if n is None else int(n)])
    return [(dtype, batch.concatenate(shape)) for dtype, shape in zip(types, shapes)]


def _infer_scalar(dtype):
    def infer(op):
        _check_handle(op)
        return [(dtype, TensorShape([]))]
    return infer


# -- examples (each builds a queue, uses it and returns what came out) ------------------------------


def _round_trip(x):
    queue = FIFOQueue(2, [x.dtype])
    with get_default_graph().control_dependencies([queue.enqueue(x)]):
        return queue.dequeue()


def _named_round_trip(x, y):
    queue = FIFOQueue(2, [x.dtype, y.dtype], names=["x", "y"])
    with get_default_graph().control_dependencies([queue.enqueue({"x": x, "y": y})]):
        out = queue.dequeue()
    return [out["x"], out["y"]]


def _batched(x, n: int):
    queue = FIFOQueue(10, [x.dtype])
    with get_default_graph().control_dependencies([queue.enqueue_many([x])]):
        return queue.dequeue_many(n)


def _rest_after_close(x):
    queue = FIFOQueue(10, [x.dtype])
    with get_default_graph().control_dependencies([queue.enqueue_many(x)]):
        close = queue.close()
    with get_default_graph().control_dependencies([close]):
        return [queue.dequeue_up_to(8), queue.is_closed()]


def _size_after(x):
    queue = FIFOQueue(10, [x.dtype])
    with get_default_graph().control_dependencies([queue.enqueue_many([x])]):
        return queue.size()


def _padded(x, y):
    queue = PaddingFIFOQueue(2, [x.dtype], shapes=[[None]])
    with get_default_graph().control_dependencies([queue.enqueue(x)]):
        second = queue.enqueue(y)
    with get_default_graph().control_dependencies([second]):
        return queue.dequeue_many(2)


def _pad_reference(x, y):
    out = np.full((2, 3), b"", dtype=object) if x.dtype == object else np.zeros((2, 3), x.dtype)
    out[0, :2], out[1, :3] = x, y
    return out


def _shuffled_one(x):
    queue = RandomShuffleQueue(2, 0, [x.dtype], seed=3)
    with get_default_graph().control_dependencies([queue.enqueue(x)]):
        return queue.dequeue()


_ROUND_TRIP = Example(_round_trip, lambda x: x, inputs=((2, 3),), differentiable=False)
_MANY = Example(lambda x: _batched(x, 3), lambda x: x[:3], inputs=((4, 2),), differentiable=False)
_UP_TO = Example(_rest_after_close, lambda x: [x, np.array(True)], inputs=((3, 2),), differentiable=False)
_PADDED = Example(_padded, _pad_reference, inputs=((2,), (3,)), differentiable=False)

_QUEUE_ATTRS = {"component_types": "list(type)", "shapes": "list(shape)", "capacity": "int", "container": "string",
                "shared_name": "string"}
register_op("FIFOQueueV2", _infer_handle, dtypes=QUEUE_DTYPES, stateful=True, examples=[
    _ROUND_TRIP, Example(_named_round_trip, lambda x, y: [x, y], inputs=((1,), (2, 2)), differentiable=False)],
            attrs=_QUEUE_ATTRS)
register_op("PaddingFIFOQueueV2", _infer_handle, dtypes=QUEUE_DTYPES, stateful=True, examples=[_PADDED],
            attrs=_QUEUE_ATTRS)
register_op("RandomShuffleQueueV2", _infer_handle, dtypes=QUEUE_DTYPES, stateful=True, examples=[
    Example(_shuffled_one, lambda x: x, inputs=((3,),), differentiable=False)],
            attrs={**_QUEUE_ATTRS, "min_after_dequeue": "int", "seed": "int", "seed2": "int"})
register_op("QueueEnqueueV2", _infer_enqueue, dtypes=QUEUE_DTYPES, stateful=True, examples=[_ROUND_TRIP, _PADDED],
            attrs={"Tcomponents": "list(type)"})
register_op("QueueEnqueueManyV2", _infer_enqueue, dtypes=QUEUE_DTYPES, stateful=True, examples=[_MANY, _UP_TO],
            attrs={"Tcomponents": "list(type)"})
register_op("QueueDequeueV2", _infer_dequeue, dtypes=QUEUE_DTYPES, stateful=True, examples=[_ROUND_TRIP],
            attrs={"component_types": "list(type)"})
register_op("QueueDequeueManyV2", _infer_dequeue, dtypes=QUEUE_DTYPES, stateful=True, examples=[_MANY, _PADDED],
            attrs={"component_types": "list(type)"})
register_op("QueueDequeueUpToV2", _infer_dequeue, dtypes=QUEUE_DTYPES, stateful=True, examples=[_UP_TO],
            attrs={"component_types": "list(type)"})
register_op("QueueCloseV2", lambda op: _check_handle(op) or [], dtypes=QUEUE_DTYPES, stateful=True,
            examples=[_UP_TO], attrs={"cancel_pending_enqueues": "bool"})
register_op("QueueSizeV2", _infer_scalar(dtypes.int32), dtypes=QUEUE_DTYPES, stateful=True, examples=[
    Example(_size_after, lambda x: np.array(len(x), np.int32), inputs=((5, 2),), differentiable=False)])
register_op("QueueIsClosedV2", _infer_scalar(dtypes.bool_), dtypes=QUEUE_DTYPES, stateful=True, examples=[_UP_TO])
not_differentiable(*QUEUE_TYPES, "QueueEnqueueV2", "QueueEnqueueManyV2", "QueueDequeueV2", "QueueDequeueManyV2",
                   "QueueDequeueUpToV2", "QueueCloseV2", "QueueSizeV2", "QueueIsClosedV2")


# -- Python API ---------------------------------------------------------------------------------------


class QueueBase:
    """A queue of elements, each a tuple of tensors (its components), held by the session that runs it.

    Built from a queue handle; enqueue/dequeue take and give a tensor, a list of tensors or, for a
    queue with `names`, a dict.
    """

    def __init__(self, dtypes, shapes, names, queue_ref: Tensor) -> None:
        self._dtypes = _as_type_list(dtypes)
        self._shapes = [unknown_shape()] * len(self._dtypes) if shapes is None else [as_shape(s) for s in shapes]
        if len(self._shapes) != len(self._dtypes):
            raise ValueError("Queue shapes must have the same length as dtypes")
        self._names = _as_name_list(names, self._dtypes)
        self._queue_ref = queue_ref
        self._name = queue_ref.op.name.split("/")[-1]

    # -- what it is -------------------------------------------------------------------------------

    @property
    def queue_ref(self) -> Tensor:
        """The handle tensor that every op of this queue takes as input."""
        return self._queue_ref

    @property
    def name(self) -> str:
        return self._queue_ref.op.name

    @property
    def dtypes(self) -> list:
        return list(self._dtypes)

    @property
    def shapes(self) -> list[TensorShape]:
        return list(self._shapes)

    @property
    def names(self) -> list[str] | None:
        return None if self._names is None else list(self._names)

    # -- ops --------------------------------------------------------------------------------------

    def enqueue(self, vals, name: str | None = None) -> Operation:
        """An op adding one element; it waits while the queue is full."""
        return self._enqueue("QueueEnqueueV2", vals, name or f"{self._name}_enqueue")

    def enqueue_many(self, vals, name: str | None = None) -> Operation:
        """An op adding the elements of `vals` split along dimension 0; it waits for room."""
        return self._enqueue("QueueEnqueueManyV2", vals, name or f"{self._name}_EnqueueMany")

    def dequeue(self, name: str | None = None):
        """One element (a tensor, a list, or a dict for a queue with names); the op waits for it."""
        return self._dequeue("QueueDequeueV2", (), name or f"{self._name}_Dequeue")

    def dequeue_many(self, n, name: str | None = None):
        """`n` elements, batched along a new dimension 0; waits for them, OutOfRangeError once closed with fewer."""
        return self._dequeue("QueueDequeueManyV2", (n,), name or f"{self._name}_DequeueMany")

    def dequeue_up_to(self, n, name: str | None = None):
        """Like dequeue_many, but a closed queue gives what it has left (OutOfRangeError when empty)."""
        return self._dequeue("QueueDequeueUpToV2", (n,), name or f"{self._name}_DequeueUpTo")

    def close(self, cancel_pending_enqueues: bool = False, name: str | None = None) -> Operation:
        """An op closing the queue: later enqueues fail; with `cancel_pending_enqueues`, waiting ones too."""
        return get_default_graph().create_op("QueueCloseV2", (self._queue_ref,),
                                             {"cancel_pending_enqueues": bool(cancel_pending_enqueues)},
                                             name or f"{self._name}_Close")

    def is_closed(self, name: str | None = None) -> Tensor:
        """A bool scalar: whether the queue is closed."""
        return get_default_graph().create_op("QueueIsClosedV2", (self._queue_ref,), None,
                                             name or f"{self._name}_IsClosed").outputs[0]

    def size(self, name: str | None = None) -> Tensor:
        """An int32 scalar: how many elements the queue holds."""
        return get_default_graph().create_op("QueueSizeV2", (self._queue_ref,), None,
                                             name or f"{self._name}_Size").outputs[0]

    # -- helpers ----------------------------------------------------------------------------------

    def _enqueue(self, op_type: str, vals, name: str) -> Operation:
        graph = get_default_graph()
        with graph.name_scope(name) as scope:
            components = self._components(vals)
            attrs = {"Tcomponents": tuple(t.dtype for t in components)}
            return graph.create_op(op_type, (self._queue_ref, *components), attrs, scope)

    def _components(self, vals) -> list[Tensor]:
        if isinstance(vals, dict):
            if self._names is None:
                raise ValueError("Queue must have names to enqueue a dictionary")
            if sorted(vals) != sorted(self._names):
                raise ValueError(f"Keys in dictionary to put into queue ({sorted(vals)}) must match the names "
                                 f"of the queue ({sorted(self._names)})")
            vals = [vals[k] for k in self._names]
        elif self._names is not None:
            raise ValueError("You must enqueue a dictionary in a Queue with names")
        elif not isinstance(vals, (list, tuple)):
            vals = [vals]
        if len(vals) != len(self._dtypes):
            raise ValueError(f"The queue holds {len(self._dtypes)} components, but {len(vals)} were given")
        return [convert_to_tensor(v, dtype=d, name=f"component_{i}") for i, (v, d) in enumerate(zip(vals, self._dtypes))]

    def _dequeue(self, op_type: str, count, name: str):
        inputs = (self._queue_ref,) + tuple(convert_to_tensor(n, dtype=dtypes.int32) for n in count)
        op = get_default_graph().create_op(op_type, inputs, {"component_types": tuple(self._dtypes)}, name)
        outputs = list(op.outputs)
        if self._names is not None:
            return dict(zip(self._names, outputs))
        return outputs[0] if len(outputs) == 1 else outputs


def _as_type_list(types) -> list:
    return [dtypes.as_dtype(t) for t in (types if isinstance(types, (list, tuple)) else [types])]


def _as_shape_list(shapes, types, unknown_dim_allowed: bool = False) -> list[TensorShape] | None:
    """TF's rules: None, one shape (a list of ints), or one shape per component; ranks must be known."""
    if shapes is None:
        return None
    if isinstance(shapes, TensorShape):
        shapes = [shapes]
    if not isinstance(shapes, (list, tuple)):
        raise TypeError("shapes must be a TensorShape or a list or tuple of TensorShapes.")
    if all(s is None or isinstance(s, int) for s in shapes):
        shapes = [shapes]
    shapes = [as_shape(s) for s in shapes]
    if any(s.ndims is None for s in shapes):
        raise ValueError(f"All shapes must have a defined rank: {shapes}")
    if not unknown_dim_allowed and not all(s.is_fully_defined() for s in shapes):
        raise ValueError(f"All shapes must be fully defined: {shapes}")
    if len(shapes) != len(types):
        raise ValueError(f"Shapes must be provided for all components, but received {len(types)} dtypes and "
                         f"{len(shapes)} shapes.")
    return shapes


def _as_name_list(names, types) -> list[str] | None:
    if names is None:
        return None
    names = list(names) if isinstance(names, (list, tuple)) else [names]
    if len(names) != len(types):
        raise ValueError("List of names must have the same length as the list of dtypes")
    return names


def _queue_op(op_type: str, types, shapes, capacity: int, shared_name, name: str, **attrs) -> Tensor:
    attrs.update(component_types=tuple(types), shapes=tuple(shapes or ()), capacity=int(capacity),
                 container="", shared_name=shared_name or "")
    return get_default_graph().create_op(op_type, (), attrs, name).outputs[0]


class FIFOQueue(QueueBase):
    """A queue that gives elements in the order they were enqueued.

    A queue without a shared_name is named after its op (TF names it '_N_<op name>').
    """

    def __init__(self, capacity: int, dtypes, shapes=None, names=None, shared_name: str | None = None,
                 name: str = "fifo_queue") -> None:
        types = _as_type_list(dtypes)
        shapes = _as_shape_list(shapes, types)
        ref = _queue_op("FIFOQueueV2", types, shapes, capacity, shared_name, name)
        super().__init__(types, shapes, names, ref)


class PaddingFIFOQueue(QueueBase):
    """A FIFOQueue whose dequeue_many pads each component with zeros to the batch's largest element.

    `shapes` is required; a dimension may be None (any size).
    """

    def __init__(self, capacity: int, dtypes, shapes, names=None, shared_name: str | None = None,
                 name: str = "padding_fifo_queue") -> None:
        types = _as_type_list(dtypes)
        shapes = _as_shape_list(shapes, types, unknown_dim_allowed=True)
        if shapes is None:
            raise ValueError(f"Shapes must be provided for all components, but received {len(types)} dtypes "
                             "and 0 shapes.")
        ref = _queue_op("PaddingFIFOQueueV2", types, shapes, capacity, shared_name, name)
        super().__init__(types, shapes, names, ref)


class RandomShuffleQueue(QueueBase):
    """A queue that gives elements in random order, keeping `min_after_dequeue` of them until it is closed."""

    def __init__(self, capacity: int, min_after_dequeue: int, dtypes, shapes=None, names=None, seed: int | None = None,
                 shared_name: str | None = None, name: str = "random_shuffle_queue") -> None:
        types = _as_type_list(dtypes)
        shapes = _as_shape_list(shapes, types)
        seed1, seed2 = _queue_seeds(seed, shared_name)
        ref = _queue_op("RandomShuffleQueueV2", types, shapes, capacity, shared_name, name,
                        min_after_dequeue=int(min_after_dequeue), seed=seed1, seed2=seed2)
        super().__init__(types, shapes, names, ref)


def _queue_seeds(seed: int | None, shared_name: str | None) -> tuple[int, int]:
    """TF's seeds for a shuffle queue: a shared queue without its own seed derives one from its name."""
    seed1, seed2 = get_seed(seed)
    if seed1 is None and seed2 is None:
        return 0, 0
    if seed is None and shared_name:
        digest = hashlib.md5((str(seed1) + shared_name).encode()).hexdigest()
        seed2 = int(digest[:8], 16) & 0x7FFFFFFF
    return seed1, seed2

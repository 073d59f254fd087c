"""Input pipelines built from queues and queue runners (tf.train's input functions, paper section 4.5).

`string_input_producer` fills a queue with file names, once per epoch; a reader takes names
from it and reads records; `batch` and `shuffle_batch` collect records into batches through a
second queue. Each queue is filled by threads that `tf.train.start_queue_runners` starts.
"""

from __future__ import annotations

from tfnb.framework import dtypes
from tfnb.framework.graph import GraphKeys, get_default_graph, name_scope
from tfnb.framework.op_registry import Example, not_differentiable, register_op
from tfnb.framework.tensor import Tensor
from tfnb.framework.tensor_shape import TensorShape, as_shape
from tfnb.input.queue_runner import QueueRunner, add_queue_runner
from tfnb.ops import array_ops
from tfnb.ops.array_ops import identity
from tfnb.ops.constant_op import constant, convert_to_tensor
from tfnb.ops.data_flow_ops import (
    QUEUE_DTYPES,
    FIFOQueue,
    PaddingFIFOQueue,
    RandomShuffleQueue,
)
from tfnb.ops.random_ops import get_seed
from tfnb.ops.variables import Variable

__all__ = ["batch", "input_producer", "limit_epochs", "shuffle_batch", "string_input_producer",
           "range_input_producer", "slice_input_producer"]


# -- ops: counting epochs and shuffling -------------------------------------------------------------


def _infer_count_up_to(op):
    handle = op.inputs[0]
    if handle.dtype is not dtypes.resource:
        raise TypeError(f"Input 0 of ResourceCountUpTo must be a variable handle, got {handle.dtype.name}")
    if op.attrs["T"] not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"count_up_to counts int32 or int64 variables, not {op.attrs['T'].name}")
    return [(op.attrs["T"], TensorShape([]))]


def _counted(x):
    counter = Variable(constant(0, dtypes.int64), trainable=False, name="counter")
    with get_default_graph().control_dependencies([counter.initializer]):
        return _count_up_to(counter, 5) + x


register_op("ResourceCountUpTo", _infer_count_up_to, dtypes=(dtypes.int64,), stateful=True, examples=[
    Example(_counted, lambda x: x, inputs=((3,),), differentiable=False)], attrs={"T": "type", "limit": "int"})


def _count_up_to(variable, limit: int, name: str | None = None) -> Tensor:
    """The variable's value before adding one to it; OutOfRangeError once it has reached `limit`."""
    return get_default_graph().create_op("ResourceCountUpTo", (variable.handle,),
                                         {"limit": int(limit), "T": variable.dtype}, name).outputs[0]


register_op("RandomShuffle", lambda op: [(op.inputs[0].dtype, op.inputs[0].shape)], dtypes=QUEUE_DTYPES,
            stateful=True, examples=[Example(lambda x: random_shuffle(x, seed=1), lambda x: x, inputs=((1, 4),),
                                             differentiable=False)], attrs={"seed": "int", "seed2": "int"})
not_differentiable("ResourceCountUpTo", "RandomShuffle")


def random_shuffle(value, seed: int | None = None, name: str | None = None) -> Tensor:
    """`value` with its rows (dimension 0) in a new random order each run."""
    seed1, seed2 = get_seed(seed)
    attrs = {"seed": seed1 or 0, "seed2": seed2 or 0}
    return get_default_graph().create_op("RandomShuffle", (convert_to_tensor(value),), attrs, name).outputs[0]


# -- producers ----------------------------------------------------------------------------------------


def limit_epochs(tensor, num_epochs: int | None = None, name: str | None = None) -> Tensor:
    """`tensor`, which raises OutOfRangeError once evaluated `num_epochs` times (counted by a local variable)."""
    if num_epochs is None:
        return tensor
    if num_epochs <= 0:
        raise ValueError(f"num_epochs must be > 0 not {num_epochs}.")
    with name_scope(name, "limit_epochs", [tensor]) as scope:
        epochs = Variable(constant(0, dtypes.int64), trainable=False, collections=[GraphKeys.LOCAL_VARIABLES],
                          name="epochs")
        with get_default_graph().control_dependencies([_count_up_to(epochs, num_epochs)]):
            return identity(tensor, name=scope)


def input_producer(input_tensor, element_shape=None, num_epochs: int | None = None, shuffle: bool = True,
                   seed: int | None = None, capacity: int = 32, shared_name: str | None = None,
                   summary_name: str | None = None, name: str | None = None, cancel_op=None) -> FIFOQueue:
    """A queue filled, by a QueueRunner, with the rows of `input_tensor`: all of them once per epoch.

    With `num_epochs`, run `tf.local_variables_initializer()` first (it counts the epochs).
    tfnb adds no fraction-full summary (`summary_name` is ignored).
    """
    with name_scope(name, "input_producer", [input_tensor]) as scope:
        input_tensor = convert_to_tensor(input_tensor, name="input_tensor")
        element_shape = input_tensor.shape[1:].merge_with(as_shape(element_shape))
        if not element_shape.is_fully_defined():
            raise ValueError("Either `input_tensor` must have a fully defined shape or `element_shape` must be "
                             "specified")
        if shuffle:
            input_tensor = random_shuffle(input_tensor, seed=seed)
        input_tensor = limit_epochs(input_tensor, num_epochs)
        queue = FIFOQueue(capacity, [input_tensor.dtype], shapes=[element_shape], shared_name=shared_name,
                          name=scope)
        add_queue_runner(QueueRunner(queue, [queue.enqueue_many([input_tensor])], cancel_op=cancel_op))
        return queue


def string_input_producer(string_tensor, num_epochs: int | None = None, shuffle: bool = True,
                          seed: int | None = None, capacity: int = 32, shared_name: str | None = None,
                          name: str | None = None, cancel_op=None) -> FIFOQueue:
    """A queue of strings (file names, usually) for a reader: each string once per epoch, shuffled by default."""
    if not isinstance(string_tensor, Tensor) and not len(string_tensor):
        raise ValueError("string_input_producer requires a non-null input tensor")
    with name_scope(name, "input_producer", [string_tensor]) as scope:
        string_tensor = convert_to_tensor(string_tensor, dtype=dtypes.string)
        return input_producer(string_tensor, [], num_epochs, shuffle, seed, capacity, shared_name, name=scope,
                              cancel_op=cancel_op)


def range_input_producer(limit, num_epochs: int | None = None, shuffle: bool = True, seed: int | None = None,
                         capacity: int = 32, shared_name: str | None = None, name: str | None = None) -> FIFOQueue:
    """A queue of the integers 0 .. limit - 1 (int32): each once per epoch, shuffled by default."""
    with name_scope(name, "input_producer", [limit]) as scope:
        return input_producer(array_ops.range(limit), [], num_epochs, shuffle, seed, capacity, shared_name, name=scope)


def slice_input_producer(tensor_list, num_epochs: int | None = None, shuffle: bool = True, seed: int | None = None,
                         capacity: int = 32, shared_name: str | None = None, name: str | None = None) -> list:
    """One row of each tensor in tensor_list (the same row in all) per evaluation: every row once per epoch,
    in random order by default, as the rows' indices come out of a queue."""
    with name_scope(name, "input_producer", list(tensor_list)) as scope:
        tensors = [convert_to_tensor(t) for t in tensor_list]
        if not tensors:
            raise ValueError("Expected at least one tensor in slice_input_producer().")
        queue = range_input_producer(array_ops.shape(tensors[0])[0], num_epochs, shuffle, seed, capacity, shared_name,
                                     name=scope)
        index = queue.dequeue()
        return [array_ops.gather(t, index) for t in tensors]


# -- batching -------------------------------------------------------------------------------------------


def batch(tensors, batch_size: int, num_threads: int = 1, capacity: int = 32, enqueue_many: bool = False,
          shapes=None, dynamic_pad: bool = False, allow_smaller_final_batch: bool = False,
          shared_name: str | None = None, name: str | None = None):
    """Batches of `tensors` (a list or a dict), collected in a FIFOQueue by `num_threads` threads.

    With `dynamic_pad`, shapes may have None dims and each batch is padded to its largest element.
    """
    def make_queue(types, queue_shapes):
        kind = PaddingFIFOQueue if dynamic_pad else FIFOQueue
        return kind(capacity, types, queue_shapes, shared_name=shared_name)
    return _batch(tensors, batch_size, num_threads, enqueue_many, shapes, dynamic_pad, allow_smaller_final_batch,
                  name or "batch", make_queue)


def shuffle_batch(tensors, batch_size: int, capacity: int, min_after_dequeue: int, num_threads: int = 1,
                  seed: int | None = None, enqueue_many: bool = False, shapes=None,
                  allow_smaller_final_batch: bool = False, shared_name: str | None = None, name: str | None = None):
    """Batches of `tensors` in random order, drawn from a RandomShuffleQueue that keeps `min_after_dequeue`."""
    def make_queue(types, queue_shapes):
        return RandomShuffleQueue(capacity, min_after_dequeue, types, queue_shapes, seed=seed,
                                  shared_name=shared_name)
    return _batch(tensors, batch_size, num_threads, enqueue_many, shapes, False, allow_smaller_final_batch,
                  name or "shuffle_batch", make_queue)


def _batch(tensors, batch_size, num_threads, enqueue_many, shapes, dynamic_pad, allow_smaller, name, make_queue):
    keys = sorted(tensors, key=str) if isinstance(tensors, dict) else None
    listed = [tensors[k] for k in keys] if keys is not None else (
        list(tensors) if isinstance(tensors, (list, tuple)) else [tensors])
    if not listed:
        raise ValueError("Expected at least one tensor in batch().")
    with name_scope(name, name, listed) as scope:
        listed = [convert_to_tensor(t) for t in listed]
        queue = make_queue([t.dtype for t in listed], _element_shapes(listed, shapes, enqueue_many, dynamic_pad))
        enqueue = queue.enqueue_many if enqueue_many else queue.enqueue
        add_queue_runner(QueueRunner(queue, [enqueue(listed)] * num_threads))
        dequeue = queue.dequeue_up_to if allow_smaller else queue.dequeue_many
        batched = dequeue(batch_size, name=scope)
    if keys is not None:
        return dict(zip(keys, batched if len(keys) > 1 else [batched]))
    return batched


def _element_shapes(tensors: list[Tensor], shapes, enqueue_many: bool, dynamic_pad: bool) -> list[TensorShape]:
    if shapes is None:
        shapes = [t.shape[1:] if enqueue_many else t.shape for t in tensors]
    shapes = [as_shape(s) for s in shapes]
    if len(shapes) != len(tensors):
        raise ValueError(f"shapes must have one shape per tensor: {len(shapes)} shapes for {len(tensors)} tensors")
    known = (s.ndims is not None for s in shapes) if dynamic_pad else (s.is_fully_defined() for s in shapes)
    if not all(known):
        raise ValueError(f"All shapes must be fully defined: {shapes}")
    return shapes
